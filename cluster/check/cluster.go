package check

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// feature is a Kubernetes feature the render's objects use, judged from the API server's version:
// from Beta the feature gate is on by default, so the field is kept; before it, the API server
// drops the field (or refuses the value) unless the cluster's administrator turned the gate on.
type feature struct {
	check, what string
	beta, ga    string
	// uses says what of the render needs it.
	uses string
}

// features are what every broker Job uses. Versions from the features' KEPs and Kubernetes' docs:
//   - Indexed Jobs (completionMode: Indexed): beta (on by default) in 1.22, GA in 1.24 (KEP-2214,
//     https://github.com/kubernetes/enhancements/issues/2214).
//   - Pod failure policy (spec.podFailurePolicy, and the DisruptionTarget condition its first rule
//     reads): beta in 1.26, GA in 1.31 (KEP-3329; kubernetes/website 163e53d "Update of the docs
//     for Beta", https://kubernetes.io/blog/2024/08/19/kubernetes-1-31-pod-failure-policy-for-jobs-goes-ga/).
//   - Pod replacement policy (podReplacementPolicy, Failed with a pod failure policy: a lost
//     broker's pod is replaced once it has failed, docs/generated-objects.md): beta in 1.29, GA in
//     1.34 (KEP-3939, https://www.kubernetes.dev/resources/keps/3939/,
//     https://kubernetes.io/blog/2025/09/05/kubernetes-v1-34-pod-replacement-policy-for-jobs-goes-ga).
var jobFeatures = []feature{
	{"indexed-job", "Indexed Jobs", "1.22", "1.24", "the broker Job (completionMode: Indexed: each broker's rank and hostname)"},
	{"pod-failure-policy", "the Job pod failure policy", "1.26", "1.31", "the broker Job of a MiniCluster that completes (a failed command fails the Job once)"},
	{"pod-replacement-policy", "the Job pod replacement policy", "1.29", "1.34", "the broker Job (a lost broker's pod is replaced once it has failed)"},
}

// imageVolumeServer is the API server version from which it keeps image volumes by default; the
// kubelet must be as new, and 1.33 and 1.34 have the feature behind its gate (docs/generated-objects.md,
// "The view from an image volume"; GA in 1.36).
const (
	imageVolumeDefault = "1.35"
	imageVolumeGated   = "1.33"
)

func features(c *Cluster) []Result {
	var out []Result
	if c.VersionErr != nil || c.Version == nil {
		for _, f := range jobFeatures {
			out = append(out, Result{Check: f.check, Scope: "cluster", Status: Unknown,
				Message: cannotTell("read the server's version (/version)", c.VersionErr),
				Fix:     "the version decides whether " + f.what + " is on; run check where /version answers"})
		}
		return out
	}
	v, err := utilversion.ParseGeneric(c.Version.GitVersion)
	if err == nil && v.Major() == 0 {
		// A Kubernetes built from source without its version stamped says v0.0.0-master.
		err = fmt.Errorf("a build without a release version")
	}
	if err != nil {
		for _, f := range jobFeatures {
			out = append(out, Result{Check: f.check, Scope: "cluster", Status: Unknown,
				Message: fmt.Sprintf("cannot tell: the server's version %q does not parse: %v", c.Version.GitVersion, err)})
		}
		return out
	}
	for _, f := range jobFeatures {
		r := Result{Check: f.check, Scope: "cluster"}
		switch {
		case v.AtLeast(utilversion.MustParseGeneric(f.ga)):
			r.Status, r.Message = Passed, fmt.Sprintf("Kubernetes %s: %s is GA since %s", c.Version.GitVersion, f.what, f.ga)
		case v.AtLeast(utilversion.MustParseGeneric(f.beta)):
			r.Status, r.Message = Passed, fmt.Sprintf("Kubernetes %s: %s is beta, on by default since %s (GA in %s)", c.Version.GitVersion, f.what, f.beta, f.ga)
		default:
			r.Status = Failed
			r.Message = fmt.Sprintf("Kubernetes %s has %s, used by %s, only behind a feature gate that is off by default (on from %s)", c.Version.GitVersion, f.what, f.uses, f.beta)
			r.Fix = fmt.Sprintf("upgrade the cluster to Kubernetes %s or later", f.ga)
		}
		out = append(out, r)
	}
	return out
}

// clusterDNS: the brokers find each other by DNS names of the headless Service. check creates no
// pod to resolve a name; it looks for kube-system's DNS Service (label k8s-app=kube-dns, which
// kube-dns and CoreDNS deployments keep) and whether its EndpointSlices hold a ready endpoint.
func clusterDNS(c *Cluster) Result {
	r := Result{Check: "cluster-dns", Scope: "cluster"}
	if c.DNSErr != nil {
		r.Status, r.Message = Unknown, cannotTell("read the DNS Service and EndpointSlices in kube-system", c.DNSErr)
		r.Fix = rightFix("list", "services,endpointslices", " in namespace kube-system")
		return r
	}
	if len(c.DNSServices) == 0 {
		r.Status = Unknown
		r.Message = "cannot tell: no Service labelled k8s-app=kube-dns in kube-system, where kube-dns and CoreDNS run"
		r.Fix = "make sure the cluster's DNS answers for <service>.<namespace>.svc names: the brokers find each other by them"
		return r
	}
	var names []string
	ready := 0
	for _, s := range c.DNSServices {
		names = append(names, s.Name)
	}
	for _, es := range c.DNSSlices {
		for _, e := range es.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready += len(e.Addresses)
			}
		}
	}
	if ready == 0 {
		r.Status = Failed
		r.Message = fmt.Sprintf("Service kube-system/%s (the cluster's DNS) has no ready endpoint in its EndpointSlices", strings.Join(names, ","))
		r.Fix = "see why the DNS pods are not ready: kubectl -n kube-system get pods -l k8s-app=kube-dns"
		return r
	}
	r.Status = Passed
	r.Message = fmt.Sprintf("Service kube-system/%s (the cluster's DNS) has %d ready endpoint(s)", strings.Join(names, ","), ready)
	return r
}

// maxNodesNamed is how many nodes a message names before it counts the rest.
const maxNodesNamed = 5

// nodes: how many nodes take pods (Ready, schedulable), and the allocatable CPU and memory of each.
func nodes(c *Cluster) Result {
	r := Result{Check: "nodes", Scope: "cluster"}
	if c.NodesErr != nil {
		r.Status, r.Message, r.Fix = Unknown, cannotTell("list nodes", c.NodesErr), rightFix("list", "nodes", "")
		return r
	}
	var usable []string
	var notUsable []string
	for _, n := range c.Nodes {
		if why := unusable(&n); why != "" {
			notUsable = append(notUsable, n.Name+" ("+why+")")
			continue
		}
		usable = append(usable, fmt.Sprintf("%s (%s CPU, %s memory)", n.Name, quantity(n.Status.Allocatable, corev1.ResourceCPU), quantity(n.Status.Allocatable, corev1.ResourceMemory)))
	}
	if len(usable) == 0 {
		r.Status = Failed
		r.Message = fmt.Sprintf("no node takes pods: %d node(s)", len(c.Nodes))
		if len(notUsable) > 0 {
			r.Message += ": " + strings.Join(firstFew(notUsable), ", ")
		}
		r.Fix = "add a node, or make one Ready and schedulable (kubectl uncordon NODE)"
		return r
	}
	r.Status = Passed
	r.Message = fmt.Sprintf("%d node(s) Ready and schedulable, allocatable: %s", len(usable), strings.Join(firstFew(usable), ", "))
	if len(notUsable) > 0 {
		r.Message += fmt.Sprintf("; %d not: %s", len(notUsable), strings.Join(firstFew(notUsable), ", "))
	}
	return r
}

func firstFew(items []string) []string {
	if len(items) <= maxNodesNamed {
		return items
	}
	return append(slices.Clone(items[:maxNodesNamed]), fmt.Sprintf("+%d more", len(items)-maxNodesNamed))
}

// unusable says why a node takes no pods: not Ready, or cordoned; "" when it takes them.
func unusable(n *corev1.Node) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return ""
			}
			return "not Ready"
		}
	}
	return "not Ready"
}

// quantity is a resource of a list as kubectl prints it, "0" when absent.
func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return "0"
	}
	if name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
		return humanBytes(q)
	}
	return q.String()
}

// humanBytes is a byte quantity in Gi or Mi, rounded down, as people read node sizes.
func humanBytes(q resource.Quantity) string {
	b := q.Value()
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1fGi", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%dMi", b>>20)
	}
	return q.String()
}
