package status

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
)

// KeygenImageHelp points a user whose keygen image cannot be pulled to how to make it available.
const KeygenImageHelp = "see docs/generated-objects.md, \"Which image runs it\", to build and load the image or use the view image"

// commandLogLines is how many of the main broker's last log lines a failed command's reason quotes.
const commandLogLines = 3

// joinLogLines is how much of a broker's log is searched for its latest join report: the report
// comes every minute, and flux's own lines come between.
const joinLogLines = 40

// eventKey names the object an event is about.
type eventKey struct{ kind, namespace, name string }

// indexEvents keeps the events by the object they are about, newest first.
func indexEvents(events []corev1.Event) map[eventKey][]*corev1.Event {
	out := map[eventKey][]*corev1.Event{}
	for i := range events {
		e := &events[i]
		k := eventKey{e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name}
		out[k] = append(out[k], e)
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b *corev1.Event) int { return eventTime(b).Compare(eventTime(a)) })
	}
	return out
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// reasoner finds the first cause of an unhealthy phase.
type reasoner struct {
	ctx       context.Context
	g         *group
	o         observation
	events    map[eventKey][]*corev1.Event
	pvcs      []corev1.PersistentVolumeClaim
	logs      LogReader
	namespace string
	// workloads are Kueue's Workloads, read only when a MiniCluster is Queued.
	workloads           []kueue.Workload
	workloadsUnreadable string
}

// latestEvent is the newest event of the given reason about an object.
func (r *reasoner) latestEvent(kind, name, reason string) *corev1.Event {
	for _, e := range r.events[eventKey{kind, r.namespace, name}] {
		if e.Reason == reason {
			return e
		}
	}
	return nil
}

func (r *reasoner) reason() string {
	o := r.o
	switch o.phase {
	case PhaseFailed:
		return r.failed() + r.endsWhenStuckPodFails()
	case PhaseWaitingForCertificate:
		return firstOf(r.keygenSuspended, r.keygenProblem, r.certificateMount, func() string {
			if o.keygen != nil {
				return fmt.Sprintf("the keygen Job %s has not created the certificate yet", o.keygen.Name)
			}
			return ""
		})
	case PhasePending:
		return "no broker Job: it is applied after the keygen Job completes, or it was not applied"
	case PhaseQueued:
		return r.queued()
	}
	return firstOf(r.nodeLost, r.pvcPending, r.unschedulable, r.imagePull, r.certificateMount, r.failedCreate, r.rejoining, r.notJoined, func() string {
		size := ptrValue(o.broker.Spec.Parallelism)
		if n := int32(len(o.brokerPods)); n < size {
			return fmt.Sprintf("%d of %d broker pods of Job %s exist", n, size, o.broker.Name)
		}
		return fmt.Sprintf("%d of %d brokers have joined", o.joined, size)
	})
}

func firstOf(finders ...func() string) string {
	for _, f := range finders {
		if s := f(); s != "" {
			return s
		}
	}
	return ""
}

// keygenSuspended: the keygen Job is suspended, which only Kueue does to it, where it manages
// Jobs without a queue name (docs/kueue.md).
func (r *reasoner) keygenSuspended() string {
	if j := r.o.keygen; j != nil && j.Spec.Suspend != nil && *j.Spec.Suspend {
		return fmt.Sprintf("the keygen Job %s is suspended: Kueue holds it where it manages Jobs without a queue name "+
			"(manageJobsWithoutQueueName); run the MiniCluster in a namespace its managedJobsNamespaceSelector leaves out", j.Name)
	}
	return ""
}

// keygenProblem: the keygen pod cannot pull its image, cannot be scheduled or failed; or the
// keygen Job failed.
func (r *reasoner) keygenProblem() string {
	for _, p := range r.o.keygenPods {
		if s := r.podImagePull(p, func(string) string { return "the keygen image" }); s != "" {
			return s + "; " + KeygenImageHelp
		}
		if s := unschedulable(p); s != "" {
			return s
		}
		for _, c := range p.Status.ContainerStatuses {
			t := c.State.Terminated
			if t == nil {
				t = c.LastTerminationState.Terminated
			}
			if t != nil && t.ExitCode != 0 {
				line := lastLine(t.Message)
				if line == "" {
					line = lastLine(r.log(p, c.Name, 1))
				}
				return fmt.Sprintf("keygen pod %s failed (exit status %d): %s", p.Name, t.ExitCode, line)
			}
		}
	}
	if c := JobCondition(r.o.keygen, batchv1.JobFailed); c != nil {
		return fmt.Sprintf("keygen Job %s failed: %s", r.o.keygen.Name, c.Message)
	}
	if r.o.keygen != nil && len(r.o.keygenPods) == 0 {
		if e := r.latestEvent("Job", r.o.keygen.Name, "FailedCreate"); e != nil {
			return fmt.Sprintf("the Job controller cannot create the pod of the keygen Job %s: %s", r.o.keygen.Name, e.Message)
		}
	}
	return ""
}

// certificateMount: kubelet cannot mount the certificate into a broker pod. A pod whose volumes
// are mounted by now is past it: its FailedMount events stay for an hour after the certificate came.
func (r *reasoner) certificateMount() string {
	for _, p := range r.o.brokerPods {
		if volumesMounted(p) {
			continue
		}
		if e := r.latestEvent("Pod", p.Name, "FailedMount"); e != nil {
			return fmt.Sprintf("the certificate is missing: broker pod %s: %s", p.Name, e.Message)
		}
	}
	return ""
}

// pvcPending: a broker pod's PersistentVolumeClaim is not bound.
func (r *reasoner) pvcPending() string {
	for _, p := range r.o.brokerPods {
		if volumesMounted(p) {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			name := v.PersistentVolumeClaim.ClaimName
			i := slices.IndexFunc(r.pvcs, func(c corev1.PersistentVolumeClaim) bool { return c.Name == name && c.Namespace == r.namespace })
			switch {
			case i < 0:
				return fmt.Sprintf("broker pod %s needs PersistentVolumeClaim %s, which does not exist", p.Name, name)
			case r.pvcs[i].Status.Phase == corev1.ClaimPending:
				s := fmt.Sprintf("PersistentVolumeClaim %s of broker pod %s is Pending", name, p.Name)
				if es := r.events[eventKey{"PersistentVolumeClaim", r.namespace, name}]; len(es) > 0 {
					s += ": " + es[0].Message
				}
				return s
			}
		}
	}
	return ""
}

func (r *reasoner) unschedulable() string {
	for _, p := range r.o.brokerPods {
		if s := unschedulable(p); s != "" {
			return s
		}
	}
	return ""
}

// unschedulable is the scheduler's message about a pod it cannot place.
func unschedulable(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message)
		}
	}
	return ""
}

// imagePull: a broker pod cannot pull the view image or a container's image.
func (r *reasoner) imagePull() string {
	view := r.o.broker.Annotations[contract.AnnotationViewImage]
	for _, p := range r.o.brokerPods {
		s := r.podImagePull(p, func(image string) string {
			if image == view {
				return "the view image"
			}
			return "image"
		})
		if s != "" {
			return s
		}
	}
	return ""
}

// pullFailures are the waiting reasons of a container whose image cannot be pulled.
var pullFailures = []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}

// podImagePull says which image of a pod cannot be pulled and the registry's message: kubelet's
// Failed event names the image and quotes the registry; the container's waiting message is used
// when the event is gone.
func (r *reasoner) podImagePull(p *corev1.Pod, what func(image string) string) string {
	for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		w := c.State.Waiting
		if w == nil || !slices.Contains(pullFailures, w.Reason) {
			continue
		}
		image := specImage(p, c.Name, c.Image)
		msg := w.Message
		for _, e := range r.events[eventKey{"Pod", r.namespace, p.Name}] {
			if e.Reason == "Failed" && strings.Contains(e.Message, image) {
				msg = e.Message
				break
			}
		}
		return fmt.Sprintf("%s %s cannot be pulled (pod %s, container %s): %s", what(image), image, p.Name, c.Name, msg)
	}
	return ""
}

// specImage is the image the pod's spec gives the container (the status may hold a resolved one).
func specImage(p *corev1.Pod, container, fallback string) string {
	for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
		if c.Name == container {
			return c.Image
		}
	}
	return fallback
}

// failedCreate: the Job controller cannot create the broker pods (a quota, an admission webhook,
// Pod Security).
func (r *reasoner) failedCreate() string {
	if e := r.latestEvent("Job", r.o.broker.Name, "FailedCreate"); e != nil && int32(len(r.o.brokerPods)) < ptrValue(r.o.broker.Spec.Parallelism) {
		return fmt.Sprintf("the Job controller cannot create the pods of Job %s: %s", r.o.broker.Name, e.Message)
	}
	return ""
}

// rejoining: rank 0's broker started again (a new pod, or its container restarted) after workers
// had joined the one before, and they have not joined the new one yet.
func (r *reasoner) rejoining() string {
	var pods []string
	for _, p := range r.o.brokerPods {
		if r.o.brokerState(p) == BrokerRejoining {
			pods = append(pods, fmt.Sprintf("%s (rank %d)", p.Name, index(p)))
		}
	}
	if len(pods) == 0 {
		return ""
	}
	by := ""
	if r.o.broker.Labels[contract.LabelLifetime] != contract.LifetimeCompletes {
		by = "; the workers of a MiniCluster that runs until deleted join it by themselves"
	}
	return fmt.Sprintf("rank 0's broker (pod %s) started again after broker pods %s had joined the one before it, and they have not joined it yet%s",
		r.o.brokerPods[0].Name, strings.Join(pods, ", "), by)
}

// notJoined: a broker pod runs and has not joined; its broker script's latest join report says
// where it is stuck.
func (r *reasoner) notJoined() string {
	for _, p := range r.o.brokerPods {
		if p.Status.Phase != corev1.PodRunning || podReady(p) {
			continue
		}
		for _, c := range p.Spec.Containers {
			log := r.log(p, c.Name, joinLogLines)
			lines := strings.Split(log, "\n")
			for i := len(lines) - 1; i >= 0; i-- {
				if strings.Contains(lines[i], contract.NotJoinedReport) || strings.Contains(lines[i], contract.NotStartedReport) {
					return fmt.Sprintf("broker pod %s has not joined: %s", p.Name, strings.TrimSpace(lines[i]))
				}
			}
		}
		return fmt.Sprintf("broker pod %s has not joined yet (its log reports from 30 s on)", p.Name)
	}
	return ""
}

// failed: the broker Job failed. A container that ended with a status other than 0 and 143 (a pod
// stopped from outside) is the command's, or a broker script's that failed: its exit status,
// termination message and last log lines. Otherwise the Job's own condition (deadline, backoff
// limit).
func (r *reasoner) failed() string {
	pods := slices.Clone(r.o.brokerPods)
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int { return index(a) - index(b) })
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			t := c.State.Terminated
			if t == nil || t.ExitCode == 0 || t.ExitCode == 143 {
				continue
			}
			s := fmt.Sprintf("pod %s container %s exited with status %d", p.Name, c.Name, t.ExitCode)
			if m := strings.TrimSpace(t.Message); m != "" {
				s += ": " + m
			}
			if log := strings.TrimSpace(r.log(p, c.Name, commandLogLines)); log != "" {
				s += "; last lines of its log: " + strings.Join(strings.Split(log, "\n"), " | ")
			}
			return s
		}
	}
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobFailureTarget} {
		if c := JobCondition(r.o.broker, t); c != nil {
			return fmt.Sprintf("Job %s failed (%s): %s", r.o.broker.Name, c.Reason, c.Message)
		}
	}
	return ""
}

// log is a container's last lines, "" when it cannot be read (a reason never fails for want of it).
func (r *reasoner) log(p *corev1.Pod, container string, lines int64) string {
	if r.logs == nil {
		return ""
	}
	s, err := r.logs(r.ctx, p.Namespace, p.Name, container, lines)
	if err != nil {
		return ""
	}
	return strings.TrimRight(s, "\n")
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return strings.TrimSpace(s)
}

// queued: what Kueue says of the broker Job's Workload (the Workload Kueue made for it, found by
// its owner reference): why it is not admitted yet, why it was evicted, or that it is admitted and
// the Job about to be resumed.
func (r *reasoner) queued() string {
	j := r.o.broker
	queue := fmt.Sprintf("LocalQueue %s", j.Labels[kueueconstants.QueueLabel])
	if r.workloadsUnreadable != "" {
		return fmt.Sprintf("queued by Kueue in %s; its Workload cannot be read: %s", queue, r.workloadsUnreadable)
	}
	w := r.workloadOf(j)
	if w == nil {
		return fmt.Sprintf("suspended, for Kueue's %s, and Kueue has made no Workload of Job %s: is Kueue running, and does it manage this namespace?", queue, j.Name)
	}
	condition := func(t string) *metav1.Condition {
		for i := range w.Status.Conditions {
			if c := &w.Status.Conditions[i]; c.Type == t {
				return c
			}
		}
		return nil
	}
	where := queue
	if w.Status.Admission != nil {
		where = fmt.Sprintf("ClusterQueue %s", w.Status.Admission.ClusterQueue)
	}
	if c := condition(kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return fmt.Sprintf("admitted by Kueue in %s (Workload %s); Kueue resumes the Job", where, w.Name)
	}
	prefix := fmt.Sprintf("queued by Kueue in %s (Workload %s)", queue, w.Name)
	if c := condition(kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		prefix = fmt.Sprintf("evicted by Kueue (%s: %s) and queued again in %s (Workload %s)", c.Reason, c.Message, queue, w.Name)
	}
	if c := condition(kueue.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionTrue {
		return fmt.Sprintf("%s: quota reserved in %s, waiting for its admission checks", prefix, where)
	} else if c != nil && c.Message != "" {
		return fmt.Sprintf("%s: %s", prefix, c.Message)
	}
	return prefix
}

// workloadOf is the Workload Kueue made for job: the one it owns.
func (r *reasoner) workloadOf(job *batchv1.Job) *kueue.Workload {
	for i := range r.workloads {
		w := &r.workloads[i]
		if w.Namespace != job.Namespace {
			continue
		}
		for _, ref := range w.OwnerReferences {
			if ref.UID == job.UID && job.UID != "" {
				return w
			}
		}
	}
	return nil
}
