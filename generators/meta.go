package generators

import (
	"maps"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// objectMeta is the metadata every generated object starts from: name, the MiniCluster's
// namespace if it has one, the recommended labels and the Argo CD sync wave.
func objectMeta(mc *v1alpha2.MiniCluster, name, component, wave string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   mc.Namespace,
		Labels:      labels(mc, component),
		Annotations: map[string]string{argoSyncWave: wave},
	}
}

// copyInto returns dst with src's entries added, allocating dst when needed; nil when both are empty.
func copyInto(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

func isZero(v any) bool { return reflect.ValueOf(v).IsZero() }

// securityContext is nil for an empty one, so the output carries no `securityContext: {}`.
func securityContext(sc corev1.SecurityContext) *corev1.SecurityContext {
	if isZero(sc) {
		return nil
	}
	return sc.DeepCopy()
}
