// Command coredns is the cluster DNS of the live-test cluster: CoreDNS with only the plugins that
// tests/cluster/up.sh's Corefile uses. Upstream's main links all of its ~60 plugins (the cloud DNS
// providers pull in the AWS, Azure and Google SDKs): 10m01s of CPU to build cold, against 6m22s for
// this one. CoreDNS supports this embedding with dnsserver.SetDirectives.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	// The order is upstream's (core/dnsserver/zdirectives.go), filtered to the plugins linked above.
	if err := dnsserver.SetDirectives([]string{"bind", "ready", "health", "errors", "kubernetes"}); err != nil {
		panic(err)
	}
	coremain.Run()
}
