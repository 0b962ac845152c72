package cluster

import (
	"bufio"
	"io"
	"strings"
)

// notControllers are /healthz checks every manager has, whatever it runs.
var notControllers = map[string]bool{"ping": true, "log": true, "leaderElection": true}

// HealthzControllers reads a controller manager's /healthz?verbose body:
// a manager adds a check per controller once it starts it, under whichever
// lease, so the checks that are not its own plumbing are its controllers.
func HealthzControllers(body io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "[+]") && !strings.HasPrefix(line, "[-]") {
			continue
		}
		name, _, _ := strings.Cut(line[3:], " ")
		if notControllers[name] || strings.HasPrefix(name, "poststarthook/") || strings.HasPrefix(name, "leaderElection") {
			continue
		}
		out = append(out, name)
	}
	return out, sc.Err()
}
