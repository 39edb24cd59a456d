// Package impact says what a change of MiniClusters does to the clusters that run them. It
// compares the manifest sets of two revisions object by object and derives each MiniCluster's
// impact from what a GitOps engine with prune does to those objects: an object whose kind,
// namespace or name is gone is pruned, a Job or Pod whose spec changed under the same name
// cannot be patched (its pod template is immutable) and is replaced, the broker Job's parallelism
// and completions are patched in place, and the certificate, which the keygen Job makes in the
// cluster, is kept while the object the broker pods mount keeps its kind, namespace and name.
// It never consults a list of MiniCluster fields: the renders decide, so the impact follows the
// generators. The causes of a replacement are named as field paths of the user's MiniCluster,
// found by a structural diff of the two documents and confirmed by rendering the old MiniCluster
// with one change at a time (see causes.go).
package impact

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/minicluster-fn/minicluster-fn/internal/tally"
)

// Kind is the impact of a change on one MiniCluster. The kinds are ordered: of what happens to
// a MiniCluster's objects, the highest kind names its impact.
type Kind int

const (
	// Unchanged: no object changes.
	Unchanged Kind = iota
	// MetadataOnly: labels or annotations are patched; nothing restarts.
	MetadataOnly
	// Updated: objects are patched, created or replaced, but not the broker Job: the brokers keep
	// running (a new keygen Job finds the certificate and leaves it).
	Updated
	// ResizedInPlace: the broker Job's parallelism and completions are patched; the same Job
	// goes on, with its running work.
	ResizedInPlace
	// Requeued: the broker Job's parallelism and completions are patched, and Kueue queues it
	// (kueue.x-k8s.io/queue-name): the Job no longer matches its admitted Workload, so Kueue
	// suspends it, ending the running work, and admits it again at the new size (docs/kueue.md).
	Requeued
	// Added: a new MiniCluster starts.
	Added
	// Removed: every object is pruned: the running Job ends and a certificate made for it is
	// deleted.
	Removed
	// Replaced: the broker Job is recreated; the running work ends.
	Replaced
	// NewCertificate: the broker pods mount another certificate: every broker restarts with a new
	// key.
	NewCertificate
)

var kindNames = [...]string{"unchanged", "metadata only", "updated", "resized in place", "requeued", "added", "removed", "replaced", "new certificate"}

func (k Kind) String() string { return kindNames[k] }

// Slug is the name of the kind in flags and JSON: its words joined by "-".
func (k Kind) Slug() string { return strings.ReplaceAll(k.String(), " ", "-") }

// Kinds are all kinds, in order.
func Kinds() []Kind {
	kinds := make([]Kind, len(kindNames))
	for i := range kinds {
		kinds[i] = Kind(i)
	}
	return kinds
}

// ParseKind reads a kind's slug.
func ParseKind(slug string) (Kind, error) {
	for _, k := range Kinds() {
		if k.Slug() == slug {
			return k, nil
		}
	}
	var slugs []string
	for _, k := range Kinds() {
		slugs = append(slugs, k.Slug())
	}
	return 0, fmt.Errorf("unknown impact %q: one of %s", slug, strings.Join(slugs, ", "))
}

func (k Kind) MarshalJSON() ([]byte, error) { return json.Marshal(k.Slug()) }

// Result is the impact of a change on one MiniCluster.
type Result struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Impact    Kind   `json:"impact"`
	// Causes name what changed that has this impact: field paths of the MiniCluster
	// (spec.containers[0].command) when both documents are at hand, else what changed in the
	// objects, in terms of the MiniCluster (container flux-sample: command).
	Causes []string `json:"causes,omitempty"`
	// Effect says what happens to the running cluster, in one sentence.
	Effect string `json:"effect"`
	// Notes say more: a rename, a move to another file.
	Notes   []string       `json:"notes,omitempty"`
	Objects []ObjectChange `json:"objects,omitempty"`
}

// ID is the MiniCluster's namespace/name, or its name without a namespace.
func (r Result) ID() string { return id(r.Namespace, r.Name) }

func id(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// ObjectChange is what happens to one generated object.
type ObjectChange struct {
	// Object is Kind/name, or Kind/namespace/name.
	Object string `json:"object"`
	Change Change `json:"change"`
	// Fields are the paths of the object that change.
	Fields []string `json:"fields,omitempty"`
}

// Change is what a GitOps engine does with one object.
type Change string

const (
	Created  Change = "created"
	Pruned   Change = "pruned"
	Patched  Change = "patched"
	Relabel  Change = "metadata patched"
	Recreate Change = "replaced"
)

// Summary counts the MiniClusters of each kind, the most disruptive first: "9 MiniClusters: 1
// replaced, 2 added, ...".
func Summary(results []Result) string {
	counts := make([]int, len(kindNames))
	for _, r := range results {
		counts[r.Impact]++
	}
	var tallies []tally.Count
	for _, k := range slices.Backward(Kinds()) {
		tallies = append(tallies, tally.Count{N: counts[k], Verdict: k.String()})
	}
	return tally.Line(len(results), "MiniCluster", "MiniClusters", tallies)
}
