// Command etcd is the etcd server of the version k8s.io/kubernetes v1.37.1 is tested with
// (go.etcd.io/etcd/server/v3 from this module's graph); etcd's own main lives in a module that
// would pull etcdctl and etcdutl in too.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
