// Command pause is the process that holds a pod's namespaces, as
// registry.k8s.io/pause does: it sleeps, reaps the orphans a shared PID
// namespace hands it, and exits on SIGINT or SIGTERM. The kind node image
// is built with no registry, so its pause image carries this.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: warning: not running as PID 1\n")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
