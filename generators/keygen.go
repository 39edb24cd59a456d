package generators

import (
	"strings"

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
// that a kustomize nameReference can rewrite the Service name after a namePrefix. --output is
// always given: without it keygen --publish creates a ConfigMap, what keygen Jobs rendered before
// the flag existed need.
//
// The Job itself is the certificate's second owner: its name and UID come from the labels the Job
// controller puts on its pod (keygenJobEnv), expanded by kubelet.
func keygenArgs(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) []string {
	return []string{
		"keygen", "--publish",
		"--output", strings.ToLower(string(opts.CurveKind)),
		"--name", n.Curve,
		"--owner-service", n.Service,
		"--owner-job", "$(" + envKeygenJobName + ")",
		"--owner-job-uid", "$(" + envKeygenJobUID + ")",
		"--cert-name", mc.Name,
	}
}

// The keygen container's environment: its Job's name and UID, from the labels the Job controller
// sets on the pod (Kubernetes 1.27 and later). On a cluster without them both are empty, and
// keygen makes the Service the only owner.
const (
	envKeygenJobName = "KEYGEN_JOB_NAME"
	envKeygenJobUID  = "KEYGEN_JOB_UID"
)

func keygenJobEnv() []corev1.EnvVar {
	fromLabel := func(name, label string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + label + "']"},
		}}
	}
	return []corev1.EnvVar{
		fromLabel(envKeygenJobName, batchv1.JobNameLabel),
		fromLabel(envKeygenJobUID, batchv1.ControllerUidLabel),
	}
}

// keygenRules are the keygen Role's rights: create the certificate and read its owner, the
// headless Service (get can be limited by name, create cannot). The certificate ConfigMap may
// also be read back, to check an existing one. A Secret may not: with get on a Secret name, the
// pod could create a service-account-token Secret of that name for any ServiceAccount of the
// namespace and read the token the control plane writes into it.
func keygenRules(opts v1alpha2.Options, n names) []rbacv1.PolicyRule {
	getService := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{n.Service}, Verbs: []string{"get"}}
	if opts.CurveKind == v1alpha2.CurveKindConfigMap {
		return []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{n.Curve}, Verbs: []string{"get"}},
			getService,
		}
	}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		getService,
	}
}

// keygenObjects are the pre-step that creates the CURVE certificate in the cluster, only if it is
// absent: a ServiceAccount, a Role that can do exactly that, its RoleBinding and the Job.
func keygenObjects(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding, *batchv1.Job) {
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, ComponentKeygen, waveKeygen),
		// Only the keygen pod mounts a token, and asks for it itself.
		AutomountServiceAccountToken: ptr.To(false),
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, ComponentKeygen, waveKeygen),
		Rules:      keygenRules(opts, n),
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, ComponentKeygen, waveKeygen),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n.KeygenAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n.KeygenAccount}},
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: objectMeta(mc, n.Keygen, ComponentKeygen, waveKeygen),
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
		ObjectMeta: metav1.ObjectMeta{Labels: labels(mc, ComponentKeygen)},
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
				Args:            keygenArgs(mc, opts, n),
				Env:             keygenJobEnv(),
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

// inlineCurve carries spec.flux.curveCert when the user gives the certificate inline: an object of
// the kind the curve-kind option says, as the keygen Job would create. It stays mutable, so that a
// certificate edited in Git can be applied.
func inlineCurve(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) Object {
	return CurveObject(opts.CurveKind, objectMeta(mc, n.Curve, componentCurve, waveConfig), mc.Spec.Flux.CurveCert, false)
}

// CurveObject is the certificate object of the given kind, with certText under the key
// curve.cert: what render writes for an inline certificate and what keygen --publish creates.
func CurveObject(kind v1alpha2.CurveKind, meta metav1.ObjectMeta, certText string, immutable bool) Object {
	var immutableField *bool
	if immutable {
		immutableField = ptr.To(true)
	}
	if kind == v1alpha2.CurveKindConfigMap {
		return &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta,
			Immutable:  immutableField,
			Data:       map[string]string{CurveCertKey: certText},
		}
	}
	// data, not stringData: the API server moves stringData into data, so the object read back
	// would differ from the rendered one, which a GitOps engine's diff may report as drift.
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta,
		Immutable:  immutableField,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{CurveCertKey: []byte(certText)},
	}
}

// CurveLabels are the labels of the certificate object of the MiniCluster called name; keygen
// --publish puts them on the object it creates, as render does on an inline one.
func CurveLabels(name string) map[string]string {
	return labels(&v1alpha2.MiniCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, componentCurve)
}
