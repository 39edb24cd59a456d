package generators

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// disruptionBudget is the eviction option's WaitForCommand: no broker pod may be evicted
// (maxUnavailable 0), so `kubectl drain` retries the eviction of a broker until its pod has
// completed, that is until the command has ended, and then drains the node. Only a Ready broker
// counts as healthy: unhealthyPodEvictionPolicy AlwaysAllow lets a broker that has not joined (or
// a broken cluster's) be evicted at once, so the budget never holds a drain for a cluster that
// runs nothing. A completed pod is never held: the eviction API lets terminal pods go. In the
// config wave, so that the budget guards the first broker pod.
func disruptionBudget(mc *v1alpha2.MiniCluster, n names) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(mc, n.DisruptionBudget, contract.ComponentDisruptionBudget, waveConfig),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             ptr.To(intstr.FromInt32(0)),
			Selector:                   &metav1.LabelSelector{MatchLabels: brokerSelector(mc)},
			UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow),
		},
	}
}
