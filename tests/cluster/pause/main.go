// Command pause is the pod sandbox process of the live-test cluster (containerd's sandbox_image):
// nothing can be pulled here, so the harness builds its own. It holds the pod's namespaces, reaps
// the children it inherits when it is PID 1 of a shared PID namespace, and exits on SIGTERM or
// SIGINT so that a stopped sandbox goes away at once.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reapChildren()
	}
}

// reapChildren collects every exited child; one SIGCHLD may stand for several exits.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
