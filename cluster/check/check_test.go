package check

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/fn"
)

// render renders a MiniCluster document as render does, into namespace hpc.
func render(t *testing.T, doc string) *Render {
	t.Helper()
	objs, err := fn.GenerateDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return &Render{Name: "mc", Namespace: "hpc", File: "mc.yaml", Objects: objs}
}

const helloWorld = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: mc}\nspec:\n  size: 4\n  containers: [{image: ubuntu:noble, command: hostname}]\n"

func node(name, cpu, memory string, mod ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", ContainerRuntimeVersion: "containerd://2.1.4"},
		},
	}
	for _, m := range mod {
		m(&n)
	}
	return n
}

func forbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", io.EOF)
}

func TestFeatures(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    map[string]Status
	}{
		{"v1.36.3", map[string]Status{"indexed-job": Passed, "pod-failure-policy": Passed, "pod-replacement-policy": Passed}},
		{"v1.30.1-eks-1234", map[string]Status{"indexed-job": Passed, "pod-failure-policy": Passed, "pod-replacement-policy": Passed}},
		{"v1.27.0", map[string]Status{"indexed-job": Passed, "pod-failure-policy": Passed, "pod-replacement-policy": Failed}},
		{"v1.21.14", map[string]Status{"indexed-job": Failed, "pod-failure-policy": Failed, "pod-replacement-policy": Failed}},
		// Built from source without its version stamped: nothing to judge by.
		{"v0.0.0-master+$Format:%H$", map[string]Status{"indexed-job": Unknown, "pod-failure-policy": Unknown, "pod-replacement-policy": Unknown}},
	} {
		for _, r := range features(&Cluster{Version: &version.Info{GitVersion: tc.version}}) {
			if r.Status != tc.want[r.Check] {
				t.Errorf("%s: %s %s: %s", tc.version, r.Check, r.Status, r.Message)
			}
			if r.Status == Failed && !strings.Contains(r.Fix, "upgrade") {
				t.Errorf("%s: %s fails without a fix: %+v", tc.version, r.Check, r)
			}
		}
	}
	for _, r := range features(&Cluster{VersionErr: forbidden("version")}) {
		if r.Status != Unknown || !strings.HasPrefix(r.Message, "cannot tell: forbidden") {
			t.Errorf("an unreadable version: %+v", r)
		}
	}
}

func TestNodesAndDNS(t *testing.T) {
	c := &Cluster{NodesErr: forbidden("nodes"), DNSErr: forbidden("services")}
	if r := nodes(c); r.Status != Unknown || !strings.HasPrefix(r.Message, "cannot tell: forbidden to list nodes") {
		t.Errorf("nodes: %+v", r)
	}
	if r := clusterDNS(c); r.Status != Unknown {
		t.Errorf("dns: %+v", r)
	}
	cordoned := node("b", "2", "4Gi", func(n *corev1.Node) { n.Spec.Unschedulable = true })
	if r := nodes(&Cluster{Nodes: []corev1.Node{cordoned}}); r.Status != Failed || !strings.Contains(r.Message, "b (cordoned)") {
		t.Errorf("no node takes pods: %+v", r)
	}
	c = &Cluster{DNSServices: []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "kube-dns"}}}}
	if r := clusterDNS(c); r.Status != Failed {
		t.Errorf("DNS without endpoints: %+v", r)
	}
	if r := clusterDNS(&Cluster{}); r.Status != Unknown {
		t.Errorf("no DNS Service found: %+v", r)
	}
}

// TestPodSecurity: the render's broker pods run as root, which baseline admits and restricted
// refuses (naming each rule); the keygen pod is restricted-compliant, so it is never named.
func TestPodSecurity(t *testing.T) {
	r := render(t, helloWorld)
	ns := func(level string) *Namespace {
		return &Namespace{Object: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hpc", Labels: map[string]string{labelEnforce: level}}}}
	}
	if res := podSecurity(r, ns("baseline")); res.Status != Passed {
		t.Errorf("baseline: %+v", res)
	}
	res := podSecurity(r, ns("restricted"))
	if res.Status != Failed || strings.Contains(res.Message, "keygen") {
		t.Errorf("restricted: %+v", res)
	}
	for _, want := range []string{"the broker pods:", "may run as root", "allowPrivilegeEscalation", "seccompProfile", "drop [ALL]"} {
		if !strings.Contains(res.Message, want) {
			t.Errorf("restricted's message lacks %q: %s", want, res.Message)
		}
	}
	host := render(t, "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: mc}\nspec:\n  pod: {hostPID: true}\n"+
		"  containers:\n  - image: ubuntu:noble\n    volumes: {h: {hostPath: /scratch, path: /scratch}}\n")
	if res := podSecurity(host, ns("baseline")); res.Status != Failed || !strings.Contains(res.Message, "hostPID") || !strings.Contains(res.Message, `hostPath volume "h"`) {
		t.Errorf("baseline with hostPID and a hostPath volume: %+v", res)
	}
	if res := podSecurity(r, &Namespace{Err: forbidden("namespaces")}); res.Status != Unknown {
		t.Errorf("an unreadable namespace: %+v", res)
	}
}

// TestBrokerFit: taints, selectors, requests and one broker per node decide.
func TestBrokerFit(t *testing.T) {
	doc := func(extra string) string {
		return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: mc\n" + extra +
			"spec:\n  size: 4\n  containers: [{image: ubuntu:noble, command: hostname, resources: {requests: {cpu: '2'}}}]\n"
	}
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "hpc", Effect: corev1.TaintEffectNoSchedule}}
	}
	c := &Cluster{Nodes: []corev1.Node{node("a", "4", "8Gi"), node("b", "4", "8Gi"), node("c", "16", "8Gi", tainted)}}
	if r := brokerFit(c, render(t, doc("")), nil); r.Status != Passed || !strings.Contains(r.Message, "room for 4") {
		t.Errorf("4 brokers of 2 CPU on two 4-CPU nodes: %+v", r)
	}
	spread := "  annotations: {minicluster-fn.dev/broker-spread: Required}\n"
	if r := brokerFit(c, render(t, doc(spread)), nil); r.Status != Failed || !strings.Contains(r.Message, "only 2 node(s)") || !strings.Contains(r.Message, "c: taint dedicated=hpc:NoSchedule not tolerated") {
		t.Errorf("one per node: %+v", r)
	}
	c.Nodes[1].Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("1")
	if r := brokerFit(c, render(t, doc("")), nil); r.Status != Failed || !strings.Contains(r.Message, "at most 2 broker pods") {
		t.Errorf("room for 2: %+v", r)
	}
	// A LimitRange's default request counts where a container has none.
	lr := corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Gi")}}}}}
	c = &Cluster{Nodes: []corev1.Node{node("a", "8", "8Gi")}}
	if r := brokerFit(c, render(t, doc("")), &Namespace{LimitRanges: []corev1.LimitRange{lr}}); r.Status != Failed || !strings.Contains(r.Message, "at most 2") {
		t.Errorf("with a LimitRange default: %+v", r)
	}
	if r := brokerFit(&Cluster{NodesErr: forbidden("nodes")}, render(t, doc("")), nil); r.Status != Unknown || !strings.Contains(r.Message, "forbidden to list nodes") {
		t.Errorf("nodes unreadable: %+v", r)
	}
}

func TestNodeAffinity(t *testing.T) {
	n := node("a", "1", "1Gi", func(n *corev1.Node) { n.Labels["zone"] = "z1" })
	spec := &corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z2"}}}}},
	}}}}
	if why := nodeRejects(&n, spec); !strings.Contains(why, "node affinity") {
		t.Errorf("zone z2 required on a z1 node: %q", why)
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}})
	if why := nodeRejects(&n, spec); why != "" {
		t.Errorf("the second term matches by name: %q", why)
	}
	spec = &corev1.PodSpec{NodeSelector: map[string]string{"zone": "z1"}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}
	n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoExecute}}
	if why := nodeRejects(&n, spec); why != "" {
		t.Errorf("a matching selector and a toleration of everything: %q", why)
	}
}

func TestImageVolumes(t *testing.T) {
	r := render(t, strings.Replace(helloWorld, "metadata: {name: mc}", "metadata: {name: mc, annotations: {minicluster-fn.dev/view-source: ImageVolume}}", 1))
	c := &Cluster{Version: &version.Info{GitVersion: "v1.36.0"}, Nodes: []corev1.Node{node("a", "1", "1Gi")}}
	if res, ok := imageVolumes(c, r, nil); !ok || res.Status != Passed {
		t.Errorf("1.36 and containerd 2.1: %+v", res)
	}
	c.Nodes = append(c.Nodes, node("b", "1", "1Gi", func(n *corev1.Node) { n.Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.27" }))
	if res, _ := imageVolumes(c, r, nil); res.Status != Failed || !strings.Contains(res.Message, "node b: runtime containerd://1.7.27") {
		t.Errorf("containerd 1.7: %+v", res)
	}
	c.Nodes = c.Nodes[:1]
	c.Nodes[0].Status.NodeInfo.KubeletVersion = "v1.34.2"
	if res, _ := imageVolumes(c, r, nil); res.Status != Unknown || !strings.Contains(res.Message, "feature gate") {
		t.Errorf("kubelet 1.34: %+v", res)
	}
	if _, ok := imageVolumes(c, render(t, helloWorld), nil); ok {
		t.Error("a MiniCluster that copies the view got an image-volumes check")
	}
}

// TestAccess: the kinds come from the render; a denied verb fails; the keygen Role needs its rights
// or escalate and bind; a SubjectAccessReview that may not be asked is Unknown.
func TestAccess(t *testing.T) {
	r := render(t, helloWorld)
	ns := &Namespace{Reviews: map[Review]ReviewResult{}}
	for _, q := range allReviews(r) {
		ns.Reviews[q] = ReviewResult{Allowed: true}
	}
	if res := access(r, ns, nil); res.Status != Passed || !strings.Contains(res.Message, "jobs.batch") || !strings.Contains(res.Message, "roles.rbac.authorization.k8s.io") {
		t.Errorf("all allowed: %+v", res)
	}
	ns.Reviews[Review{Verb: "delete", Group: "batch", Resource: "jobs"}] = ReviewResult{}
	if res := access(r, ns, nil); res.Status != Failed || !strings.Contains(res.Message, "may not delete jobs.batch") {
		t.Errorf("delete jobs denied: %+v", res)
	}
	ns.Reviews[Review{Verb: "delete", Group: "batch", Resource: "jobs"}] = ReviewResult{Allowed: true}
	ns.Reviews[Review{Verb: "create", Resource: "secrets"}] = ReviewResult{}
	if res := access(r, ns, nil); res.Status != Passed {
		t.Errorf("without create secrets, but with escalate and bind: %+v", res)
	}
	grants, fallbacks := roleReviews(r)
	if len(grants) == 0 || len(fallbacks) != 2 {
		t.Fatalf("the keygen Role's reviews: %v, %v", grants, fallbacks)
	}
	ns.Reviews[fallbacks[1]] = ReviewResult{}
	if res := access(r, ns, nil); res.Status != Failed || !strings.Contains(res.Message, "bind roles.rbac.authorization.k8s.io/mc-keygen") || !strings.Contains(res.Message, "create secrets") {
		t.Errorf("neither create secrets nor bind: %+v", res)
	}
	sa := &Subject{Namespace: "flux-system", Name: "kustomize-controller"}
	for _, q := range allReviews(r) {
		q.Subject = sa.User()
		ns.Reviews[q] = ReviewResult{Err: apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "", io.EOF)}
	}
	if res := access(r, ns, sa); res.Status != Unknown || !strings.Contains(res.Message, "forbidden to create subjectaccessreviews") {
		t.Errorf("SubjectAccessReview forbidden: %+v", res)
	}
}

func TestQuotaAndLimitRange(t *testing.T) {
	r := render(t, helloWorld)
	quota := corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6"), corev1.ResourceLimitsMemory: resource.MustParse("10Gi")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")},
	}}
	res := quotas(r, &Namespace{Quotas: []corev1.ResourceQuota{quota}})[0]
	if res.Status != Failed || !strings.Contains(res.Message, "pods 5 wanted, 4 left of 6") || !strings.Contains(res.Message, "tracks limits.memory") {
		t.Errorf("quota: %+v", res)
	}
	quota.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
	if res := quotas(r, &Namespace{Quotas: []corev1.ResourceQuota{quota}})[0]; res.Status != Unknown {
		t.Errorf("a scoped quota: %+v", res)
	}
	// A default memory limit on pods that keep the view in memory.
	lr := corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		Default: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}}}}
	res = limitRanges(r, &Namespace{LimitRanges: []corev1.LimitRange{lr}})[0]
	if res.Status != Failed || !strings.Contains(res.Fix, "view-medium: Disk") {
		t.Errorf("default memory limit: %+v", res)
	}
	lr.Spec.Limits[0] = corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	if res := limitRanges(r, &Namespace{LimitRanges: []corev1.LimitRange{lr}})[0]; res.Status != Failed || !strings.Contains(res.Message, "below the minimum 1") {
		t.Errorf("min cpu 1: %+v", res)
	}
}

func TestClaimsAndReferences(t *testing.T) {
	r := render(t, "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: mc, annotations: {minicluster-fn.dev/curve-secret: my-cert}}\n"+
		"spec:\n  size: 2\n  pod: {serviceAccountName: runner}\n  containers:\n  - image: ubuntu:noble\n    imagePullSecret: pull\n"+
		"    volumes: {a: {claimName: a, path: /a}, b: {claimName: b, path: /b}, c: {claimName: c, path: /c}}\n")
	pvc := func(name string, phase corev1.PersistentVolumeClaimPhase, class string, modes ...corev1.PersistentVolumeAccessMode) Claim {
		p := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "hpc"}, Status: corev1.PersistentVolumeClaimStatus{Phase: phase},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: modes}}
		if class != "" {
			p.Spec.StorageClassName = ptr.To(class)
		}
		return Claim{PVC: p}
	}
	ns := &Namespace{
		Claims: map[string]Claim{
			"a": pvc("a", corev1.ClaimBound, "", corev1.ReadWriteMany),
			"b": pvc("b", corev1.ClaimPending, "fast", corev1.ReadWriteMany),
			"c": {Err: apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, "c")},
		},
		Objects: map[ObjectRef]error{
			{"secrets", "pull"}:            forbidden("secrets"),
			{"secrets", "my-cert"}:         apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "my-cert"),
			{"serviceaccounts", "runner"}:  nil,
			{"configmaps", "unrelated-cm"}: nil,
		},
	}
	c := &Cluster{StorageClasses: []storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate)}}}
	// a is Bound; b is Pending in a class that binds at once; c does not exist.
	var got []Status
	for _, res := range claims(c, r, ns) {
		got = append(got, res.Status)
	}
	if want := []Status{Passed, Failed, Failed}; !slices.Equal(got, want) {
		t.Errorf("claims a, b, c: %v, want %v: %+v", got, want, claims(c, r, ns))
	}
	c.StorageClasses[0].VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	for _, res := range claims(c, r, ns) {
		if strings.HasPrefix(res.Message, "PersistentVolumeClaim b") && res.Status != Passed {
			t.Errorf("a Pending claim that binds for its first consumer: %+v", res)
		}
	}
	for _, res := range references(r, ns) {
		if res.Status == Unknown && !strings.HasPrefix(res.Message, "cannot tell: forbidden to get secrets") {
			t.Errorf("an unreadable Secret: %+v", res)
		}
	}
	var statuses []Status
	for _, res := range references(r, ns) {
		statuses = append(statuses, res.Status)
	}
	if len(statuses) != 3 || statuses[0] != Unknown || statuses[1] != Passed || statuses[2] != Failed {
		t.Errorf("references pull (forbidden), runner (exists), my-cert (missing): %v", references(r, ns))
	}
}

// TestREST: the REST API against a stand-in server: /version, a list, a Secret read as metadata
// only, a SelfSubjectAccessReview and a SubjectAccessReview.
func TestREST(t *testing.T) {
	var accepts []string
	var reviews []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch req.URL.Path {
		case "/version":
			io.WriteString(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
		case "/api/v1/nodes":
			io.WriteString(w, `{"kind":"NodeList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}]}`)
		case "/api/v1/namespaces/hpc/secrets/pull":
			accepts = append(accepts, req.Header.Get("Accept"))
			io.WriteString(w, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"pull","namespace":"hpc"}}`)
		case "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			body, _ := io.ReadAll(req.Body)
			var review authorizationv1.SubjectAccessReview
			if err := json.Unmarshal(body, &review); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			reviews = append(reviews, review.Kind+" "+review.Spec.User+" "+review.Spec.ResourceAttributes.Verb)
			review.Status.Allowed = review.Spec.User == ""
			json.NewEncoder(w).Encode(review)
		default:
			http.NotFound(w, req)
		}
	}))
	defer srv.Close()
	api, err := NewREST(&rest.Config{Host: srv.URL}, "hpc")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := api.Version(ctx); err != nil || v.GitVersion != "v1.36.3" {
		t.Errorf("version: %v, %v", v, err)
	}
	var nodes corev1.NodeList
	if err := api.List(ctx, "nodes", "", "", &nodes); err != nil || len(nodes.Items) != 1 || nodes.Items[0].Name != "a" {
		t.Errorf("nodes: %v, %v", nodes.Items, err)
	}
	var secret metav1.PartialObjectMetadata
	if err := api.Get(ctx, "secrets", "hpc", "pull", &secret); err != nil || secret.Name != "pull" || len(accepts) != 1 || !strings.Contains(accepts[0], "as=PartialObjectMetadata") {
		t.Errorf("secret metadata: %v, %v, Accept %q", secret, err, accepts)
	}
	if err := api.Get(ctx, "configmaps", "hpc", "absent", &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("an absent ConfigMap: %v", err)
	}
	attrs := authorizationv1.ResourceAttributes{Namespace: "hpc", Verb: "create", Group: "batch", Resource: "jobs"}
	if st, err := api.Review(ctx, nil, attrs); err != nil || !st.Allowed {
		t.Errorf("self review: %+v, %v", st, err)
	}
	sa := &Subject{Namespace: "flux-system", Name: "kustomize-controller"}
	if st, err := api.Review(ctx, sa, attrs); err != nil || st.Allowed {
		t.Errorf("subject review: %+v, %v", st, err)
	}
	want := []string{"SelfSubjectAccessReview  create", "SubjectAccessReview system:serviceaccount:flux-system:kustomize-controller create"}
	if strings.Join(reviews, "|") != strings.Join(want, "|") {
		t.Errorf("reviews sent: %q, want %q", reviews, want)
	}
}

// TestSummary: the summary line counts the results, the worst status first, in diff's form.
func TestSummary(t *testing.T) {
	for _, c := range []struct {
		results []Result
		want    string
	}{
		{nil, "no checks"},
		{[]Result{{Status: Passed}}, "1 check: 1 passed"},
		{[]Result{{Status: Passed}, {Status: Unknown}, {Status: Failed}, {Status: Failed}}, "4 checks: 2 failed, 1 unknown, 1 passed"},
	} {
		if got := Summary(c.results); got != c.want {
			t.Errorf("Summary(%v) = %q, want %q", c.results, got, c.want)
		}
	}
}
