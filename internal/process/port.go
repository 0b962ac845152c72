package process

import (
	"fmt"
	"net"
)

// FreePort asks the kernel for a free loopback TCP port. Another process may
// take it before ours binds; components report that as "address in use" in
// their log, which Start quotes.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// CheckPortFree fails with a one-line error naming the fix if port is taken.
func CheckPortFree(port int, flag string) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d on 127.0.0.1 is in use by another process (choose another with %s, or stop what holds it)", port, flag)
	}
	return l.Close()
}
