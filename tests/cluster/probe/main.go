// Command probe checks, from inside a pod of the live-test cluster, what MiniClusters need from
// it: names resolve through the pod's resolv.conf (cluster DNS with its search path, as a headless
// Service publishes pods) and Service addresses answer (kube-proxy). It retries until a deadline,
// so pods that start together can find each other.
//
// usage: probe [-timeout D] resolve NAME... | connect HOST:PORT...
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "give up on a target after this long")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe [-timeout D] resolve NAME... | connect HOST:PORT...")
		os.Exit(2)
	}
	var check func(context.Context, string) (string, error)
	switch flag.Arg(0) {
	case "resolve":
		check = resolve
	case "connect":
		check = connect
	default:
		fmt.Fprintf(os.Stderr, "probe: unknown check %q (want resolve or connect)\n", flag.Arg(0))
		os.Exit(2)
	}
	failed := false
	for _, target := range flag.Args()[1:] {
		result, err := retry(*timeout, target, check)
		if err != nil {
			fmt.Printf("%s %s: FAILED: %v\n", flag.Arg(0), target, err)
			failed = true
			continue
		}
		fmt.Printf("%s %s: %s\n", flag.Arg(0), target, result)
	}
	if failed {
		os.Exit(1)
	}
}

func retry(timeout time.Duration, target string, check func(context.Context, string) (string, error)) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		result, err := check(ctx, target)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return result, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// resolve looks the name up as getaddrinfo would: the search path and ndots of /etc/resolv.conf
// apply (Go's own resolver reads them).
func resolve(ctx context.Context, name string) (string, error) {
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(addrs), nil
}

func connect(ctx context.Context, address string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return "connected to " + conn.RemoteAddr().String(), nil
}
