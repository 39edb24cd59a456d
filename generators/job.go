package generators

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// brokerJob is the Indexed Job of Flux brokers: one pod per rank, hostname <job>-<index>, all in
// the headless Service's subdomain.
func brokerJob(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) *batchv1.Job {
	s := &mc.Spec
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: objectMeta(mc, n.Job, contract.ComponentBroker, waveBrokers),
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			Completions:           ptr.To(s.Size),
			Parallelism:           ptr.To(s.Size),
			BackoffLimit:          ptr.To(s.BackoffLimit),
			ActiveDeadlineSeconds: ptr.To(s.DeadlineSeconds),
			Template:              brokerPodTemplate(mc, opts, n),
		},
	}
	// jobLabels go on the Job only (e.g. kueue.x-k8s.io/queue-name); ours win on conflict.
	for k, v := range s.JobLabels {
		if _, ours := job.Labels[k]; !ours {
			job.Labels[k] = v
		}
	}
	if failsOnCommand(mc, opts) {
		job.Spec.PodFailurePolicy = brokerPodFailurePolicy(mc.Name)
	}
	job.Annotations[contract.AnnotationMaxSize] = strconv.Itoa(int(s.MaxSize))
	job.Annotations[contract.AnnotationViewImage] = s.Flux.Container.Image
	job.Annotations[contract.AnnotationViewSource] = string(opts.ViewSource)
	job.Labels[contract.LabelLifetime] = contract.LifetimeCompletes
	if reason := mc.NeverCompletes(); reason != "" {
		job.Labels[contract.LabelLifetime] = contract.LifetimeUntilDeleted
		job.Annotations[contract.AnnotationLifetimeReason] = reason
	}
	if opts.JobNaming == v1alpha2.JobNamingStable {
		// A stable name cannot take a changed pod template; let the GitOps engine replace the Job.
		job.Annotations[fluxcdForce] = fluxcdForceEnabled
		job.Annotations[argoSyncOptions] = argoReplaceJob
	}
	return job
}

// exitPodRetry is the broker container's exit status that asks the Job for a new pod of its index
// rather than to fail: 128+SIGTERM, what the broker script exits with when SIGTERM stopped it (its
// pod is deleted or evicted, or its Job shrinks), and what a worker exits with when its broker
// failed (e.g. it lost the main broker's pod). The pod failure policy counts it against
// backoffLimit, as a pod failure is counted without one; any other non-zero status of the broker
// container fails the Job.
const exitPodRetry = 143

// failsOnCommand says whether a failed command fails the broker Job (the failed-command option,
// Fail by default): then the main broker's container exits with the command's status, the pods
// are never restarted in place, and a pod failure policy fails the Job on that status. Only for a
// Job that completes with its command: a cluster that runs until deleted runs none that ends it.
func failsOnCommand(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) bool {
	return opts.FailedCommand != v1alpha2.FailedCommandComplete && mc.NeverCompletes() == ""
}

// brokerPodFailurePolicy fails the Job, once, when the broker container (named container) ends
// with a status other than 0 and exitPodRetry: the main broker's failed command, or a broker
// script that failed before its broker started (a setup error, which a new pod would repeat). A
// pod that was evicted, preempted or lost with its node (condition DisruptionTarget) is counted
// against backoffLimit and started again whatever its status, as without a policy; so is one that
// failed in another container.
func brokerPodFailurePolicy(container string) *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{
			Action:          batchv1.PodFailurePolicyActionCount,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		},
		{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(container),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpNotIn,
				Values:        []int32{exitPodRetry},
			},
		},
	}}
}

// brokerPodTemplate is everything immutable about the broker Job; its hash names the Job.
func brokerPodTemplate(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) corev1.PodTemplateSpec {
	s := &mc.Spec
	// Our labels win over spec.pod.labels: the Service and affinity select on them.
	podLabels := copyInto(copyInto(copyInto(nil, s.Pod.Labels), labels(mc, contract.ComponentBroker)), podSelector(mc))
	spec := basePodSpec(mc)
	if failsOnCommand(mc, opts) {
		// A pod failure policy needs it; and a container restarted in place would run a failed
		// command again.
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
	spec.Subdomain = n.Service
	spec.SetHostnameAsFQDN = ptr.To(false)
	spec.ShareProcessNamespace = ptr.To(s.ShareProcessNamespace)
	spec.HostIPC = s.Pod.HostIPC
	spec.HostPID = s.Pod.HostPID
	spec.SchedulerName = s.Pod.SchedulerName
	spec.Tolerations = tolerations(s.Pod.Tolerations)
	spec.Overhead = s.Pod.Resources
	spec.Affinity = affinity(mc, opts.BrokerSpread)
	spec.ImagePullSecrets = pullSecrets(s.Containers)
	if !initInBroker(mc, opts) {
		spec.InitContainers = []corev1.Container{viewContainer(mc, opts)}
	}
	spec.Volumes = append(fluxVolumes(mc, opts, n), userVolumes(s.Containers)...)
	for i, c := range s.Containers {
		spec.Containers = append(spec.Containers, appContainer(mc, opts, i, c))
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: copyInto(nil, s.Pod.Annotations)},
		Spec:       spec,
	}
}

// basePodSpec holds the pod settings the broker pods and the services pod share.
func basePodSpec(mc *v1alpha2.MiniCluster) corev1.PodSpec {
	p := &mc.Spec.Pod
	spec := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicy(p.RestartPolicy),
		// No API token unless the spec asks for one: brokers do not talk to the API server.
		AutomountServiceAccountToken: ptr.To(p.AutomountServiceAccountToken),
		ServiceAccountName:           p.ServiceAccountName,
		NodeSelector:                 copyInto(nil, p.NodeSelector),
		DNSPolicy:                    corev1.DNSPolicy(p.DNSPolicy),
	}
	if p.RuntimeClassName != "" {
		spec.RuntimeClassName = ptr.To(p.RuntimeClassName)
	}
	// The operator copies only fsGroup; the whole PodSecurityContext is what a user writing it means.
	if sc := p.SecurityContext; !isZero(sc) {
		spec.SecurityContext = sc.DeepCopy()
	}
	return spec
}

// initInBroker says whether the broker container prepares the view volume itself (it runs
// flux-init.sh first), so that the pod has no init container: with view-source ImageVolume there
// is nothing to copy, and in a pod whose only container is the broker nothing else waits for that
// work. On the live cluster an init container's start, and the kubelet's relist after its exit
// before the broker container starts, were about 1 s of every broker pod's start (from the init
// container's start to the broker container running; docs/benchmarks.md). A pod with sidecars
// keeps the init container: they start beside the broker container and expect the view ready.
func initInBroker(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) bool {
	cs := mc.Spec.Containers
	return opts.ViewSource == v1alpha2.ViewSourceImageVolume && len(cs) == 1 && cs[0].RunFlux
}

// viewContainer is the init container that copies Flux from the view image into the shared
// emptyDir (or links it in the view image's volume) and writes the broker config.
func viewContainer(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) corev1.Container {
	fc := &mc.Spec.Flux.Container
	c := corev1.Container{
		Name:            fc.Name,
		Image:           fc.Image,
		Command:         []string{"/bin/bash", entrypointFile(InitScriptKey)},
		WorkingDir:      fc.WorkingDir,
		Resources:       *fc.Resources.DeepCopy(),
		ImagePullPolicy: pullPolicy(fc.PullAlways, ""),
		Stdin:           true,
		TTY:             true,
		VolumeMounts: []corev1.VolumeMount{
			{Name: fc.Name, MountPath: fc.MountPath},
			{Name: volumeHome, MountPath: homeMountPath},
			{Name: volumeEntrypoint, MountPath: EntrypointMountPath, ReadOnly: true},
		},
	}
	if opts.ViewSource == v1alpha2.ViewSourceImageVolume {
		// It runs the view image, but finds the view in the volume: the volume is what the other
		// containers see, and the link it writes must point where they mount it.
		c.VolumeMounts = slices.Insert(c.VolumeMounts, 1, viewImageMount(fc.MountPath))
	}
	c.SecurityContext = securityContext(fc.SecurityContext)
	return c
}

// appContainer is containers[i] of the broker pod: the broker (runFlux) or a sidecar.
func appContainer(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, i int, mcc v1alpha2.MiniClusterContainer) corev1.Container {
	c := corev1.Container{
		Name:            mcc.Name,
		Image:           mcc.Image,
		WorkingDir:      mcc.WorkingDir,
		Env:             env(mcc),
		Ports:           containerPorts(mcc.Ports),
		Resources:       *mcc.Resources.DeepCopy(),
		ImagePullPolicy: pullPolicy(mcc.PullAlways, mcc.ImagePullPolicy),
		Lifecycle:       lifecycle(mcc.LifeCycle),
		// As the operator: `kubectl attach -it` works, and programs that run directly under
		// flux start see a terminal, so their output is line-buffered, not block-buffered.
		Stdin:        true,
		TTY:          true,
		VolumeMounts: viewMounts(mc, opts),
	}
	switch {
	case mcc.RunFlux:
		c.Name = mc.Name // as the operator does: logs are read with -c <MiniCluster name>
		c.Command = []string{"/bin/bash", entrypointFile(WaitScriptKey(i))}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volumeCurve, MountPath: CurveMountPath, ReadOnly: true})
		c.StartupProbe = brokerStartupProbe()
		if failsOnCommand(mc, opts) {
			// The broker script writes why its command failed there; any other failure shows
			// the log's last lines.
			c.TerminationMessagePath = terminationLogPath
			c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		}
	case !mcc.NoWrapEntrypoint:
		c.Command = []string{"/bin/bash", entrypointFile(StartScriptKey(i))}
	}
	c.VolumeMounts = append(c.VolumeMounts, userMounts(mcc)...)
	c.SecurityContext = securityContext(mcc.SecurityContext)
	return c
}

// viewMounts are the mounts of the view that every container of the broker pod but the init
// container has: the view volume, and the view image's software where the view's links point,
// mounted rather than copied again by every container (the copies were most of a pod's time to
// ready on the live cluster). With view-source ImageVolume both come from the image volume,
// read-only: the software with subPath, and the whole image inside the view volume (as in the init
// container), where the init container's link to the view points (newPodLayout: View,
// ViewImageMount).
func viewMounts(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) []corev1.VolumeMount {
	fc := &mc.Spec.Flux.Container
	software := corev1.VolumeMount{Name: fc.Name, MountPath: softwareMountPath, SubPath: viewSoftwareDir}
	mounts := []corev1.VolumeMount{{Name: fc.Name, MountPath: fc.MountPath}}
	if opts.ViewSource == v1alpha2.ViewSourceImageVolume {
		software = corev1.VolumeMount{Name: volumeViewImage, MountPath: softwareMountPath, SubPath: viewImageSoftwareSubPath, ReadOnly: true}
		mounts = append(mounts, viewImageMount(fc.MountPath))
	}
	return append(mounts,
		software,
		corev1.VolumeMount{Name: volumeHome, MountPath: homeMountPath},
		corev1.VolumeMount{Name: volumeEntrypoint, MountPath: EntrypointMountPath, ReadOnly: true},
	)
}

// viewImageMount mounts the whole view image (view-source ImageVolume) inside the view volume,
// mounted at base.
func viewImageMount(base string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: volumeViewImage, MountPath: newPodLayout(base).ViewImageMount, ReadOnly: true}
}

// readyCheckWait is how long one check of broker-ready.sh waits for its broker to join before it
// fails (and says so in the probe's event).
const readyCheckWait = 10 * time.Second

// brokerStartupProbe makes a broker pod Ready once its broker has joined the running instance
// (broker-ready.sh waits for the marker the broker script writes then), so the Job's ready count,
// kubectl wait and GitOps health checks mean "brokers up", not "pods started". Once it has
// succeeded it never runs again: a container with no readinessProbe is Ready as soon as its
// startupProbe succeeds.
//
// One check waits up to readyCheckWait for the marker, looking every 0.1 s, and the next starts as
// soon as one ends (a period of 1 s, shorter than a check). So a pod is Ready within about 0.1 s
// of its broker joining, and a broker still starting costs one exec (a runc exec, about 20 ms of
// CPU) and at most one failure event per readyCheckWait. A check every 3 s that tested the marker
// once made pods Ready 0-3 s after they joined and cost an exec and an event per failed check; on
// the 2-core live node, 32-broker runs were about 1 s slower to rank 0's output and 2.5 s slower to
// Job complete with it (docs/benchmarks.md, "What changed our times").
//
// There is deliberately no readinessProbe. The kubelet (1.36) runs a readinessProbe's first check
// on that probe's own ticker, not when the startupProbe succeeds (its immediate trigger reads the
// pod's status before it says "started", and skips), so with a 30 s readinessProbe the pods became
// Ready 4 to 28 s after their brokers had joined (measured on the live cluster). A broker that
// stops is seen without one: the container ends with it. And a probe for the whole life of a
// persistent cluster costs CPU on every broker pod.
//
// The probe never gives up (a failureThreshold of MaxInt32 periods): a broker that cannot join
// stays unready and says why in its log and in the probe's events. Restarting it would not help,
// and would lose that log. The timeout allows for a busy node, where an exec can take seconds to
// start.
func brokerStartupProbe() *corev1.Probe {
	wait := int32(readyCheckWait.Seconds())
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
			Command: []string{"/bin/bash", entrypointFile(ReadyScriptKey)},
		}},
		PeriodSeconds:    1,
		TimeoutSeconds:   wait + 10,
		FailureThreshold: math.MaxInt32,
		SuccessThreshold: 1,
	}
}

func env(c v1alpha2.MiniClusterContainer) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
		out = append(out, corev1.EnvVar{Name: k, Value: c.Environment[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Secrets)) {
		s := c.Secrets[k]
		out = append(out, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}, Key: s.Key,
		}}})
	}
	return out
}

func containerPorts(ports []int32) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		out = append(out, corev1.ContainerPort{ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	return out
}

func pullPolicy(always bool, policy string) corev1.PullPolicy {
	switch {
	case always:
		return corev1.PullAlways
	case policy != "":
		return corev1.PullPolicy(policy)
	}
	return corev1.PullIfNotPresent
}

// lifecycle runs the hooks through a shell; the operator exec'd the whole string as one argv[0],
// which only works for a command without arguments.
func lifecycle(l v1alpha2.LifeCycle) *corev1.Lifecycle {
	if l.PostStartExec == "" && l.PreStopExec == "" {
		return nil
	}
	hook := func(cmd string) *corev1.LifecycleHandler {
		if cmd == "" {
			return nil
		}
		return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", cmd}}}
	}
	return &corev1.Lifecycle{PostStart: hook(l.PostStartExec), PreStop: hook(l.PreStopExec)}
}

func tolerations(ts []v1alpha2.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range ts {
		out = append(out, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}

// pullSecrets collects containers' imagePullSecret, sorted and without repeats.
func pullSecrets(cs []v1alpha2.MiniClusterContainer) []corev1.LocalObjectReference {
	var names []string
	for _, c := range cs {
		if c.ImagePullSecret != "" && !slices.Contains(names, c.ImagePullSecret) {
			names = append(names, c.ImagePullSecret)
		}
	}
	slices.Sort(names)
	var out []corev1.LocalObjectReference
	for _, n := range names {
		out = append(out, corev1.LocalObjectReference{Name: n})
	}
	return out
}

// affinity keeps brokers within one zone and spreads them one per node (both preferred, as the
// operator does; one per node required with the broker-spread option Required), and adds the
// required node affinity of spec.pod.nodeAffinity.
func affinity(mc *v1alpha2.MiniCluster, spread v1alpha2.BrokerSpread) *corev1.Affinity {
	var a corev1.Affinity
	if !mc.Spec.Network.DisableAffinity {
		sel := &metav1.LabelSelector{MatchLabels: brokerSelector(mc)}
		a.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: sel, TopologyKey: corev1.LabelTopologyZone},
		}}}
		onePerNode := corev1.PodAffinityTerm{LabelSelector: sel.DeepCopy(), TopologyKey: corev1.LabelHostname}
		if spread == v1alpha2.BrokerSpreadRequired {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{onePerNode}}
		} else {
			a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: onePerNode,
			}}}
		}
	}
	if na := mc.Spec.Pod.NodeAffinity; len(na) > 0 {
		var term corev1.NodeSelectorTerm
		for _, k := range slices.Sorted(maps.Keys(na)) {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
				Key: k, Operator: corev1.NodeSelectorOpIn, Values: slices.Clone(na[k]),
			})
		}
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{term},
		}}
	}
	if a == (corev1.Affinity{}) {
		return nil
	}
	return &a
}
