package generators

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// headlessService gives every broker pod (and the services pod) the DNS name
// <hostname>.<service>. It publishes not-ready addresses so brokers find each other while they
// start (kubernetes/kubernetes#117819), and selects on stable labels, not job-name. It is in the
// keygen wave: the keygen Job makes it the owner of the certificate and fails without it, and Argo
// CD applies a later wave only once the keygen Job has completed.
func headlessService(mc *v1alpha2.MiniCluster, n names) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(mc, n.Service, contract.ComponentHeadless, waveKeygen),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector:                 podSelector(mc),
		},
	}
	if mc.Spec.Flux.MinimalService {
		// Only the lead broker gets an address; workers connect to it alone. The Job controller's
		// completion-index label replaces the label the operator patched onto pods.
		svc.Spec.Selector[jobCompletionIndexLabel] = "0"
		svc.Spec.Ports = []corev1.ServicePort{{
			Name: "flux", Protocol: corev1.ProtocolTCP, Port: v1alpha2.DefaultBrokerPort, TargetPort: intstr.FromInt32(v1alpha2.DefaultBrokerPort),
		}}
	}
	return svc
}

// portServices are the ClusterIP Services the operator makes for sidecar containers with ports,
// one per container, named <MiniCluster>-<container> (the operator: <container>).
func portServices(mc *v1alpha2.MiniCluster) []*corev1.Service {
	var out []*corev1.Service
	for _, c := range mc.Spec.Containers {
		if c.RunFlux || len(c.Ports) == 0 {
			continue
		}
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: objectMeta(mc, v1alpha2.PortServiceName(mc.Name, c.Name), contract.ComponentPort, waveConfig),
			Spec: corev1.ServiceSpec{
				Selector: brokerSelector(mc),
			},
		}
		for _, p := range c.Ports {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: fmt.Sprintf("tcp-%d", p), Protocol: corev1.ProtocolTCP, Port: p, TargetPort: intstr.FromInt32(p),
			})
		}
		out = append(out, svc)
	}
	return out
}
