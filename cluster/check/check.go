// Package check tells, before a first apply, whether a cluster and a namespace can run the
// MiniClusters minicluster-fn renders: the Kubernetes version and the features the render uses,
// the cluster's DNS, the nodes, the namespace's Pod Security level, quotas and limit ranges, the
// rights to create what the render emits, and for each MiniCluster whether its brokers fit on the
// nodes and whether the claims, Secrets and ServiceAccounts it names exist.
//
// Read asks the API server (reads and access reviews only, nothing is created) and returns a
// Cluster: what was read, each with the error that kept it from being read. Evaluate is a pure
// function from a Cluster and the renders to results, so tests feed it fixtures. A check whose
// input could not be read (no right to list nodes, say) is Unknown, never Passed.
package check

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/tally"
)

// Status is a check's outcome.
type Status string

const (
	// Passed: what was read says the render can run.
	Passed Status = "Passed"
	// Failed: what was read says it cannot, or not as rendered.
	Failed Status = "Failed"
	// Unknown: check could not read what it needs (a right is missing, the server did not
	// answer) or what it read does not settle the question.
	Unknown Status = "Unknown"
)

// Result is one check's outcome: one line of output.
type Result struct {
	// Check names the check: kubernetes-version, indexed-job, cluster-dns, pod-security, ...
	Check string `json:"check"`
	// Scope is what it is about: "cluster", "namespace NS" or "MiniCluster NS/NAME".
	Scope string `json:"scope"`
	// File is the MiniCluster's file.
	File    string `json:"file,omitempty"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	// Fix says what to do about a result that did not pass.
	Fix string `json:"fix,omitempty"`
}

// Render is one MiniCluster rendered as render renders it.
type Render struct {
	// Name and Namespace are the MiniCluster's; Namespace is where its objects go (its own, else
	// the kubeconfig's or -n).
	Name, Namespace string
	File            string
	// Objects are the generated objects.
	Objects []generators.Object
	// Default marks the MiniCluster with the defaults that stands for any when no file is given.
	Default bool
}

// Scope is the Result.Scope of r's checks.
func (r *Render) Scope() string {
	if r.Default {
		return "namespace " + r.Namespace
	}
	return "MiniCluster " + r.Namespace + "/" + r.Name
}

// what names r in a message.
func (r *Render) what() string {
	if r.Default {
		return "a MiniCluster with the defaults"
	}
	return "MiniCluster " + r.Name
}

// brokerJob is the broker Job of the render, found by the contract's labels.
func (r *Render) brokerJob() *batchv1.Job {
	for _, o := range r.Objects {
		if job, ok := o.(*batchv1.Job); ok && job.Labels[contract.LabelComponent] == contract.ComponentBroker {
			return job
		}
	}
	return nil
}

// podSpec is a rendered object's pod (a Job's template, a Pod), with the name it is known by.
type podSpec struct {
	// what: "the broker pods", "the keygen pod", "the services pod".
	what string
	// component is the contract's component label of the object that makes them.
	component string
	spec      *corev1.PodSpec
	// annotations are the pod's (AppArmor's annotations are Pod Security's business).
	annotations map[string]string
	// count is how many of these pods run at once.
	count int32
}

// pods are the pods the render's objects make.
func (r *Render) pods() []podSpec {
	var out []podSpec
	for _, o := range r.Objects {
		component := o.GetLabels()[contract.LabelComponent]
		what := "the " + component + " pods"
		switch component {
		case contract.ComponentBroker:
			what = "the broker pods"
		case contract.ComponentKeygen:
			what = "the keygen pod"
		case contract.ComponentServices:
			what = "the services pod"
		}
		switch o := o.(type) {
		case *batchv1.Job:
			count := int32(1)
			if o.Spec.Parallelism != nil {
				count = *o.Spec.Parallelism
			}
			out = append(out, podSpec{what: what, component: component, spec: &o.Spec.Template.Spec, annotations: o.Spec.Template.Annotations, count: count})
		case *corev1.Pod:
			out = append(out, podSpec{what: what, component: component, spec: &o.Spec, annotations: o.Annotations, count: 1})
		}
	}
	return out
}

// Cluster is what Read read: each part with the error that kept it from being read.
type Cluster struct {
	Version    *version.Info
	VersionErr error

	Nodes    []corev1.Node
	NodesErr error

	// DNSServices are kube-system's Services labelled k8s-app=kube-dns (CoreDNS's too), and
	// DNSSlices their EndpointSlices.
	DNSServices []corev1.Service
	DNSSlices   []discoveryv1.EndpointSlice
	DNSErr      error

	// StorageClasses are read only when a claim is Pending.
	StorageClasses    []storagev1.StorageClass
	StorageClassesErr error

	Namespaces map[string]*Namespace

	// AppliedBy is the ServiceAccount --applied-by names, whose rights are reviewed too.
	AppliedBy *Subject
}

// Namespace is what was read of one namespace.
type Namespace struct {
	Object *corev1.Namespace
	Err    error

	Quotas         []corev1.ResourceQuota
	QuotasErr      error
	LimitRanges    []corev1.LimitRange
	LimitRangesErr error

	// Claims are the PersistentVolumeClaims the renders name, by name.
	Claims map[string]Claim
	// Objects says, for each Secret, ConfigMap and ServiceAccount the renders name, whether it
	// exists: nil, or the error of reading it (NotFound, Forbidden, ...).
	Objects map[ObjectRef]error
	// Reviews are the answers to access reviews.
	Reviews map[Review]ReviewResult
}

// Claim is a PersistentVolumeClaim read, or the error.
type Claim struct {
	PVC *corev1.PersistentVolumeClaim
	Err error
}

// ObjectRef names an object of the namespace: Resource is secrets, configmaps or serviceaccounts.
type ObjectRef struct{ Resource, Name string }

// Review is one access question: may Subject (empty: the identity check runs as) do Verb on
// Resource (of Group), Name if set, in the namespace?
type Review struct {
	Subject                     string
	Verb, Group, Resource, Name string
}

// ReviewResult is the server's answer, or the error of asking.
type ReviewResult struct {
	Allowed bool
	Reason  string
	Err     error
}

// Evaluate turns what was read into results: the cluster's first, then each namespace's, then each
// MiniCluster's, in the renders' order.
func Evaluate(c *Cluster, renders []*Render) []Result {
	var out []Result
	out = append(out, features(c)...)
	out = append(out, clusterDNS(c), nodes(c))
	var namespaces []string
	for _, r := range renders {
		if !slices.Contains(namespaces, r.Namespace) {
			namespaces = append(namespaces, r.Namespace)
		}
	}
	for _, ns := range namespaces {
		out = append(out, namespaceExists(ns, c.Namespaces[ns]))
	}
	for _, r := range renders {
		ns := c.Namespaces[r.Namespace]
		out = append(out, podSecurity(r, ns))
		out = append(out, quotas(r, ns)...)
		out = append(out, limitRanges(r, ns)...)
		out = append(out, access(r, ns, nil))
		if c.AppliedBy != nil {
			out = append(out, access(r, ns, c.AppliedBy))
		}
		if r.Default {
			continue
		}
		out = append(out, brokerFit(c, r, ns))
		if iv, ok := imageVolumes(c, r, ns); ok {
			out = append(out, iv)
		}
		out = append(out, claims(c, r, ns)...)
		out = append(out, references(r, ns)...)
	}
	return out
}

// Count counts the results of each status.
func Count(results []Result) map[Status]int {
	n := map[Status]int{}
	for _, r := range results {
		n[r.Status]++
	}
	return n
}

// Summary is the line that ends check's report, in the form of diff's (impact.Summary): how many
// results, then the count of each status, the worst first: "22 checks: 3 failed, 1 unknown, 18
// passed".
func Summary(results []Result) string {
	n := Count(results)
	var tallies []tally.Count
	for _, s := range []Status{Failed, Unknown, Passed} {
		tallies = append(tallies, tally.Count{N: n[s], Verdict: strings.ToLower(string(s))})
	}
	return tally.Line(len(results), "check", "checks", tallies)
}

// cannotTell is an Unknown result's message for an error that kept check from reading: "cannot
// tell: forbidden to list nodes (...)".
func cannotTell(doing string, err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Sprintf("cannot tell: forbidden to %s (%s)", doing, shortError(err))
	case apierrors.IsUnauthorized(err):
		return fmt.Sprintf("cannot tell: not authenticated to %s (%s)", doing, shortError(err))
	}
	return fmt.Sprintf("cannot tell: could not %s: %v", doing, err)
}

// shortError is an API error's message without client-go's prefixes.
func shortError(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// rightFix is the fix for a missing right.
func rightFix(verb, resource, where string) string {
	return fmt.Sprintf("run check with an identity that may %s %s%s (kubectl auth can-i %s %s%s)", verb, resource, where, verb, resource, canINamespace(where))
}

func canINamespace(where string) string {
	if ns, ok := strings.CutPrefix(where, " in namespace "); ok {
		return " -n " + ns
	}
	return ""
}

// joinList is "a, b and c".
func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
