package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/utils/ptr"
)

// statusRow is what status -o json says of one MiniCluster (the fields these tests check).
type statusRow struct {
	Name        string `json:"name"`
	Phase       string `json:"phase"`
	Joined      int    `json:"joined"`
	Size        int    `json:"size"`
	Certificate string `json:"certificate"`
	Reason      string `json:"reason"`
}

// viewer makes a ServiceAccount in ns bound to nothing but the cluster's own view ClusterRole in
// ns, and returns a kubeconfig with its token.
//
// The API server's RBAC bootstrap creates view as an aggregated role: its rules are those of the
// ClusterRoles its aggregationRule selects (system:aggregate-to-view, the bootstrap's rules for
// this Kubernetes release), which kube-controller-manager's aggregation controller copies into it.
// No controller manager runs here, so viewer does that copy itself, once.
func (c *cluster) viewer(t testing.TB, ns string) string {
	t.Helper()
	ctx := context.Background()
	view, err := c.cs.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the bootstrap ClusterRole view: %v", err)
	}
	if view.AggregationRule != nil && len(view.Rules) == 0 {
		for _, sel := range view.AggregationRule.ClusterRoleSelectors {
			roles, err := c.cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&sel)})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range roles.Items {
				view.Rules = append(view.Rules, r.Rules...)
			}
		}
		if _, err := c.cs.RbacV1().ClusterRoles().Update(ctx, view, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("aggregating the rules of ClusterRole view: %v", err)
		}
	}
	if _, err := c.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "viewer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "viewer", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c.kubeconfigFor(t, c.token(t, ns, "viewer"), ns)
}

// jobPod is the pod the Job controller would create for job (index i of an Indexed Job, or -1):
// the template with the controller's labels, annotation and owner reference.
func jobPod(job *batchv1.Job, i int) *corev1.Pod {
	tpl := job.Spec.Template.DeepCopy()
	labels := tpl.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[batchv1.JobNameLabel] = job.Name
	labels[batchv1.ControllerUidLabel] = string(job.UID)
	annotations := tpl.Annotations
	name := job.Name + "-x"
	if i >= 0 {
		if annotations == nil {
			annotations = map[string]string{}
		}
		labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(i)
		annotations[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(i)
		name = job.Name + "-" + strconv.Itoa(i) + "-x"
		tpl.Spec.Hostname = job.Name + "-" + strconv.Itoa(i)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}},
		},
		Spec: tpl.Spec,
	}
}

// createPod creates the pod and then sets its status, as the Job controller and kubelet would.
func createPod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, st corev1.PodStatus) (*corev1.Pod, error) {
	p, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	p.Status = st
	return cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

// event records a Warning event about an object, as kubelet, the scheduler or a controller would.
func (c *cluster) event(t testing.TB, ns, kind, name, reason, message string) {
	t.Helper()
	now := metav1.Now()
	if _, err := c.cs.CoreV1().Events(ns).Create(context.Background(), &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name},
		Reason:         reason, Message: message, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "integration-test"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// typed converts an object.
func typed[T any](o *unstructured.Unstructured) (*T, error) {
	var out T
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &out)
	return &out, err
}

// statusRows runs minicluster-fn status -o json with a kubeconfig and returns its rows by name.
func statusRows(t testing.TB, kubeconfig string, args ...string) map[string]statusRow {
	t.Helper()
	r := runFn(t, []string{"HOME=" + t.TempDir()}, "", append([]string{"status", "--kubeconfig", kubeconfig, "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("status: %s", r)
	}
	var list struct {
		Items []statusRow `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, r.stdout)
	}
	rows := map[string]statusRow{}
	for _, row := range list.Items {
		rows[row.Name] = row
	}
	return rows
}

// testStatusView: status and wait with a token bound only to the namespace's view role, on causes
// set up as the controllers and kubelet record them (no Job controller, scheduler or kubelet runs
// here: tests/live provokes each cause for real). Each reason is still found with that token, and
// nothing status does is forbidden to it (it never reads a Secret).
func (c *cluster) testStatusView(t *testing.T) {
	ctx := context.Background()
	ns := c.namespace(t, "status", nil)
	kubeconfig := c.viewer(t, ns)
	mc := func(name, annotations, volumes string) string {
		return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: " + name +
			"\n  annotations: {" + annotations + "}\nspec:\n  size: 2\n  containers:\n    - image: ubuntu:noble\n      command: hostname\n" + volumes
	}
	var objs []*unstructured.Unstructured
	for _, text := range []string{
		mc("pullfail", `minicluster-fn.dev/keygen-image: "localhost/minicluster-fn-live/does-not-exist:1"`, ""),
		mc("claims", `minicluster-fn.dev/curve-secret: "claims-cert"`, "      volumes:\n        results: {path: /results, claimName: claims-results}\n"),
		mc("quota", `minicluster-fn.dev/curve-secret: "quota-cert"`, ""),
	} {
		objs = append(objs, renderText(t, text)...)
	}
	applied := c.apply(t, ns, objs)
	jobs := map[string]*batchv1.Job{}
	for _, o := range applied {
		if o.GetKind() == "Job" {
			job, err := typed[batchv1.Job](o)
			if err != nil {
				t.Fatal(err)
			}
			jobs[o.GetLabels()["minicluster-fn.dev/minicluster"]+"/"+o.GetLabels()["minicluster-fn.dev/component"]] = job
		}
	}

	// pullfail: the keygen image cannot be pulled; the broker pods wait for the certificate.
	keygen := jobs["pullfail/keygen"]
	image := keygen.Spec.Template.Spec.Containers[0].Image
	kp, err := createPod(ctx, c.cs, jobPod(keygen, -1), corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "keygen", Image: image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull failed"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	c.event(t, ns, "Pod", kp.Name, "Failed", `Failed to pull image "`+image+`": not found`)
	for i := range 2 {
		bp, err := createPod(ctx, c.cs, jobPod(jobs["pullfail/broker"], i), corev1.PodStatus{Phase: corev1.PodPending})
		if err != nil {
			t.Fatal(err)
		}
		c.event(t, ns, "Pod", bp.Name, "FailedMount", `MountVolume.SetUp failed for volume "flux-curve" : secret "pullfail" not found`)
	}

	// claims: the broker pods' claim is Pending, for a storage class that does not exist.
	if _, err := c.cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claims-results"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("does-not-exist"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.event(t, ns, "PersistentVolumeClaim", "claims-results", "ProvisioningFailed", `storageclass.storage.k8s.io "does-not-exist" not found`)
	for i := range 2 {
		if _, err := createPod(ctx, c.cs, jobPod(jobs["claims/broker"], i), corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
		}}}); err != nil {
			t.Fatal(err)
		}
	}

	// quota: the Job controller cannot create the pods.
	c.event(t, ns, "Job", jobs["quota/broker"].Name, "FailedCreate", `Error creating: pods "x" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0`)

	rows := statusRows(t, kubeconfig)
	for name, want := range map[string]struct {
		phase  string
		reason []string
	}{
		"pullfail": {"WaitingForCertificate", []string{"the keygen image localhost/minicluster-fn-live/does-not-exist:1 cannot be pulled", kp.Name, "not found"}},
		"claims":   {"Starting", []string{"PersistentVolumeClaim claims-results", "is Pending", `storageclass.storage.k8s.io "does-not-exist" not found`}},
		"quota":    {"Starting", []string{"cannot create the pods of Job " + jobs["quota/broker"].Name, "exceeded quota: no-pods"}},
	} {
		row := rows[name]
		if row.Phase != want.phase || row.Size != 2 {
			t.Errorf("%s: phase %q, size %d; want %s, 2", name, row.Phase, row.Size, want.phase)
		}
		for _, part := range want.reason {
			if !strings.Contains(row.Reason, part) {
				t.Errorf("%s: reason %q lacks %q", name, row.Reason, part)
			}
		}
	}
	if len(rows) != 3 {
		t.Errorf("status found %d MiniClusters, want 3: %v", len(rows), rows)
	}

	// With the broker pods' FailedMount only (the keygen pod gone), the certificate is missing.
	if err := c.cs.CoreV1().Pods(ns).Delete(ctx, kp.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	if row := statusRows(t, kubeconfig, "pullfail")["pullfail"]; !strings.Contains(row.Reason, `the certificate is missing: broker pod pullfail-`) ||
		!strings.Contains(row.Reason, `secret "pullfail" not found`) {
		t.Errorf("pullfail without its keygen pod: reason %q, want the broker pods' FailedMount", row.Reason)
	}

	// wait gives up with the phase and the reason.
	r := runFn(t, []string{"HOME=" + t.TempDir()}, "", "wait", "quota", "--for=joined", "--timeout=1500ms", "--kubeconfig", kubeconfig)
	if r.code == 0 || !strings.Contains(r.stderr, "timed out after 1.5s waiting for MiniCluster quota to be joined: phase Starting, 0/2 brokers joined: the Job controller cannot create the pods") {
		t.Errorf("wait quota --for=joined: %s", r)
	}

	// The view token may not read Secrets: status works without.
	view := rest.CopyConfig(c.config)
	view.BearerToken = c.token(t, ns, "viewer")
	view.CertFile, view.KeyFile, view.CertData, view.KeyData = "", "", nil, nil
	vcs := kubernetes.NewForConfigOrDie(view)
	if _, err := vcs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the view token listing Secrets: %v, want forbidden", err)
	}
}

// BenchmarkStatus: status -n NS with a view token, with 1,000 MiniClusters (hello-world, size 2,
// every broker joined; 10 of them with pods the scheduler cannot place, so that the events and
// claims are read too) in one namespace of a real API server. Each op is one whole status process.
// Budget: 2 s (the issue's; printed, never failed: machines are noisy).
func BenchmarkStatus(b *testing.B) {
	const miniClusters, stuck = 1000, 10
	fnBinary(b)
	etcd := testserver.RunEtcd(b, nil)
	storage := storagebackend.NewDefaultConfig("/minicluster-fn-bench/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	srv := kubeapiservertesting.StartTestServerOrDie(b, nil, []string{"--authorization-mode=RBAC"}, storage)
	b.Cleanup(srv.TearDownFn)
	config := rest.CopyConfig(srv.ClientConfig)
	config.QPS, config.Burst = -1, 0 // no client-side rate limit while filling the namespace
	c := &cluster{config: config, cs: kubernetes.NewForConfigOrDie(config)}
	ctx := context.Background()
	ns := "bench"
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	// The ServiceAccount the (absent) controller manager would create; the broker pods run as it.
	if _, err := c.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	// One render of 1,000 MiniClusters.
	var text strings.Builder
	for i := range miniClusters {
		fmt.Fprintf(&text, "---\napiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: mc-%04d}\n"+
			"spec:\n  size: 2\n  containers:\n    - image: ubuntu:noble\n      command: hostname\n", i)
	}
	file := filepath.Join(b.TempDir(), "miniclusters.yaml")
	if err := os.WriteFile(file, []byte(text.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	r := runFn(b, nil, "", "render", file)
	if r.code != 0 {
		b.Fatalf("render: %s", r.stderr)
	}
	objs := decodeStream(b, []byte(r.stdout))

	start := time.Now()
	work := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	for range 16 {
		wg.Go(func() {
			for o := range work {
				if err := c.createWithPods(ctx, ns, o, stuck); err != nil {
					fail(fmt.Errorf("%s: %w", ref(o), err))
				}
			}
		})
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	b.Logf("%d objects and their pods created in %s", len(objs), time.Since(start).Round(time.Millisecond))

	kubeconfig := c.viewer(b, ns)
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		r := runFn(b, []string{"HOME=" + b.TempDir()}, "", "status", "--kubeconfig", kubeconfig, "-n", ns)
		times = append(times, time.Since(t0))
		if r.code != 0 {
			b.Fatalf("status: %s", r)
		}
		if lines := strings.Count(r.stdout, "\n"); lines != miniClusters+1 {
			b.Fatalf("status printed %d lines, want a header and %d rows", lines, miniClusters)
		}
		if n := strings.Count(r.stdout, " Running "); n != miniClusters-stuck {
			b.Fatalf("status shows %d Running, want %d", n, miniClusters-stuck)
		}
	}
	slices.Sort(times)
	median := times[len(times)/2]
	b.ReportMetric(float64(median.Milliseconds()), "ms-median/status")
	verdict := "ok"
	if median > 2*time.Second {
		verdict = "MISSED"
	}
	b.Logf("status of %d MiniClusters in one namespace: median %s of %d runs (budget 2 s: %s)", miniClusters, median.Round(time.Millisecond), len(times), verdict)
}

// createWithPods creates one rendered object; for a Job, the pods the Job controller and kubelet
// would make of it, Ready (the first stuck MiniClusters' broker pods unschedulable instead), and
// the Job's status: the keygen Job complete, the broker Job with its pods active and ready.
func (c *cluster) createWithPods(ctx context.Context, ns string, o *unstructured.Unstructured, stuck int) error {
	o = o.DeepCopy()
	o.SetNamespace(ns)
	gvk := o.GroupVersionKind()
	switch gvk.Kind {
	case "ConfigMap":
		cm, err := typed[corev1.ConfigMap](o)
		if err == nil {
			_, err = c.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		}
		return err
	case "Service":
		svc, err := typed[corev1.Service](o)
		if err == nil {
			_, err = c.cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		}
		return err
	case "Job":
	default:
		return nil // the keygen's ServiceAccount and RBAC objects: status does not read them
	}
	job, err := typed[batchv1.Job](o)
	if err == nil {
		job, err = c.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	now := metav1.Now()
	n, _ := strconv.Atoi(strings.TrimPrefix(job.Labels["minicluster-fn.dev/minicluster"], "mc-"))
	if job.Labels["minicluster-fn.dev/component"] == "keygen" {
		job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}}
		_, err = c.cs.BatchV1().Jobs(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{})
		return err
	}
	size := int(*job.Spec.Parallelism)
	ready := int32(size)
	for i := range size {
		pod := jobPod(job, i)
		st := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}}
		if n < stuck {
			ready = 0
			st = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu.",
			}}}
		}
		if _, err := createPod(ctx, c.cs, pod, st); err != nil {
			return err
		}
	}
	job.Status = batchv1.JobStatus{StartTime: &now, Active: int32(size), Ready: &ready}
	_, err = c.cs.BatchV1().Jobs(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	return err
}
