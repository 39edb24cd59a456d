package check

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// demand is what the render's objects count against a ResourceQuota: pods and their compute
// resources (every pod at once: the broker Job's parallelism, the keygen pod, the services pod),
// and object counts by quota name ("configmaps", "count/jobs.batch", ...).
func demand(r *Render, lrs []corev1.LimitRange) corev1.ResourceList {
	d := corev1.ResourceList{}
	add := func(name corev1.ResourceName, q resource.Quantity) {
		cur := d[name]
		cur.Add(q)
		d[name] = cur
	}
	for _, p := range r.pods() {
		n := resource.NewQuantity(int64(p.count), resource.DecimalSI)
		add(corev1.ResourcePods, *n)
		add("count/pods", *n)
		for name, q := range podRequests(p.spec, lrs) {
			q.Mul(int64(p.count))
			add(name, q)
			add("requests."+name, q)
		}
		for name, q := range podLimits(p.spec, lrs) {
			q.Mul(int64(p.count))
			add("limits."+name, q)
		}
	}
	one := *resource.NewQuantity(1, resource.DecimalSI)
	for _, o := range r.Objects {
		gvk := o.GetObjectKind().GroupVersionKind()
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		if gvk.Group == "" {
			if gvk.Kind != "Pod" {
				add(corev1.ResourceName(plural.Resource), one)
			}
			add(corev1.ResourceName("count/"+plural.Resource), one)
		} else {
			add(corev1.ResourceName("count/"+plural.Resource+"."+gvk.Group), one)
		}
	}
	if r.hasKeygen() {
		// The keygen Job creates the certificate Secret.
		add(corev1.ResourceSecrets, one)
		add("count/secrets", one)
	}
	return d
}

// hasKeygen tells whether the render has a keygen Job.
func (r *Render) hasKeygen() bool {
	for _, p := range r.pods() {
		if p.component == contract.ComponentKeygen {
			return true
		}
	}
	return false
}

// podLimits is the pod's limits as quota counts them: the containers' (with LimitRange default
// limits), the largest init container's where larger, and the overhead.
func podLimits(spec *corev1.PodSpec, lrs []corev1.LimitRange) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		addTo(sum, containerLimits(&c, lrs))
	}
	for _, c := range spec.InitContainers {
		for name, q := range containerLimits(&c, lrs) {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	addTo(sum, spec.Overhead)
	return sum
}

func containerLimits(c *corev1.Container, lrs []corev1.LimitRange) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range c.Resources.Limits {
		out[name] = q.DeepCopy()
	}
	for _, lr := range lrs {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for name, q := range item.Default {
				if _, ok := out[name]; !ok {
					out[name] = q.DeepCopy()
				}
			}
		}
	}
	return out
}

// quotas: each ResourceQuota of the namespace against what the render adds: whether what is left
// (hard minus used) holds it, and, where the quota tracks a compute resource, whether every
// container sets it (the quota refuses a pod whose containers do not). Quotas with scopes are not
// evaluated, and said so.
func quotas(r *Render, ns *Namespace) []Result {
	res := Result{Check: "resource-quota", Scope: r.Scope(), File: r.File}
	switch {
	case ns == nil:
		res.Status, res.Message = Unknown, "cannot tell: the namespace was not read"
		return []Result{res}
	case ns.QuotasErr != nil:
		res.Status, res.Message, res.Fix = Unknown, cannotTell("list resourcequotas in namespace "+r.Namespace, ns.QuotasErr), rightFix("list", "resourcequotas", " in namespace "+r.Namespace)
		return []Result{res}
	case len(ns.Quotas) == 0:
		res.Status, res.Message = Passed, "no ResourceQuota in namespace "+r.Namespace
		return []Result{res}
	}
	d := demand(r, ns.LimitRanges)
	var refused, scoped, names []string
	for _, q := range ns.Quotas {
		names = append(names, q.Name)
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			scoped = append(scoped, q.Name)
			continue
		}
		hard := q.Status.Hard
		if hard == nil {
			hard = q.Spec.Hard
		}
		for _, name := range sortedNames(hard) {
			want, ok := d[name]
			if !ok || want.IsZero() {
				continue
			}
			total := hard[name]
			left := total.DeepCopy()
			if used, ok := q.Status.Used[name]; ok {
				left.Sub(used)
			}
			if want.Cmp(left) > 0 {
				refused = append(refused, fmt.Sprintf("ResourceQuota %s: %s %s wanted, %s left of %s", q.Name, name, want.String(), left.String(), total.String()))
			}
		}
		for _, missing := range unsetCompute(r, hard, ns.LimitRanges) {
			refused = append(refused, fmt.Sprintf("ResourceQuota %s tracks %s, which %s", q.Name, missing.resource, missing.who))
		}
	}
	switch {
	case len(refused) > 0:
		res.Status = Failed
		res.Message = fmt.Sprintf("the namespace's quota refuses the pods or objects of %s: %s", r.what(), strings.Join(refused, "; "))
		res.Fix = "ask for a larger quota, free some of it, lower spec.size or the containers' resources, or set the resources the quota tracks on every container (spec.containers[].resources, spec.flux.container.resources)"
	case len(scoped) > 0:
		res.Status = Unknown
		res.Message = fmt.Sprintf("cannot tell: ResourceQuota %s has scopes, which check does not evaluate", strings.Join(scoped, ", "))
	default:
		res.Status = Passed
		res.Message = fmt.Sprintf("ResourceQuota %s holds %s (%s)", strings.Join(names, ", "), r.what(), describeDemand(d))
	}
	return []Result{res}
}

func describeDemand(d corev1.ResourceList) string {
	var parts []string
	for _, name := range []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory} {
		if q, ok := d[name]; ok && !q.IsZero() {
			parts = append(parts, string(name)+" "+q.String())
		}
	}
	return strings.Join(parts, ", ")
}

type unset struct{ resource, who string }

// unsetCompute lists the compute resources a quota tracks that a container of the render does not
// set (after LimitRange defaults): the quota refuses such pods.
func unsetCompute(r *Render, hard corev1.ResourceList, lrs []corev1.LimitRange) []unset {
	var out []unset
	for _, name := range sortedNames(hard) {
		var limit bool
		var compute corev1.ResourceName
		switch {
		case name == corev1.ResourceCPU || name == corev1.ResourceMemory:
			compute = name
		case strings.HasPrefix(string(name), "requests.") && (name == corev1.ResourceRequestsCPU || name == corev1.ResourceRequestsMemory):
			compute = corev1.ResourceName(strings.TrimPrefix(string(name), "requests."))
		case name == corev1.ResourceLimitsCPU || name == corev1.ResourceLimitsMemory:
			compute, limit = corev1.ResourceName(strings.TrimPrefix(string(name), "limits.")), true
		default:
			continue
		}
		var missing []string
		for _, p := range r.pods() {
			for _, c := range append(append([]corev1.Container{}, p.spec.InitContainers...), p.spec.Containers...) {
				set := containerRequests(&c, lrs)
				if limit {
					set = containerLimits(&c, lrs)
				}
				if _, ok := set[compute]; !ok {
					missing = append(missing, fmt.Sprintf("%s (%s)", c.Name, strings.TrimPrefix(p.what, "the ")))
				}
			}
		}
		if len(missing) > 0 {
			kind := "request"
			if limit {
				kind = "limit"
			}
			out = append(out, unset{string(name), fmt.Sprintf("these containers set no %s %s for: %s", compute, kind, strings.Join(firstFew(missing), ", "))})
		}
	}
	return out
}

// limitRanges: each LimitRange of the namespace against the render's containers and pods: a
// container or pod above max or below min, or above the limit/request ratio, is refused; default
// limits change the pods, and a default memory limit on a pod with a memory-backed emptyDir (the
// view volume's default for a MiniCluster that completes) counts the view's files against it
// (docs/generated-objects.md, "The view volume").
func limitRanges(r *Render, ns *Namespace) []Result {
	res := Result{Check: "limit-range", Scope: r.Scope(), File: r.File}
	switch {
	case ns == nil:
		res.Status, res.Message = Unknown, "cannot tell: the namespace was not read"
		return []Result{res}
	case ns.LimitRangesErr != nil:
		res.Status, res.Message, res.Fix = Unknown, cannotTell("list limitranges in namespace "+r.Namespace, ns.LimitRangesErr), rightFix("list", "limitranges", " in namespace "+r.Namespace)
		return []Result{res}
	case len(ns.LimitRanges) == 0:
		res.Status, res.Message = Passed, "no LimitRange in namespace "+r.Namespace
		return []Result{res}
	}
	var refused, changes []string
	tmpfsCharged := false
	for _, p := range r.pods() {
		memoryDir := ""
		for _, v := range p.spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				memoryDir = v.Name
			}
		}
		for _, lr := range ns.LimitRanges {
			for _, item := range lr.Spec.Limits {
				switch item.Type {
				case corev1.LimitTypeContainer:
					for _, c := range append(append([]corev1.Container{}, p.spec.InitContainers...), p.spec.Containers...) {
						who := fmt.Sprintf("%s container %s", strings.TrimPrefix(p.what, "the "), c.Name)
						refused = append(refused, bounds("LimitRange "+lr.Name, who, item, containerRequests(&c, []corev1.LimitRange{lr}), containerLimits(&c, []corev1.LimitRange{lr}))...)
						for name, q := range item.Default {
							if _, own := c.Resources.Limits[name]; own {
								continue
							}
							changes = append(changes, fmt.Sprintf("%s gets a %s limit of %s", who, name, q.String()))
							if name == corev1.ResourceMemory && memoryDir != "" {
								tmpfsCharged = true
							}
						}
					}
				case corev1.LimitTypePod:
					refused = append(refused, bounds("LimitRange "+lr.Name, p.what, item, podRequests(p.spec, ns.LimitRanges), podLimits(p.spec, ns.LimitRanges))...)
				}
			}
		}
	}
	switch {
	case len(refused) > 0:
		res.Status = Failed
		res.Message = "the namespace's LimitRange refuses the pods of " + r.what() + ": " + strings.Join(firstFew(refused), "; ")
		res.Fix = "set the containers' resources within the LimitRange (spec.containers[].resources, spec.flux.container.resources)"
	case tmpfsCharged:
		res.Status = Failed
		res.Message = "the namespace's LimitRange gives the broker containers a default memory limit, and their pod keeps the view in memory (an emptyDir of medium Memory), which counts against it: " + strings.Join(firstFew(changes), "; ")
		res.Fix = "set the option " + v1alpha2.OptionPrefix + "view-medium: Disk, or give the containers memory limits that leave room for the view"
	default:
		res.Status = Passed
		res.Message = "the namespace's LimitRange admits the pods of " + r.what()
		if len(changes) > 0 {
			res.Message += "; it changes them: " + strings.Join(firstFew(changes), "; ")
		}
	}
	return []Result{res}
}

// bounds checks requests and limits against a LimitRange item's min, max and ratio.
func bounds(lr, who string, item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []string {
	var out []string
	for _, name := range sortedNames(item.Max) {
		max := item.Max[name]
		l, ok := limits[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s sets no %s limit, and %s has a maximum of %s", lr, who, name, lr, max.String()))
		case l.Cmp(max) > 0:
			out = append(out, fmt.Sprintf("%s: %s has a %s limit of %s, above the maximum %s", lr, who, name, l.String(), max.String()))
		}
	}
	for _, name := range sortedNames(item.Min) {
		min := item.Min[name]
		if q, ok := requests[name]; !ok || q.Cmp(min) < 0 {
			got := "no request"
			if ok {
				got = "a request of " + q.String()
			}
			out = append(out, fmt.Sprintf("%s: %s has %s for %s, below the minimum %s", lr, who, got, name, min.String()))
		}
	}
	for _, name := range sortedNames(item.MaxLimitRequestRatio) {
		ratio := item.MaxLimitRequestRatio[name]
		l, lok := limits[name]
		q, rok := requests[name]
		if !lok || !rok || q.IsZero() {
			continue
		}
		if float64(l.MilliValue())/float64(q.MilliValue()) > float64(ratio.MilliValue())/1000 {
			out = append(out, fmt.Sprintf("%s: %s's %s limit/request ratio is above %s", lr, who, name, ratio.String()))
		}
	}
	return out
}
