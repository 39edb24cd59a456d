package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// The checks of a smoke run (check --smoke), one per step, in the order they run.
const (
	SmokeCreate  = "smoke-create"
	SmokeKeygen  = "smoke-keygen"
	SmokePull    = "smoke-pull"
	SmokeJoin    = "smoke-join"
	SmokeCommand = "smoke-command"
	SmokeDelete  = "smoke-delete"
)

// smokeSteps are the steps between create and delete, in order.
var smokeSteps = []string{SmokeKeygen, SmokePull, SmokeJoin, SmokeCommand}

// SmokeAPI is what a smoke run does in the cluster. SmokeREST is the implementation; tests script
// a cluster's answers.
type SmokeAPI interface {
	// Create creates obj in namespace.
	Create(ctx context.Context, namespace string, obj generators.Object) error
	// Delete deletes obj from namespace, with the objects it owns; one already gone is no error.
	Delete(ctx context.Context, namespace string, obj generators.Object) error
	// Exists tells whether obj is still in namespace.
	Exists(ctx context.Context, namespace string, obj generators.Object) (bool, error)
	// Read reads the MiniCluster as status does.
	Read(ctx context.Context, name string) (*status.Objects, []status.MiniCluster, error)
}

// Smoke is one smoke run: a rendered MiniCluster that runs a command on every rank and completes.
type Smoke struct {
	API SmokeAPI
	// Render is the MiniCluster to run, rendered; its objects are created in Render.Namespace.
	Render *Render
	// Timeout bounds the steps from create to the command's end (not the deletion).
	Timeout time.Duration
	// Poll is how often the MiniCluster is read.
	Poll time.Duration
	// DeleteTimeout bounds the deletion, which runs also after ctx ended.
	DeleteTimeout time.Duration
	// Progress, if set, gets each result as soon as its step ends.
	Progress func(Result)
}

// imagePullFailures are the waiting reasons of a container whose image the kubelet cannot pull
// (or may not): the kubelet keeps retrying ImagePullBackOff, so the step fails at once rather than
// at the timeout. A first ErrImagePull may be a passing failure, and backs off to one of these.
var imagePullFailures = []string{"ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}

// Run creates the render's objects, follows the MiniCluster through its steps, and deletes what it
// created, also when a step fails or ctx ends. It returns one result per step: a step that was not
// reached is Unknown.
func (s *Smoke) Run(ctx context.Context) []Result {
	r := s.Render
	var results []Result
	add := func(check string, st Status, msg, fix string) {
		res := Result{Check: check, Scope: r.Scope(), File: r.File, Status: st, Message: msg, Fix: fix}
		results = append(results, res)
		if s.Progress != nil {
			s.Progress(res)
		}
	}

	created, err := s.create(ctx)
	if err != nil {
		add(SmokeCreate, Failed, err.Error(), "check without --smoke says which rights or inputs are missing")
	} else {
		add(SmokeCreate, Passed, fmt.Sprintf("created the %d objects of MiniCluster %s (size %d) in namespace %s",
			len(created), r.Name, brokerSize(r), r.Namespace), "")
		s.follow(ctx, add)
	}
	for _, step := range smokeSteps {
		if !slices.ContainsFunc(results, func(res Result) bool { return res.Check == step }) {
			add(step, Unknown, "not reached: an earlier step did not pass", "")
		}
	}

	// The deletion gets its own time: the run's may have ended (Ctrl-C, the timeout).
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.DeleteTimeout)
	defer cancel()
	start := time.Now()
	if left := s.delete(dctx, created); len(left) > 0 {
		add(SmokeDelete, Failed, fmt.Sprintf("still in namespace %s after %s: %s", r.Namespace, s.DeleteTimeout, strings.Join(left, ", ")),
			fmt.Sprintf("kubectl delete -n %s jobs,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings -l %s=%s",
				r.Namespace, contract.LabelMiniCluster, r.Name))
	} else if len(created) > 0 {
		add(SmokeDelete, Passed, fmt.Sprintf("deleted everything it created, and the pods and certificate made from it, in %.1f s",
			time.Since(start).Seconds()), "")
	}
	return results
}

// brokerSize is the broker Job's parallelism.
func brokerSize(r *Render) int32 {
	if j := r.brokerJob(); j != nil && j.Spec.Parallelism != nil {
		return *j.Spec.Parallelism
	}
	return 0
}

// create creates the render's objects in order and returns those created; on an error it deletes
// them again and says which object failed.
func (s *Smoke) create(ctx context.Context) ([]generators.Object, error) {
	var created []generators.Object
	for _, o := range s.Render.Objects {
		if err := s.API.Create(ctx, s.Render.Namespace, o); err != nil {
			return created, fmt.Errorf("creating %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		created = append(created, o)
	}
	return created, nil
}

// follow reads the MiniCluster every Poll and adds each step's result as it ends, until the command
// completes, a step fails, or the time is up.
func (s *Smoke) follow(ctx context.Context, add func(check string, st Status, msg, fix string)) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	begin := time.Now()
	last := begin
	step := 0
	var mc *status.MiniCluster
	for step < len(smokeSteps) {
		objs, rows, err := s.API.Read(ctx, s.Render.Name)
		if err == nil {
			mc = nil
			if len(rows) > 0 {
				mc = &rows[0]
			}
			p := smokeProgress(objs, mc, brokerSize(s.Render))
			for ; step < p.done; step++ {
				now := time.Now()
				add(smokeSteps[step], Passed, fmt.Sprintf("%s, %.1f s after the step before (%.1f s in all)",
					smokeDone(smokeSteps[step], mc), now.Sub(last).Seconds(), now.Sub(begin).Seconds()), "")
				last = now
			}
			if p.failed != "" && step < len(smokeSteps) {
				add(smokeSteps[step], Failed, p.failed, smokeFix(smokeSteps[step]))
				return
			}
			if step == len(smokeSteps) {
				return
			}
		}
		select {
		case <-ctx.Done():
			what := "the time is up (--timeout " + s.Timeout.String() + ")"
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				what = "interrupted"
			}
			msg := fmt.Sprintf("not done when %s, %.1f s after the step before", what, time.Since(last).Seconds())
			switch {
			case mc != nil && mc.Reason != "":
				msg += ": " + string(mc.Phase) + ": " + mc.Reason
			case mc != nil:
				msg += ": phase " + string(mc.Phase)
			case err != nil:
				msg += ": " + err.Error()
			}
			add(smokeSteps[step], Failed, msg, smokeFix(smokeSteps[step]))
			return
		case <-time.After(s.Poll):
		}
	}
}

// progress is how far a MiniCluster has come: done steps of smokeSteps have ended, and failed,
// if set, says why the next one cannot.
type progress struct {
	done   int
	failed string
}

// smokeProgress reads the steps from what status reads: the certificate (keygen), every container
// of size broker pods started from its image (pull), every broker joined (join), the broker Job
// completed (command: the command runs on every rank, and the Job completes only if it succeeded).
func smokeProgress(objs *status.Objects, mc *status.MiniCluster, size int32) progress {
	if mc == nil {
		return progress{}
	}
	var p progress
	if mc.Phase == status.PhaseFailed {
		p.failed = mc.Reason
	}
	// A later step seen done counts the earlier ones done too: a command that completes between
	// two reads leaves its pods Completed (or gone), its certificate there.
	steps := []func() bool{
		func() bool {
			return mc.Certificate == status.CertificatePresent || mc.KeygenJob == "" && mc.BrokerJob != ""
		},
		func() bool { return pulled(objs, mc.BrokerJob, size) },
		func() bool { return size > 0 && mc.Joined >= size },
		func() bool { return mc.Phase == status.PhaseSucceeded },
	}
	for i, ok := range steps {
		if ok() {
			p.done = i + 1
		}
	}
	if p.failed == "" && p.done == 1 {
		if why := pullFailure(objs, mc.BrokerJob); why != "" {
			p.failed = cmp.Or(mc.Reason, why)
		}
	}
	if p.failed == "" && p.done == 0 {
		if j := keygenJob(objs, mc.KeygenJob); status.JobCondition(j, batchv1.JobFailed) != nil {
			p.failed = cmp.Or(mc.Reason, "keygen Job "+j.Name+" failed")
		}
	}
	return p
}

// brokerPods are the pods of the broker Job job.
func brokerPods(objs *status.Objects, job string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range objs.Pods {
		p := &objs.Pods[i]
		if job != "" && p.Labels[batchv1.JobNameLabel] == job {
			out = append(out, p)
		}
	}
	return out
}

// pulled tells whether size broker pods have every container started from its image (the kubelet
// sets a container status's imageID once it runs the pulled image).
func pulled(objs *status.Objects, job string, size int32) bool {
	pods := brokerPods(objs, job)
	if size == 0 || int32(len(pods)) < size {
		return false
	}
	n := int32(0)
	for _, p := range pods {
		specs := len(p.Spec.InitContainers) + len(p.Spec.Containers)
		statuses := slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses)
		if len(statuses) < specs {
			continue
		}
		if !slices.ContainsFunc(statuses, func(c corev1.ContainerStatus) bool { return c.ImageID == "" }) {
			n++
		}
	}
	return n >= size
}

// pullFailure says which container of a broker pod cannot get its image, if one cannot.
func pullFailure(objs *status.Objects, job string) string {
	for _, p := range brokerPods(objs, job) {
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			if w := c.State.Waiting; w != nil && slices.Contains(imagePullFailures, w.Reason) {
				return fmt.Sprintf("pod %s, container %s: %s: %s", p.Name, c.Name, w.Reason, w.Message)
			}
		}
	}
	return ""
}

func keygenJob(objs *status.Objects, name string) *batchv1.Job {
	for i := range objs.Jobs {
		if objs.Jobs[i].Name == name {
			return &objs.Jobs[i]
		}
	}
	return nil
}

// smokeDone says what a passed step saw.
func smokeDone(step string, mc *status.MiniCluster) string {
	switch step {
	case SmokeKeygen:
		if mc.KeygenJob == "" {
			return "no keygen Job: the MiniCluster brings its certificate"
		}
		return "keygen Job " + mc.KeygenJob + " made the certificate"
	case SmokePull:
		images := mc.ViewImage
		if images != "" {
			images = " (view " + images + ")"
		}
		return fmt.Sprintf("every container of the %d broker pods started from its image%s", mc.Size, images)
	case SmokeJoin:
		return fmt.Sprintf("%d of %d brokers joined, on nodes %s", mc.Size, mc.Size, strings.Join(mc.Nodes, ", "))
	case SmokeCommand:
		return "the command ran on every rank and the broker Job " + mc.BrokerJob + " completed"
	}
	return step
}

// smokeFix says what to do when a step did not pass.
func smokeFix(step string) string {
	switch step {
	case SmokeKeygen:
		return "the keygen pod runs minicluster-fn's image: make it pullable here (--keygen-image of render names another), and see its pod's events"
	case SmokePull:
		return "make the image pullable from this cluster's nodes (the name, a registry they reach, imagePullSecrets), or give another with --image or --view-image"
	case SmokeJoin:
		return "brokers join rank 0 through the headless Service's DNS name and port 8050: the cluster DNS and pod-to-pod traffic between nodes must work (minicluster-fn status NAME --brokers while it runs)"
	case SmokeCommand:
		return "the command failed on a rank: see the broker pods' logs (kubectl logs -l " + contract.LabelMiniCluster + "=NAME -c <container>)"
	}
	return ""
}

// delete deletes the created objects, newest first, and waits until they and what they made (the
// broker and keygen pods, the certificate, owned by the Service) are gone. It returns what is left.
func (s *Smoke) delete(ctx context.Context, created []generators.Object) []string {
	var left []string
	for _, o := range slices.Backward(created) {
		if err := s.API.Delete(ctx, s.Render.Namespace, o); err != nil {
			left = append(left, fmt.Sprintf("%s %s (%v)", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err))
		}
	}
	if len(left) > 0 || len(created) == 0 {
		return left
	}
	for {
		left = s.remaining(ctx, created)
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return left
		case <-time.After(s.Poll):
		}
	}
}

// remaining names what of the run is still in the namespace.
func (s *Smoke) remaining(ctx context.Context, created []generators.Object) []string {
	var left []string
	for _, o := range created {
		ok, err := s.API.Exists(ctx, s.Render.Namespace, o)
		if err != nil || ok {
			left = append(left, o.GetObjectKind().GroupVersionKind().Kind+" "+o.GetName())
		}
	}
	objs, _, err := s.API.Read(ctx, s.Render.Name)
	if err != nil {
		return append(left, "(cannot read the MiniCluster's pods: "+err.Error()+")")
	}
	for _, p := range objs.Pods {
		left = append(left, "Pod "+p.Name)
	}
	for _, j := range objs.Jobs {
		if !slices.Contains(left, "Job "+j.Name) {
			left = append(left, "Job "+j.Name)
		}
	}
	for _, c := range objs.ConfigMaps {
		if !slices.Contains(left, "ConfigMap "+c.Name) {
			left = append(left, "ConfigMap "+c.Name)
		}
	}
	return left
}

// SmokeREST is SmokeAPI through the API server: the dynamic client for the render's kinds, and
// status's reads.
type SmokeREST struct {
	dynamic dynamic.Interface
	status  *status.Cluster
}

// NewSmokeREST talks to the API server of cfg, in namespace.
func NewSmokeREST(cfg *rest.Config, namespace string) (*SmokeREST, error) {
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := status.NewCluster(cfg, namespace)
	if err != nil {
		return nil, err
	}
	return &SmokeREST{dynamic: d, status: c}, nil
}

// resource is obj's resource in namespace. The render's kinds are built-in ones, whose plural
// the guess gets right (as the access reviews of kindReviews).
func (s *SmokeREST) resource(namespace string, obj generators.Object) dynamic.ResourceInterface {
	gvk := obj.GetObjectKind().GroupVersionKind()
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return s.dynamic.Resource(plural).Namespace(namespace)
}

func (s *SmokeREST) Create(ctx context.Context, namespace string, obj generators.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetNamespace(namespace)
	_, err = s.resource(namespace, obj).Create(ctx, u, metav1.CreateOptions{FieldManager: "minicluster-fn-check"})
	return err
}

func (s *SmokeREST) Delete(ctx context.Context, namespace string, obj generators.Object) error {
	// Background: the garbage collector deletes what the object owns (a Job's pods, the
	// certificate the Service owns) after it.
	policy := metav1.DeletePropagationBackground
	err := s.resource(namespace, obj).Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (s *SmokeREST) Exists(ctx context.Context, namespace string, obj generators.Object) (bool, error) {
	_, err := s.resource(namespace, obj).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (s *SmokeREST) Read(ctx context.Context, name string) (*status.Objects, []status.MiniCluster, error) {
	objs, err := s.status.Read(ctx, []string{name})
	if err != nil {
		return nil, nil, err
	}
	return objs, status.Summarize(ctx, objs, s.status.Logs), nil
}
