// Package status tells, from the objects a MiniCluster's manifests made in the cluster, what phase
// each MiniCluster is in and, when it is not Ready, Running or Succeeded, why: what `minicluster-fn
// status` and `wait` print. It finds the objects by the labels of api/contract only, and reads no
// more than the namespace's view role grants (no Secret).
//
// Summarize is pure: it works on listed objects, and asks for a pod's log only through the
// LogReader it is given, only for a MiniCluster whose reason needs it.
package status

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
)

// Phase is a MiniCluster's phase, as observed (docs/generated-objects.md defines each).
type Phase string

const (
	// PhasePending: the certificate is there, or there is no keygen Job, and there is no broker Job.
	PhasePending Phase = "Pending"
	// PhaseWaitingForCertificate: the broker pods cannot start before the certificate exists.
	PhaseWaitingForCertificate Phase = "WaitingForCertificate"
	// PhaseStarting: the certificate is there; not every broker has joined yet.
	PhaseStarting Phase = "Starting"
	// PhaseReady: every broker joined a cluster that runs until deleted.
	PhaseReady Phase = "Ready"
	// PhaseRunning: the instance runs the command.
	PhaseRunning Phase = "Running"
	// PhaseSucceeded: the broker Job completed.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed: the broker Job failed.
	PhaseFailed Phase = "Failed"
	// PhaseDegraded: the instance ran, and lost brokers that have not come back.
	PhaseDegraded Phase = "Degraded"
	// PhaseQueued: the broker Job waits in a Kueue queue: Kueue keeps it suspended until its
	// Workload is admitted, and suspends it again when the Workload is evicted (preempted).
	PhaseQueued Phase = "Queued"
)

// Healthy tells whether the phase needs no reason.
func (p Phase) Healthy() bool {
	return p == PhaseReady || p == PhaseRunning || p == PhaseSucceeded
}

// Certificate says whether the certificate exists, as far as the view role can see.
type Certificate string

const (
	CertificatePresent Certificate = "yes"
	CertificateMissing Certificate = "no"
	// CertificateUnknown: nothing seen says (a Secret given inline or by the user, and no broker
	// pod yet).
	CertificateUnknown Certificate = "unknown"
)

// MiniCluster is one row of status.
type MiniCluster struct {
	Namespace string `json:"namespace"`
	// Name is the value of the contract's MiniCluster label.
	Name    string    `json:"name"`
	Phase   Phase     `json:"phase"`
	Joined  int32     `json:"joined"`
	Size    int32     `json:"size"`
	MaxSize int32     `json:"maxSize"`
	Created time.Time `json:"created"`
	// Lifetime is the broker Job's lifetime label.
	Lifetime    string      `json:"lifetime,omitempty"`
	BrokerJob   string      `json:"brokerJob,omitempty"`
	KeygenJob   string      `json:"keygenJob,omitempty"`
	Certificate Certificate `json:"certificate"`
	// ManagedBy is the GitOps object that applied it, e.g. Kustomization/flux-system/apps.
	ManagedBy  string `json:"managedBy,omitempty"`
	ViewSource string `json:"viewSource,omitempty"`
	ViewImage  string `json:"viewImage,omitempty"`
	// Reason is the first cause found of a phase that is not healthy.
	Reason string `json:"reason,omitempty"`
	// Nodes are the nodes its broker pods were scheduled on, in the order of their ranks.
	Nodes []string `json:"nodes,omitempty"`
	// Brokers are the broker Job's pods, by rank.
	Brokers []Broker `json:"brokers,omitempty"`
}

// Objects are what one namespace (or all) holds of MiniClusters, as listed.
type Objects struct {
	// Jobs, Pods and ConfigMaps carry the contract's MiniCluster label.
	Jobs       []batchv1.Job
	Pods       []corev1.Pod
	ConfigMaps []corev1.ConfigMap
	// Events and PersistentVolumeClaims are read only when a MiniCluster needs a reason (Needs).
	Events []corev1.Event
	PVCs   []corev1.PersistentVolumeClaim
	// Workloads are Kueue's, read only when a MiniCluster is Queued; WorkloadsUnreadable says why
	// they could not be read, if so.
	Workloads           []kueue.Workload
	WorkloadsUnreadable string
}

// LogReader returns the last lines of a container's log.
type LogReader func(ctx context.Context, namespace, pod, container string, lines int64) (string, error)

// key identifies one MiniCluster: two kustomize overlays of one MiniCluster in one namespace have
// their own label values (examples/overlay/kustomizeconfig.yaml), so they are two.
type key struct{ namespace, name string }

// group is one MiniCluster's objects.
type group struct {
	brokerJobs, keygenJobs []*batchv1.Job
	pods                   []*corev1.Pod
	curve                  []*corev1.ConfigMap
}

func groupObjects(objs *Objects) map[key]*group {
	groups := map[key]*group{}
	get := func(namespace string, labels map[string]string) *group {
		name := labels[contract.LabelMiniCluster]
		if name == "" {
			return nil
		}
		k := key{namespace, name}
		if groups[k] == nil {
			groups[k] = &group{}
		}
		return groups[k]
	}
	for i := range objs.Jobs {
		j := &objs.Jobs[i]
		g := get(j.Namespace, j.Labels)
		switch {
		case g == nil:
		case j.Labels[contract.LabelComponent] == contract.ComponentBroker:
			g.brokerJobs = append(g.brokerJobs, j)
		case j.Labels[contract.LabelComponent] == contract.ComponentKeygen:
			g.keygenJobs = append(g.keygenJobs, j)
		}
	}
	for i := range objs.Pods {
		if g := get(objs.Pods[i].Namespace, objs.Pods[i].Labels); g != nil {
			g.pods = append(g.pods, &objs.Pods[i])
		}
	}
	for i := range objs.ConfigMaps {
		cm := &objs.ConfigMaps[i]
		if g := get(cm.Namespace, cm.Labels); g != nil && cm.Labels[contract.LabelComponent] == contract.ComponentCurve {
			g.curve = append(g.curve, cm)
		}
	}
	return groups
}

// Needs tells whether any MiniCluster of objs will need events and PersistentVolumeClaims for its
// reason, so that a namespace of healthy MiniClusters costs no list of them.
func Needs(objs *Objects) bool {
	for _, g := range groupObjects(objs) {
		if !g.observe().phase.Healthy() {
			return true
		}
	}
	return false
}

// Queued tells whether any MiniCluster of objs waits in a Kueue queue, so that a cluster without
// Kueue costs no list of Workloads.
func Queued(objs *Objects) bool {
	for _, g := range groupObjects(objs) {
		if g.observe().phase == PhaseQueued {
			return true
		}
	}
	return false
}

// Summarize returns one row per MiniCluster found in objs, sorted by namespace and name.
func Summarize(ctx context.Context, objs *Objects, logs LogReader) []MiniCluster {
	groups := groupObjects(objs)
	ev := indexEvents(objs.Events)
	var out []MiniCluster
	for _, k := range slices.SortedFunc(maps.Keys(groups), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	}) {
		g := groups[k]
		o := g.observe()
		mc := MiniCluster{Namespace: k.namespace, Name: k.name, Phase: o.phase, Joined: o.joined, Certificate: o.cert}
		if j := o.broker; j != nil {
			mc.BrokerJob = j.Name
			mc.Size = ptrValue(j.Spec.Parallelism)
			mc.MaxSize = mc.Size
			if n, err := strconv.Atoi(j.Annotations[contract.AnnotationMaxSize]); err == nil {
				mc.MaxSize = int32(n)
			}
			mc.Lifetime = j.Labels[contract.LabelLifetime]
			mc.ViewImage = j.Annotations[contract.AnnotationViewImage]
			mc.ViewSource = j.Annotations[contract.AnnotationViewSource]
			mc.ManagedBy = managedBy(j.ObjectMeta, k.name)
		}
		if j := o.keygen; j != nil {
			mc.KeygenJob = j.Name
			if mc.ManagedBy == "" {
				mc.ManagedBy = managedBy(j.ObjectMeta, k.name)
			}
		}
		mc.Created = g.created()
		mc.Brokers = o.brokers()
		mc.Nodes = nodes(mc.Brokers)
		if !mc.Phase.Healthy() {
			r := reasoner{ctx: ctx, g: g, o: o, events: ev, pvcs: objs.PVCs, logs: logs, namespace: k.namespace,
				workloads: objs.Workloads, workloadsUnreadable: objs.WorkloadsUnreadable}
			mc.Reason = r.reason()
		}
		out = append(out, mc)
	}
	return out
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// created is when the MiniCluster's oldest Job was created: its age.
func (g *group) created() time.Time {
	var t time.Time
	for _, j := range slices.Concat(g.brokerJobs, g.keygenJobs) {
		if c := j.CreationTimestamp.Time; t.IsZero() || c.Before(t) {
			t = c
		}
	}
	return t
}

// observation is what a group's objects say, before any reason is looked for.
type observation struct {
	phase  Phase
	joined int32
	cert   Certificate
	// broker is the newest broker Job (an edit that renamed it leaves the old one until pruned).
	broker *batchv1.Job
	keygen *batchv1.Job
	// brokerPods are the broker Job's pods that are not being deleted, by completion index.
	brokerPods []*corev1.Pod
	// leaving are the broker Job's pods being deleted.
	leaving    []*corev1.Pod
	keygenPods []*corev1.Pod
}

func newest(jobs []*batchv1.Job) *batchv1.Job {
	if len(jobs) == 0 {
		return nil
	}
	return slices.MaxFunc(jobs, func(a, b *batchv1.Job) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
}

// ownedBy tells whether the Job controller made pod for job (its controller-uid label, which the
// view role sees, or its owner reference).
func ownedBy(pod *corev1.Pod, job *batchv1.Job) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.UID == job.UID && job.UID != "" {
			return true
		}
	}
	return pod.Labels[batchv1.JobNameLabel] == job.Name
}

func (g *group) observe() observation {
	o := observation{broker: newest(g.brokerJobs), keygen: newest(g.keygenJobs)}
	for _, p := range g.pods {
		switch {
		case o.broker != nil && p.Labels[contract.LabelComponent] == contract.ComponentBroker && ownedBy(p, o.broker):
			if p.DeletionTimestamp != nil {
				o.leaving = append(o.leaving, p)
			} else {
				o.brokerPods = append(o.brokerPods, p)
			}
		case o.keygen != nil && p.Labels[contract.LabelComponent] == contract.ComponentKeygen && ownedBy(p, o.keygen):
			o.keygenPods = append(o.keygenPods, p)
		}
	}
	slices.SortFunc(o.brokerPods, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(index(a), index(b)), b.CreationTimestamp.Compare(a.CreationTimestamp.Time))
	})
	for _, p := range o.brokerPods {
		if o.brokerState(p) == BrokerJoined {
			o.joined++
		}
	}
	o.cert = g.certificate(o)
	o.phase = o.classify()
	return o
}

// index is a broker pod's completion index (the Job controller's annotation), -1 if absent.
func index(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
	if err != nil {
		return -1
	}
	return n
}

// commandEnded tells whether rank 0's pod says its command is over: the pod ended, or a container
// of it exited (the broker exits when the command ends, whatever its status). The Job controller
// marks the Job Complete or Failed a moment later.
func commandEnded(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	return slices.ContainsFunc(p.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.State.Terminated != nil })
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// JobCondition is j's condition of type t when it is True, else nil (also for a nil j).
func JobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	if j == nil {
		return nil
	}
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// certificate: a certificate ConfigMap is there; or the keygen Job completed (it completes only
// once the certificate exists); or a broker pod got its volumes (kubelet mounts them, the
// certificate among them, before it starts or pulls for any container). Missing while the keygen
// Job has not completed. A Secret given inline or by the user is not visible to the view role:
// unknown until a broker pod shows it.
func (g *group) certificate(o observation) Certificate {
	if len(g.curve) > 0 || JobCondition(o.keygen, batchv1.JobComplete) != nil {
		return CertificatePresent
	}
	if slices.ContainsFunc(o.brokerPods, volumesMounted) {
		return CertificatePresent
	}
	if o.keygen != nil {
		return CertificateMissing
	}
	return CertificateUnknown
}

// volumesMounted tells whether kubelet has set up a pod's volumes: one of its containers has
// started, ended, or waits for something that comes after the volumes (an image).
func volumesMounted(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded {
		return true
	}
	for _, s := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		if s.State.Running != nil || s.State.Terminated != nil || s.LastTerminationState.Terminated != nil {
			return true
		}
		if w := s.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return true
		}
	}
	return false
}

// classify is the phase, by the first rule that holds (docs/generated-objects.md, Status).
func (o observation) classify() Phase {
	j := o.broker
	switch {
	case j == nil && o.keygen == nil:
		return PhasePending
	// FailureTarget and SuccessCriteriaMet come first: the Job controller adds Failed or Complete
	// only once every pod has ended, which a pod stuck on a node that stopped answering never does.
	case JobCondition(j, batchv1.JobFailed) != nil, JobCondition(j, batchv1.JobFailureTarget) != nil:
		return PhaseFailed
	case JobCondition(j, batchv1.JobComplete) != nil, JobCondition(j, batchv1.JobSuccessCriteriaMet) != nil:
		return PhaseSucceeded
	case queuedByKueue(j):
		return PhaseQueued
	case o.cert == CertificateMissing:
		return PhaseWaitingForCertificate
	case j == nil:
		return PhasePending // Argo CD applies the broker Job once the keygen Job has completed
	}
	size := ptrValue(j.Spec.Parallelism)
	// A broker on a node that stopped answering is lost as much as one whose pod failed or left.
	lost := len(o.leaving) > 0 || j.Status.Failed > 0 || slices.ContainsFunc(o.brokerPods, nodeStoppedAnswering)
	if j.Labels[contract.LabelLifetime] == contract.LifetimeCompletes {
		mainPod := len(o.brokerPods) > 0 && index(o.brokerPods[0]) == 0
		mainReady := mainPod && podReady(o.brokerPods[0])
		// Rank 0's node stopped answering, or its pod is being deleted: the instance that ran
		// has lost its main broker.
		mainLost := mainPod && nodeStoppedAnswering(o.brokerPods[0]) ||
			slices.ContainsFunc(o.leaving, func(p *corev1.Pod) bool { return index(p) == 0 })
		switch {
		case j.Status.Succeeded > 0, mainPod && commandEnded(o.brokerPods[0]):
			// The command ended; the Job completes or fails as the brokers stop. Rank 0's pod is
			// no longer Ready from the moment its broker exits, before the Job controller counts it.
			return PhaseRunning
		case (mainReady && o.joined < size || mainLost) && lost:
			return PhaseDegraded
		case mainReady:
			return PhaseRunning
		}
		return PhaseStarting
	}
	switch {
	case o.joined >= size:
		return PhaseReady
	case lost:
		return PhaseDegraded
	}
	return PhaseStarting
}

// queuedByKueue: the Job carries Kueue's queue label and is suspended, which for such a Job only
// Kueue does (its webhook suspends the Job when it is created; it resumes it on admission and
// suspends it again on eviction). The render never sets spec.suspend (docs/kueue.md).
func queuedByKueue(j *batchv1.Job) bool {
	return j != nil && j.Labels[kueueconstants.QueueLabel] != "" && j.Spec.Suspend != nil && *j.Spec.Suspend
}

// managedBy names the GitOps object that applied an object, from what the engines write on it:
// Flux CD's kustomize-controller its Kustomization's name and namespace labels, Argo CD its
// tracking-id annotation, or, under its label tracking, the instance label with the Application's
// name. That label is also the MiniCluster's name when nothing overwrote it: where the two agree,
// the Application is named only if Argo CD's controller is among the object's field managers.
func managedBy(meta metav1.ObjectMeta, miniCluster string) string {
	if name := meta.Labels["kustomize.toolkit.fluxcd.io/name"]; name != "" {
		return "Kustomization/" + meta.Labels["kustomize.toolkit.fluxcd.io/namespace"] + "/" + name
	}
	if id := meta.Annotations["argocd.argoproj.io/tracking-id"]; id != "" {
		app, _, _ := strings.Cut(id, ":")
		return "Application/" + strings.Replace(app, "_", "/", 1)
	}
	app := meta.Labels["app.kubernetes.io/instance"]
	if app != "" && (app != miniCluster || appliedByArgoCD(meta.ManagedFields)) {
		return "Application/" + app
	}
	return ""
}

// appliedByArgoCD tells whether Argo CD's application controller wrote the object: the API server
// names a field manager after the client's user agent, argocd-controller or
// argocd-application-controller (argoproj/argo-cd#20815).
func appliedByArgoCD(fields []metav1.ManagedFieldsEntry) bool {
	return slices.ContainsFunc(fields, func(f metav1.ManagedFieldsEntry) bool {
		return strings.HasPrefix(f.Manager, "argocd-")
	})
}

// BrokersColumn is BROKERS: joined/size, and the maxSize where it differs.
func (mc *MiniCluster) BrokersColumn() string {
	s := fmt.Sprintf("%d/%d", mc.Joined, mc.Size)
	if mc.MaxSize != mc.Size {
		s += fmt.Sprintf(" (max %d)", mc.MaxSize)
	}
	return s
}
