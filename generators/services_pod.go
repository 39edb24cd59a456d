package generators

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// servicesPod runs spec.services beside the brokers, reachable as <name>-services.<service>. Its
// object name carries a hash of its spec (a Pod's spec is immutable), its hostname does not.
func servicesPod(mc *v1alpha2.MiniCluster, n names) *corev1.Pod {
	s := &mc.Spec
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(mc, n.ServicesPod, contract.ComponentServices, waveBrokers),
		Spec:       servicesPodSpec(mc, n),
	}
	pod.Labels = copyInto(copyInto(copyInto(nil, s.Pod.Labels), pod.Labels), podSelector(mc))
	pod.Annotations = copyInto(copyInto(nil, s.Pod.Annotations), pod.Annotations)
	return pod
}

func servicesPodSpec(mc *v1alpha2.MiniCluster, n names) corev1.PodSpec {
	s := &mc.Spec
	spec := basePodSpec(mc)
	spec.Hostname = n.ServicesHostname
	spec.Subdomain = n.Service
	spec.SetHostnameAsFQDN = ptr.To(false)
	spec.Tolerations = tolerations(s.Pod.Tolerations)
	// The operator gives this Pod the pull secrets of spec.containers; services[].imagePullSecret
	// is ours. A services image that pulled under the operator must still pull: the union.
	spec.ImagePullSecrets = pullSecrets(append(slices.Clone(s.Containers), s.Services...))
	spec.Volumes = userVolumes(s.Services)
	for _, c := range s.Services {
		// Services keep their image's entrypoint, as with the operator.
		spec.Containers = append(spec.Containers, corev1.Container{
			Name:            c.Name,
			Image:           c.Image,
			WorkingDir:      c.WorkingDir,
			Env:             env(c),
			Ports:           containerPorts(c.Ports),
			Resources:       *c.Resources.DeepCopy(),
			ImagePullPolicy: pullPolicy(c.PullAlways, c.ImagePullPolicy),
			Lifecycle:       lifecycle(c.LifeCycle),
			VolumeMounts:    userMounts(c),
			SecurityContext: securityContext(c.SecurityContext),
			Stdin:           true, // as the broker pod's containers (appContainer)
			TTY:             true,
		})
	}
	return spec
}
