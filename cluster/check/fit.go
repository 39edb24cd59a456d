package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/klog/v2"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// brokerFit: whether the nodes' allocatable resources hold the broker pods. A node can hold a
// broker when it takes pods, matches the pods' nodeSelector and required node affinity, and every
// NoSchedule and NoExecute taint is tolerated; how many it holds is its allocatable divided by the
// pod's requests (what the scheduler counts: the containers' requests, or limits where no request
// is given, with the namespace's LimitRange defaults; the largest init container's; the pod
// overhead). What other pods already use is not counted: this is the most the nodes could hold.
// With one broker per node required (broker-spread: Required), each node holds at most one.
func brokerFit(c *Cluster, r *Render, ns *Namespace) Result {
	res := Result{Check: "broker-fit", Scope: r.Scope(), File: r.File}
	job := r.brokerJob()
	if job == nil {
		res.Status, res.Message = Unknown, "cannot tell: the render has no broker Job"
		return res
	}
	if c.NodesErr != nil {
		res.Status, res.Message, res.Fix = Unknown, cannotTell("list nodes", c.NodesErr), rightFix("list", "nodes", "")
		return res
	}
	spec := &job.Spec.Template.Spec
	size := int32(1)
	if job.Spec.Parallelism != nil {
		size = *job.Spec.Parallelism
	}
	var lrs []corev1.LimitRange
	if ns != nil {
		lrs = ns.LimitRanges
	}
	req := podRequests(spec, lrs)
	onePerNode := requiresOnePerNode(spec, job.Spec.Template.Labels)
	var holds []string
	var rejects []string
	total := int64(0)
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if why := nodeRejects(n, spec); why != "" {
			rejects = append(rejects, n.Name+": "+why)
			continue
		}
		k, short := capacity(n, req)
		if k == 0 {
			rejects = append(rejects, fmt.Sprintf("%s: allocatable %s %s, less than one broker's request", n.Name, short, quantity(n.Status.Allocatable, short)))
			continue
		}
		if onePerNode {
			k = 1
		}
		total += k
		holds = append(holds, fmt.Sprintf("%s: %d", n.Name, k))
	}
	asks := "each broker pod requests " + describeRequests(req)
	res.Message = asks
	switch {
	case len(holds) == 0:
		res.Status = Failed
		res.Message = fmt.Sprintf("no node can hold a broker pod (%s): %s", asks, strings.Join(firstFew(rejects), "; "))
		res.Fix = "lower the containers' resources, or change spec.pod.nodeSelector, spec.pod.nodeAffinity or spec.pod.tolerations so that the brokers may use nodes that have room"
	case total < int64(size) && onePerNode:
		res.Status = Failed
		res.Message = fmt.Sprintf("size %d with one broker per node required (%s: Required), but only %d node(s) can hold a broker (%s)", size, v1alpha2.OptionPrefix+"broker-spread", len(holds), asks)
		if len(rejects) > 0 {
			res.Message += "; the others: " + strings.Join(firstFew(rejects), "; ")
		}
		res.Fix = fmt.Sprintf("lower spec.size to %d, add nodes, or set %sbroker-spread: Preferred so that brokers may share a node", total, v1alpha2.OptionPrefix)
	case total < int64(size):
		res.Status = Failed
		res.Message = fmt.Sprintf("size %d, but the nodes' allocatable holds at most %d broker pods (%s; %s)", size, total, asks, strings.Join(firstFew(holds), ", "))
		res.Fix = "lower spec.size or the containers' resources, or add nodes"
	default:
		res.Status = Passed
		room := fmt.Sprintf("room for %d", total)
		if total >= math.MaxInt32 {
			room = "no limit from requests"
		}
		res.Message = fmt.Sprintf("size %d fits: %s; %d node(s) can hold brokers (%s; %s), counting allocatable, not what runs there now",
			size, asks, len(holds), room, strings.Join(firstFew(holds), ", "))
		if onePerNode {
			res.Message += ", one broker per node"
		}
	}
	return res
}

// requiresOnePerNode tells whether the pods may not share a node with another of their own: a
// required pod anti-affinity on the node's hostname whose selector matches the pod's labels.
func requiresOnePerNode(spec *corev1.PodSpec, podLabels map[string]string) bool {
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil {
		return false
	}
	for _, t := range spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != corev1.LabelHostname || t.LabelSelector == nil {
			continue
		}
		if sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err == nil && sel.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// podRequests is what the scheduler counts for a pod: the containers' requests (or limits where no
// request is given, or the LimitRange's default request), the largest init container's where
// larger, and the overhead.
func podRequests(spec *corev1.PodSpec, lrs []corev1.LimitRange) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		addTo(sum, containerRequests(&c, lrs))
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sum, containerRequests(&c, lrs))
		}
	}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			continue
		}
		for name, q := range containerRequests(&c, lrs) {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	addTo(sum, spec.Overhead)
	return sum
}

// containerRequests is a container's requests as admitted: its own, its limits where it gives no
// request (the API server's defaulting), then the namespace's LimitRange default requests (a
// default limit serves as the default request where none is given, as the LimitRange's own
// defaulting does).
func containerRequests(c *corev1.Container, lrs []corev1.LimitRange) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range c.Resources.Requests {
		out[name] = q.DeepCopy()
	}
	for name, q := range c.Resources.Limits {
		if _, ok := out[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	for _, lr := range lrs {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, defaults := range []corev1.ResourceList{item.DefaultRequest, item.Default} {
				for name, q := range defaults {
					if _, ok := out[name]; !ok {
						out[name] = q.DeepCopy()
					}
				}
			}
		}
	}
	return out
}

func addTo(sum, l corev1.ResourceList) {
	for name, q := range l {
		cur := sum[name]
		cur.Add(q)
		sum[name] = cur
	}
}

// describeRequests is "2 CPU, 4.0Gi memory", or "nothing" for a pod that requests nothing.
func describeRequests(req corev1.ResourceList) string {
	var parts []string
	for _, name := range sortedNames(req) {
		if q := req[name]; q.IsZero() {
			continue
		}
		switch name {
		case corev1.ResourceCPU:
			parts = append(parts, quantity(req, name)+" CPU")
		default:
			parts = append(parts, quantity(req, name)+" "+string(name))
		}
	}
	if len(parts) == 0 {
		return "no CPU or memory"
	}
	return strings.Join(parts, ", ")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for name := range l {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// capacity is how many pods requesting req a node's allocatable holds, and the resource that
// limits it; at most the node's allocatable pods.
func capacity(n *corev1.Node, req corev1.ResourceList) (int64, corev1.ResourceName) {
	best, limiting := int64(math.MaxInt32), corev1.ResourcePods
	if pods, ok := n.Status.Allocatable[corev1.ResourcePods]; ok {
		best = pods.Value()
	}
	for _, name := range sortedNames(req) {
		q := req[name]
		if q.IsZero() {
			continue
		}
		alloc, ok := n.Status.Allocatable[name]
		if !ok {
			return 0, name
		}
		if k := alloc.MilliValue() / q.MilliValue(); k < best {
			best, limiting = k, name
		}
	}
	return best, limiting
}

// nodeRejects says why the pod cannot go to the node: it takes no pods, its labels do not match
// the nodeSelector or the required node affinity, or a taint is not tolerated; "" when it can.
func nodeRejects(n *corev1.Node, spec *corev1.PodSpec) string {
	if why := unusable(n); why != "" {
		return why
	}
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(n.Labels)) {
		return "its labels do not match spec.pod.nodeSelector"
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		if !matchesNodeSelector(n, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) {
			return "its labels do not match the required node affinity (spec.pod.nodeAffinity)"
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(klog.Background(), &t, true)
		}) {
			return "taint " + t.ToString() + " not tolerated (spec.pod.tolerations)"
		}
	}
	return ""
}

// matchesNodeSelector: the terms are ORed, the requirements of a term ANDed; a term without any
// matches no node (Kubernetes' rule).
func matchesNodeSelector(n *corev1.Node, terms []corev1.NodeSelectorTerm) bool {
	for _, term := range terms {
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue
		}
		if matchesTerm(n, term) {
			return true
		}
	}
	return false
}

var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

func matchesTerm(n *corev1.Node, term corev1.NodeSelectorTerm) bool {
	sel := labels.NewSelector()
	for _, e := range term.MatchExpressions {
		req, err := labels.NewRequirement(e.Key, nodeSelectorOps[e.Operator], e.Values)
		if err != nil {
			return false
		}
		sel = sel.Add(*req)
	}
	if !sel.Matches(labels.Set(n.Labels)) {
		return false
	}
	for _, f := range term.MatchFields {
		if f.Key != "metadata.name" {
			return false
		}
		in := slices.Contains(f.Values, n.Name)
		if (f.Operator == corev1.NodeSelectorOpIn) != in {
			return false
		}
	}
	return true
}

// imageVolumes: only for a MiniCluster whose broker Job says view-source ImageVolume. The API server
// and the kubelet of every node that may run a broker must be 1.35 or later (1.33 and 1.34: only
// with the ImageVolume gate on, which check cannot see), and its runtime must mount image volumes:
// containerd 2.1 or later, or CRI-O (docs/generated-objects.md, "The view from an image volume").
func imageVolumes(c *Cluster, r *Render, _ *Namespace) (Result, bool) {
	job := r.brokerJob()
	if job == nil || job.Annotations[contract.AnnotationViewSource] != string(v1alpha2.ViewSourceImageVolume) {
		return Result{}, false
	}
	res := Result{Check: "image-volumes", Scope: r.Scope(), File: r.File}
	fix := "run the brokers only on nodes that mount image volumes (spec.pod.nodeSelector), upgrade them, or remove the option " + v1alpha2.OptionPrefix + "view-source: ImageVolume"
	var failed, unknown []string
	if c.VersionErr != nil || c.Version == nil {
		unknown = append(unknown, cannotTell("read the server's version", c.VersionErr))
	} else if ok, why := imageVolumeVersion(c.Version.GitVersion); ok != Passed {
		msg := "the API server " + why
		if ok == Failed {
			failed = append(failed, msg)
		} else {
			unknown = append(unknown, msg)
		}
	}
	if c.NodesErr != nil {
		unknown = append(unknown, cannotTell("list nodes", c.NodesErr))
	}
	spec := &job.Spec.Template.Spec
	nodesOK := 0
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if nodeRejects(n, spec) != "" {
			continue
		}
		kubelet, why := imageVolumeVersion(n.Status.NodeInfo.KubeletVersion)
		runtime, rwhy := imageVolumeRuntime(n.Status.NodeInfo.ContainerRuntimeVersion)
		switch {
		case kubelet == Failed:
			failed = append(failed, "node "+n.Name+": kubelet "+why)
		case runtime == Failed:
			failed = append(failed, "node "+n.Name+": "+rwhy)
		case kubelet == Unknown:
			unknown = append(unknown, "node "+n.Name+": kubelet "+why)
		case runtime == Unknown:
			unknown = append(unknown, "node "+n.Name+": "+rwhy)
		default:
			nodesOK++
		}
	}
	switch {
	case len(failed) > 0:
		res.Status, res.Message, res.Fix = Failed, "the brokers mount the view image as an image volume, which "+strings.Join(firstFew(failed), "; "), fix
	case len(unknown) > 0:
		res.Status, res.Message, res.Fix = Unknown, "cannot tell whether the brokers' image volume mounts: "+strings.Join(firstFew(unknown), "; "), fix
	case c.NodesErr == nil && nodesOK == 0:
		res.Status, res.Message = Unknown, "cannot tell: no node can hold a broker (see broker-fit)"
	default:
		res.Status, res.Message = Passed, fmt.Sprintf("the API server and the %d node(s) that may run brokers mount image volumes (kubelet %s or later, containerd 2.1 or later or CRI-O)", nodesOK, imageVolumeDefault)
	}
	return res, true
}

// imageVolumeVersion judges a Kubernetes component's version for image volumes.
func imageVolumeVersion(gitVersion string) (Status, string) {
	v, err := utilversion.ParseGeneric(gitVersion)
	switch {
	case err != nil:
		return Unknown, fmt.Sprintf("version %q does not parse", gitVersion)
	case v.AtLeast(utilversion.MustParseGeneric(imageVolumeDefault)):
		return Passed, ""
	case v.AtLeast(utilversion.MustParseGeneric(imageVolumeGated)):
		return Unknown, gitVersion + " mounts image volumes only with the ImageVolume feature gate on (off by default before " + imageVolumeDefault + ")"
	}
	return Failed, gitVersion + " does not mount image volumes with subPath (" + imageVolumeGated + " and a feature gate, or " + imageVolumeDefault + ", needed)"
}

// imageVolumeRuntime judges a node's containerRuntimeVersion ("containerd://2.1.4", "cri-o://1.33.0").
func imageVolumeRuntime(rv string) (Status, string) {
	name, ver, _ := strings.Cut(rv, "://")
	switch name {
	case "cri-o":
		return Passed, ""
	case "containerd":
		v, err := utilversion.ParseGeneric(ver)
		if err != nil {
			return Unknown, "runtime " + rv + ": the version does not parse"
		}
		if v.AtLeast(utilversion.MustParseGeneric("2.1")) {
			return Passed, ""
		}
		return Failed, "runtime " + rv + " does not mount image volumes (containerd 2.1 or later does)"
	}
	return Unknown, "runtime " + rv + ": check knows whether containerd and CRI-O mount image volumes, not this one"
}
