// Command ociregistry serves an OCI registry for the live Flux CD tests: render.sh -p pushes the
// rendered directory there with the flux CLI, and source-controller pulls it. Nothing can be
// pulled from outside this machine, so the harness runs its own: go-containerregistry's registry,
// which keeps every blob and manifest in memory (a test pushes a few kilobytes and the registry
// lives as long as the test), over plain HTTP on loopback, with no login.
//
// It prints the address it listens on as one line on stdout (with -addr 127.0.0.1:0 the kernel
// picks the port, so callers read it there), then serves until SIGTERM or SIGINT, and exits 0.
//
// usage: ociregistry [-addr HOST:PORT] [-v]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen on this address (port 0: any free port)")
	verbose := flag.Bool("v", false, "log every request to stderr")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: ociregistry [-addr HOST:PORT] [-v]")
		os.Exit(2)
	}
	if err := serve(*addr, *verbose); err != nil {
		fmt.Fprintf(os.Stderr, "ociregistry: %v\n", err)
		os.Exit(1)
	}
}

func serve(addr string, verbose bool) error {
	// The registry logs every request by default; a test's output needs them only to debug it.
	logs := io.Discard
	if verbose {
		logs = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Listening before printing: the printed address accepts connections by the time it is read.
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().String())

	server := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(logs, "ociregistry: ", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// A request in flight (a push or a pull) finishes; the registry's content goes with the process.
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
