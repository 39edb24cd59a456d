// Command passthroughfn is the floor of the benchmarks: the most trivial KRM function kyaml's
// fn/framework makes. It reads a ResourceList, changes nothing and writes it back, so its cost is
// what any framework function pays to start and to pass its items through.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func main() {
	unchanged := framework.SimpleProcessor{Filter: kio.FilterFunc(func(items []*yaml.RNode) ([]*yaml.RNode, error) {
		return items, nil
	})}
	if err := framework.Execute(unchanged, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
