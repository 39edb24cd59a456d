//go:build tools

// Package containerd pins the containerd release whose commands tests/cluster/build-node.sh
// builds: the daemon, its runc shim, and ctr (the client that loads the test images). The build tag
// keeps this file out of every build; it only records the requirement for go mod tidy.
package containerd

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
