package check

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// scriptedCluster is a SmokeAPI whose MiniCluster goes through the snapshots of script, one per
// read, the last one repeated; once everything created is deleted, it reads nothing.
type scriptedCluster struct {
	mu      sync.Mutex
	script  []snapshot
	reads   int
	objects map[string]bool
	// created and deleted are the objects' names in the order of the calls.
	created, deleted []string
	// failCreate fails the create of this object.
	failCreate string
	// keep, if set, is never deleted (its deletion "succeeds" but it stays).
	keep string
}

type snapshot struct {
	objs status.Objects
	mc   *status.MiniCluster
}

func (c *scriptedCluster) Create(_ context.Context, _ string, obj generators.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if obj.GetName() == c.failCreate {
		return errors.New("jobs.batch is forbidden")
	}
	if c.objects == nil {
		c.objects = map[string]bool{}
	}
	c.objects[obj.GetName()] = true
	c.created = append(c.created, obj.GetName())
	return nil
}

func (c *scriptedCluster) Delete(_ context.Context, _ string, obj generators.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deleted = append(c.deleted, obj.GetName())
	if obj.GetName() != c.keep {
		delete(c.objects, obj.GetName())
	}
	return nil
}

func (c *scriptedCluster) Exists(_ context.Context, _ string, obj generators.Object) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.objects[obj.GetName()], nil
}

func (c *scriptedCluster) Read(context.Context, string) (*status.Objects, []status.MiniCluster, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.objects) == 0 {
		return &status.Objects{}, nil, nil
	}
	s := c.script[min(c.reads, len(c.script)-1)]
	c.reads++
	if s.mc == nil {
		return &s.objs, nil, nil
	}
	return &s.objs, []status.MiniCluster{*s.mc}, nil
}

// brokerPod is a broker pod of Job job: its view init container and its application container,
// each with its image ID once it started, or waiting for the reason.
func brokerPod(job string, rank int, started bool, waiting string) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: job + "-" + string(rune('0'+rank)), Labels: map[string]string{batchv1.JobNameLabel: job}},
		Spec:       corev1.PodSpec{InitContainers: []corev1.Container{{Name: "flux-view"}}, Containers: []corev1.Container{{Name: "mc"}}},
	}
	for _, name := range []string{"flux-view", "mc"} {
		st := corev1.ContainerStatus{Name: name}
		switch {
		case started:
			st.ImageID = "sha256:" + name
		case waiting != "":
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting, Message: "Back-off pulling image \"no.such/image:1\""}
		}
		if name == "flux-view" {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, st)
		} else {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
		}
	}
	return p
}

// smokeRun is a Smoke of the hello-world render at size 2 against cluster.
func smokeRun(t *testing.T, cluster *scriptedCluster) *Smoke {
	t.Helper()
	r := render(t, strings.Replace(helloWorld, "size: 4", "size: 2", 1))
	return &Smoke{API: cluster, Render: r, Timeout: 5 * time.Second, Poll: time.Millisecond, DeleteTimeout: 5 * time.Second}
}

// statuses are the results' checks and statuses, "check=Status".
func statuses(results []Result) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.Check+"="+string(r.Status))
	}
	return out
}

func TestSmokePasses(t *testing.T) {
	mc := func(phase status.Phase, cert status.Certificate, joined int32) *status.MiniCluster {
		return &status.MiniCluster{Name: "mc", Phase: phase, Certificate: cert, Joined: joined, Size: 2, KeygenJob: "mc-keygen", BrokerJob: "mc-broker",
			Nodes: []string{"node-a", "node-b"}}
	}
	waiting := status.Objects{Pods: []corev1.Pod{brokerPod("mc-broker", 0, false, ""), brokerPod("mc-broker", 1, false, "")}}
	started := status.Objects{Pods: []corev1.Pod{brokerPod("mc-broker", 0, true, ""), brokerPod("mc-broker", 1, true, "")}}
	cluster := &scriptedCluster{script: []snapshot{
		{mc: mc(status.PhaseWaitingForCertificate, status.CertificateMissing, 0)},
		{objs: waiting, mc: mc(status.PhaseStarting, status.CertificatePresent, 0)},
		{objs: started, mc: mc(status.PhaseStarting, status.CertificatePresent, 1)},
		{objs: started, mc: mc(status.PhaseRunning, status.CertificatePresent, 2)},
		{objs: started, mc: mc(status.PhaseSucceeded, status.CertificatePresent, 0)},
	}}
	s := smokeRun(t, cluster)
	var progress []string
	s.Progress = func(r Result) { progress = append(progress, r.Check) }
	results := s.Run(context.Background())

	want := []string{"smoke-create=Passed", "smoke-keygen=Passed", "smoke-pull=Passed", "smoke-join=Passed", "smoke-command=Passed", "smoke-delete=Passed"}
	if got := statuses(results); !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v\n%+v", got, want, results)
	}
	if !slices.Equal(progress, []string{SmokeCreate, SmokeKeygen, SmokePull, SmokeJoin, SmokeCommand, SmokeDelete}) {
		t.Errorf("progress reported %v", progress)
	}
	if !strings.Contains(results[3].Message, "2 of 2 brokers joined, on nodes node-a, node-b") {
		t.Errorf("join message: %s", results[3].Message)
	}
	// Everything created is deleted, newest first.
	if len(cluster.created) != len(s.Render.Objects) || !slices.Equal(cluster.deleted, reversed(cluster.created)) {
		t.Errorf("created %v, deleted %v", cluster.created, cluster.deleted)
	}
	if len(cluster.objects) != 0 {
		t.Errorf("left behind: %v", cluster.objects)
	}
}

// reversed is s from its end.
func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// A command that completes between two reads passes every step at once: its pods may already be
// gone.
func TestSmokeFastCommand(t *testing.T) {
	cluster := &scriptedCluster{script: []snapshot{
		{mc: &status.MiniCluster{Name: "mc", Phase: status.PhaseSucceeded, Certificate: status.CertificatePresent, Size: 2, Joined: 2, KeygenJob: "mc-keygen", BrokerJob: "mc-broker"}},
	}}
	results := smokeRun(t, cluster).Run(context.Background())
	for _, r := range results {
		if r.Status != Passed {
			t.Errorf("%s: %s: %s", r.Check, r.Status, r.Message)
		}
	}
}

func TestSmokeImagePullFails(t *testing.T) {
	backoff := status.Objects{Pods: []corev1.Pod{brokerPod("mc-broker", 0, false, "ImagePullBackOff"), brokerPod("mc-broker", 1, false, "ImagePullBackOff")}}
	cluster := &scriptedCluster{script: []snapshot{
		{objs: backoff, mc: &status.MiniCluster{Name: "mc", Phase: status.PhaseStarting, Certificate: status.CertificatePresent, Size: 2, KeygenJob: "mc-keygen", BrokerJob: "mc-broker",
			Reason: `broker pod mc-broker-0 cannot pull image "no.such/image:1": Back-off pulling image`}},
	}}
	results := smokeRun(t, cluster).Run(context.Background())
	want := []string{"smoke-create=Passed", "smoke-keygen=Passed", "smoke-pull=Failed", "smoke-join=Unknown", "smoke-command=Unknown", "smoke-delete=Passed"}
	if got := statuses(results); !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	if pull := results[2]; !strings.Contains(pull.Message, `"no.such/image:1"`) || !strings.Contains(pull.Fix, "--image") {
		t.Errorf("the pull step does not name the image and the fix: %+v", pull)
	}
	if len(cluster.objects) != 0 {
		t.Errorf("left behind: %v", cluster.objects)
	}
}

// Without a status reason, the failure names the container and the kubelet's message.
func TestSmokePullFailureWithoutReason(t *testing.T) {
	objs := &status.Objects{Pods: []corev1.Pod{brokerPod("mc-broker", 0, true, ""), brokerPod("mc-broker", 1, false, "InvalidImageName")}}
	p := smokeProgress(objs, &status.MiniCluster{Certificate: status.CertificatePresent, KeygenJob: "k", BrokerJob: "mc-broker", Phase: status.PhaseStarting}, 2)
	if p.done != 1 || !strings.Contains(p.failed, "pod mc-broker-1, container flux-view: InvalidImageName") {
		t.Errorf("progress %+v", p)
	}
}

func TestSmokeFailedJob(t *testing.T) {
	cluster := &scriptedCluster{script: []snapshot{
		{objs: status.Objects{Pods: []corev1.Pod{brokerPod("mc-broker", 0, true, ""), brokerPod("mc-broker", 1, true, "")}},
			mc: &status.MiniCluster{Name: "mc", Phase: status.PhaseFailed, Certificate: status.CertificatePresent, Size: 2, Joined: 2, KeygenJob: "k", BrokerJob: "mc-broker",
				Reason: "the command exited 127 on rank 1"}},
	}}
	results := smokeRun(t, cluster).Run(context.Background())
	want := []string{"smoke-create=Passed", "smoke-keygen=Passed", "smoke-pull=Passed", "smoke-join=Passed", "smoke-command=Failed", "smoke-delete=Passed"}
	if got := statuses(results); !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	if !strings.Contains(results[4].Message, "exited 127 on rank 1") {
		t.Errorf("command step: %s", results[4].Message)
	}
}

// Interrupted (Ctrl-C) or out of time, the step under way fails with what status says, and
// everything created is deleted all the same.
func TestSmokeInterruptedDeletes(t *testing.T) {
	cluster := &scriptedCluster{script: []snapshot{
		{mc: &status.MiniCluster{Name: "mc", Phase: status.PhaseWaitingForCertificate, Certificate: status.CertificateMissing, Size: 2, KeygenJob: "k", BrokerJob: "mc-broker",
			Reason: "keygen pod k-x is Pending: 0/3 nodes are available"}},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	s := smokeRun(t, cluster)
	s.Progress = func(r Result) {
		if r.Check == SmokeCreate {
			cancel()
		}
	}
	results := s.Run(ctx)
	want := []string{"smoke-create=Passed", "smoke-keygen=Failed", "smoke-pull=Unknown", "smoke-join=Unknown", "smoke-command=Unknown", "smoke-delete=Passed"}
	if got := statuses(results); !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	if k := results[1].Message; !strings.Contains(k, "interrupted") || !strings.Contains(k, "0/3 nodes are available") {
		t.Errorf("keygen step: %s", k)
	}
	if len(cluster.objects) != 0 {
		t.Errorf("left behind: %v", cluster.objects)
	}

	s = smokeRun(t, &scriptedCluster{script: cluster.script})
	s.Timeout = 20 * time.Millisecond
	results = s.Run(context.Background())
	if k := results[1]; k.Status != Failed || !strings.Contains(k.Message, "the time is up (--timeout 20ms)") {
		t.Errorf("keygen step at the timeout: %+v", k)
	}
}

func TestSmokeCreateFails(t *testing.T) {
	cluster := &scriptedCluster{}
	s := smokeRun(t, cluster)
	job := s.Render.brokerJob().Name
	cluster.failCreate = job
	results := s.Run(context.Background())
	if results[0].Status != Failed || !strings.Contains(results[0].Message, "creating Job "+job+": jobs.batch is forbidden") {
		t.Errorf("create: %+v", results[0])
	}
	for _, r := range results[1:5] {
		if r.Status != Unknown {
			t.Errorf("%s: %s, want Unknown", r.Check, r.Status)
		}
	}
	if last := results[len(results)-1]; last.Check != SmokeDelete || last.Status != Passed {
		t.Errorf("delete: %+v", last)
	}
	if !slices.Equal(cluster.deleted, reversed(cluster.created)) || len(cluster.objects) != 0 {
		t.Errorf("created %v, deleted %v, left %v", cluster.created, cluster.deleted, cluster.objects)
	}
}

func TestSmokeDeleteLeavesSomething(t *testing.T) {
	cluster := &scriptedCluster{script: []snapshot{
		{mc: &status.MiniCluster{Name: "mc", Phase: status.PhaseSucceeded, Certificate: status.CertificatePresent, Size: 2, Joined: 2, KeygenJob: "k", BrokerJob: "mc-broker"}},
	}}
	s := smokeRun(t, cluster)
	cluster.keep = s.Render.brokerJob().Name
	s.DeleteTimeout = 20 * time.Millisecond
	results := s.Run(context.Background())
	last := results[len(results)-1]
	if last.Status != Failed || !strings.Contains(last.Message, "Job "+cluster.keep) || !strings.Contains(last.Fix, "kubectl delete -n hpc") {
		t.Errorf("delete: %+v", last)
	}
}
