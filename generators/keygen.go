package generators

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// keygenArgs are the arguments of the in-cluster pre-step. Each value is its own list element so
// that a kustomize nameReference can rewrite the Service name after a namePrefix.
func keygenArgs(mc *v1alpha2.MiniCluster, n names) []string {
	return []string{
		"keygen", "--publish",
		"--name", n.CurveConfigMap,
		"--owner-service", n.Service,
		"--cert-name", mc.Name,
	}
}

// keygenObjects are the pre-step that creates the CURVE ConfigMap in the cluster, only if it is
// absent: a ServiceAccount, a Role that can do exactly that, its RoleBinding and the Job.
func keygenObjects(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding, *batchv1.Job) {
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, componentKeygen, waveKeygen),
		// Only the keygen pod mounts a token, and asks for it itself.
		AutomountServiceAccountToken: ptr.To(false),
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, componentKeygen, waveKeygen),
		Rules: []rbacv1.PolicyRule{
			// create cannot be limited by resourceNames; get can.
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{n.CurveConfigMap}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{n.Service}, Verbs: []string{"get"}},
		},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, componentKeygen, waveKeygen),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n.KeygenAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n.KeygenAccount}},
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: objectMeta(mc, n.Keygen, componentKeygen, waveKeygen),
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(6)),
			ActiveDeadlineSeconds: ptr.To(int64(600)),
			Template:              keygenPodTemplate(mc, opts, n),
		},
	}
	return sa, role, binding, job
}

// keygenPodTemplate passes Pod Security "restricted": non-root, no privilege escalation, no
// capabilities, RuntimeDefault seccomp, read-only root filesystem.
func keygenPodTemplate(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) corev1.PodTemplateSpec {
	image := opts.KeygenImage
	if image == "" {
		image = version.Image()
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels(mc, componentKeygen)},
		Spec: corev1.PodSpec{
			ServiceAccountName:           n.KeygenAccount,
			AutomountServiceAccountToken: ptr.To(true),
			RestartPolicy:                corev1.RestartPolicyOnFailure,
			NodeSelector:                 copyInto(nil, mc.Spec.Pod.NodeSelector),
			Tolerations:                  tolerations(mc.Spec.Pod.Tolerations),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(int64(65534)),
				RunAsGroup:     ptr.To(int64(65534)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            "keygen",
				Image:           image,
				Args:            keygenArgs(mc, n),
				ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// inlineCurveConfigMap carries spec.flux.curveCert when the user gives the certificate inline.
func inlineCurveConfigMap(mc *v1alpha2.MiniCluster, n names) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(mc, n.CurveConfigMap, componentCurve, waveConfig),
		Data:       map[string]string{CurveCertKey: mc.Spec.Flux.CurveCert},
	}
}

// CurveLabels are the labels of the curve ConfigMap of the MiniCluster called name; keygen
// --publish puts them on the ConfigMap it creates, as render does on an inline one.
func CurveLabels(name string) map[string]string {
	return labels(&v1alpha2.MiniCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, componentCurve)
}
