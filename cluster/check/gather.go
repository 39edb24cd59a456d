package check

import (
	"context"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minicluster-fn/minicluster-fn/internal/parallel"
)

// dnsSelector selects the cluster DNS Service in kube-system: kube-dns's label, which CoreDNS's
// Service keeps.
const dnsSelector = "k8s-app=kube-dns"

// Read reads what Evaluate needs for the renders: the server's version, the nodes, the DNS
// Service's EndpointSlices, and for each namespace the renders go to the Namespace, its quotas
// and limit ranges, the claims, Secrets, ConfigMaps and ServiceAccounts the renders name, and the
// answers to access reviews for the identity check runs as and for appliedBy (nil: none). It
// only reads and reviews: nothing is created or changed. An error is kept beside what it concerns.
func Read(ctx context.Context, api API, renders []*Render, appliedBy *Subject) *Cluster {
	c := &Cluster{Namespaces: map[string]*Namespace{}, AppliedBy: appliedBy}
	c.Version, c.VersionErr = api.Version(ctx)
	var nodes corev1.NodeList
	if c.NodesErr = api.List(ctx, "nodes", "", "", &nodes); c.NodesErr == nil {
		c.Nodes = nodes.Items
	}
	var services corev1.ServiceList
	if c.DNSErr = api.List(ctx, "services", "kube-system", dnsSelector, &services); c.DNSErr == nil {
		c.DNSServices = services.Items
		for _, s := range services.Items {
			var slices discoveryv1.EndpointSliceList
			if c.DNSErr = api.List(ctx, "endpointslices", "kube-system", discoveryv1.LabelServiceName+"="+s.Name, &slices); c.DNSErr != nil {
				break
			}
			c.DNSSlices = append(c.DNSSlices, slices.Items...)
		}
	}
	pending := false
	for _, r := range renders {
		ns := c.Namespaces[r.Namespace]
		if ns == nil {
			ns = readNamespace(ctx, api, r.Namespace)
			c.Namespaces[r.Namespace] = ns
		}
		names, _ := r.claimNames()
		for _, name := range names {
			if _, done := ns.Claims[name]; done {
				continue
			}
			var pvc corev1.PersistentVolumeClaim
			err := api.Get(ctx, "persistentvolumeclaims", r.Namespace, name, &pvc)
			ns.Claims[name] = Claim{PVC: &pvc, Err: err}
			pending = pending || (err == nil && pvc.Status.Phase == corev1.ClaimPending)
		}
		for _, ref := range r.references() {
			if _, done := ns.Objects[ref.ref]; done {
				continue
			}
			ns.Objects[ref.ref] = api.Get(ctx, ref.ref.Resource, r.Namespace, ref.ref.Name, objectFor(ref.ref.Resource))
		}
		reviewAll(ctx, api, ns, r, nil)
		if appliedBy != nil {
			reviewAll(ctx, api, ns, r, appliedBy)
		}
	}
	if pending {
		var classes storagev1.StorageClassList
		if c.StorageClassesErr = api.List(ctx, "storageclasses", "", "", &classes); c.StorageClassesErr == nil {
			c.StorageClasses = classes.Items
		}
	}
	return c
}

func readNamespace(ctx context.Context, api API, name string) *Namespace {
	ns := &Namespace{Claims: map[string]Claim{}, Objects: map[ObjectRef]error{}, Reviews: map[Review]ReviewResult{}}
	var obj corev1.Namespace
	if ns.Err = api.Get(ctx, "namespaces", "", name, &obj); ns.Err == nil {
		ns.Object = &obj
	}
	var quotas corev1.ResourceQuotaList
	if ns.QuotasErr = api.List(ctx, "resourcequotas", name, "", &quotas); ns.QuotasErr == nil {
		ns.Quotas = quotas.Items
	}
	var lrs corev1.LimitRangeList
	if ns.LimitRangesErr = api.List(ctx, "limitranges", name, "", &lrs); ns.LimitRangesErr == nil {
		ns.LimitRanges = lrs.Items
	}
	return ns
}

func objectFor(resource string) runtime.Object {
	switch resource {
	case "secrets":
		// Only whether it exists matters: its metadata, never its data (REST.Get asks for
		// PartialObjectMetadata).
		return &metav1.PartialObjectMetadata{}
	case "configmaps":
		return &corev1.ConfigMap{}
	}
	return &corev1.ServiceAccount{}
}

// reviewAll asks the access reviews of r not yet asked, a few at a time.
func reviewAll(ctx context.Context, api API, ns *Namespace, r *Render, subject *Subject) {
	key := ""
	if subject != nil {
		key = subject.User()
	}
	var todo []Review
	for _, q := range allReviews(r) {
		q.Subject = key
		if _, done := ns.Reviews[q]; !done && !slices.Contains(todo, q) {
			todo = append(todo, q)
		}
	}
	answers := parallel.Map(len(todo), func(i int) ReviewResult {
		q := todo[i]
		st, err := api.Review(ctx, subject, authorizationv1.ResourceAttributes{
			Namespace: r.Namespace, Verb: q.Verb, Group: q.Group, Resource: q.Resource, Name: q.Name,
		})
		return ReviewResult{Allowed: st.Allowed, Reason: st.Reason, Err: err}
	})
	for i, q := range todo {
		ns.Reviews[q] = answers[i]
	}
}
