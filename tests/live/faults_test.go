package live

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWorstApplyOrder applies the objects of a MiniCluster one at a time in the worst order: the
// broker Job first, the headless Service last, the keygen Job before its ServiceAccount and RBAC.
// The cluster must converge (the controllers retry), or fail with a reason a user can find.
func TestWorstApplyOrder(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "edited" // testdata/edit.yaml: size 2, a short command
	ns := namespace(t, "worst-order")
	docs := splitDocuments(renderKustomize(t, ns, fnDir(t, "edit")))
	order := []string{"Job/broker", "ConfigMap", "Job/keygen", "RoleBinding", "Role", "ServiceAccount", "Service"}
	rank := func(d document) int {
		key := d.kind
		if d.kind == "Job" {
			key += "/" + d.component
		}
		if i := slices.Index(order, key); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(docs, func(a, b document) int { return rank(a) - rank(b) })
	start := time.Now()
	for _, d := range docs {
		apply(t, []byte(d.text))
		t.Logf("applied %s %s at %.1fs", d.kind, d.component, time.Since(start).Seconds())
		time.Sleep(2 * time.Second) // let the controllers act on the half-applied set
	}
	certificate(t, ns, instance)
	j := brokerJob(t, ns, instance)
	jobComplete(t, ns, j.Metadata.Name, completeLimit)
	checkAllExitedZero(t, ns, j.Metadata.Name, 2)
	t.Logf("converged: Job complete %.1fs after the first apply", time.Since(start).Seconds())
	for _, e := range events(t, ns) {
		if e.Type == "Warning" {
			t.Logf("warning event on the way (what a user would see): %s %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}

type document struct {
	kind, component, text string
}

var (
	kindLine      = regexp.MustCompile(`(?m)^kind: (\S+)`)
	componentLine = regexp.MustCompile(`(?m)^    minicluster-fn.dev/component: (\S+)`)
)

// splitDocuments splits kustomize's output into its documents.
func splitDocuments(manifests []byte) []document {
	var docs []document
	for _, text := range strings.Split(string(manifests), "\n---\n") {
		if strings.TrimSpace(text) == "" {
			continue
		}
		d := document{text: text}
		if m := kindLine.FindStringSubmatch(text); m != nil {
			d.kind = m[1]
		}
		if m := componentLine.FindStringSubmatch(text); m != nil {
			d.component = m[1]
		}
		docs = append(docs, d)
	}
	return docs
}
