package generators

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// The keygen container runs, by default, an image the broker pods pull anyway: the Flux view
// image (flux.container.image), whose flux keygen makes the certificate and whose Python creates
// the certificate object (keygen.sh and keygen-publish.py), as design 3.2 ran flux-keygen in the
// flux container of a one-off pod. With flux.container.disable the view image need not hold flux
// (the operator's disable-view example gives ubuntu:focal): the image of the runFlux container,
// which holds flux then, runs it with flux and python3 from its PATH. With the keygen-image option
// the project's image runs keygen publish.

// keygenScriptDelimiter ends the here-document that hands the publisher to the Python.
const keygenScriptDelimiter = "MINICLUSTER_FN_PUBLISHER"

// keygenScript is the keygen container's script: keygen.sh with the publisher in it. It is the
// same for every MiniCluster (the arguments differ), so a process renders it once.
var keygenScript = sync.OnceValues(func() (string, error) {
	publisher, err := render("keygen-publish.py", struct{ CertKey, FieldManager string }{CurveCertKey, KeygenFieldManager})
	if err != nil {
		return "", err
	}
	if slices.Contains(strings.Split(publisher, "\n"), keygenScriptDelimiter) {
		return "", fmt.Errorf("keygen-publish.py holds the line %s that ends its here-document", keygenScriptDelimiter)
	}
	return render("keygen.sh", struct{ Publisher, Delimiter, KeygenImageOption string }{
		strings.TrimSuffix(publisher, "\n"), keygenScriptDelimiter, v1alpha2.KeygenImageAnnotation,
	})
})

// keygenImage is the image the keygen container runs and its pull policy, as the broker pods pull
// that image; project is true for the project's image (the keygen-image option).
func keygenImage(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) (image string, policy corev1.PullPolicy, project bool) {
	if opts.KeygenImage != "" {
		return opts.KeygenImage, corev1.PullIfNotPresent, true
	}
	fc := &mc.Spec.Flux.Container
	if fc.Disable {
		for _, c := range mc.Spec.Containers {
			if c.RunFlux {
				return c.Image, pullPolicy(c.PullAlways, c.ImagePullPolicy), false
			}
		}
	}
	return fc.Image, pullPolicy(fc.PullAlways, ""), false
}

// keygenArgs are the arguments of the keygen container. Each value is its own list element so
// that a kustomize nameReference can rewrite the Service name after a namePrefix.
//
// The Job itself is the certificate's second owner: its name and UID come from the labels the Job
// controller puts on its pod (keygenJobEnv), expanded by kubelet.
func keygenArgs(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names, project bool) []string {
	owners := []string{
		"--name", n.Curve,
		"--owner-service", n.Service,
		"--owner-job", "$(" + envKeygenJobName + ")",
		"--owner-job-uid", "$(" + envKeygenJobUID + ")",
		"--cert-name", mc.Name,
	}
	if project {
		return append([]string{"keygen", "publish", "--output", strings.ToLower(string(opts.CurveKind))}, owners...)
	}
	args := []string{"--view", viewImageLink}
	if mc.Spec.Flux.Container.Disable {
		args = []string{"--path"}
	}
	args = append(args, "--work-dir", keygenWorkDir, "--serviceaccount", ServiceAccountDir, "--kind", string(opts.CurveKind))
	args = append(args, owners...)
	curveLabels := CurveLabels(mc.Name)
	for _, k := range slices.Sorted(maps.Keys(curveLabels)) {
		args = append(args, "--label", k, curveLabels[k])
	}
	return args
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
func keygenObjects(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) ([]Object, error) {
	template, err := keygenPodTemplate(mc, opts, n)
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, contract.ComponentKeygen, waveKeygen),
		// Only the keygen pod mounts a token, and asks for it itself.
		AutomountServiceAccountToken: ptr.To(false),
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, contract.ComponentKeygen, waveKeygen),
		Rules:      keygenRules(opts, n),
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: objectMeta(mc, n.KeygenAccount, contract.ComponentKeygen, waveKeygen),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n.KeygenAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: n.KeygenAccount}},
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: keygenJobMeta(mc, n, template),
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(int32(6)),
			ActiveDeadlineSeconds: ptr.To(int64(600)),
			Template:              template,
		},
	}
	return []Object{sa, role, binding, job}, nil
}

// keygenJobMeta is the keygen Job's metadata. A Job that runs the script opts out of Flux CD's
// postBuild substitution, as the entrypoint ConfigMap does: it would replace the script's ${...}.
func keygenJobMeta(mc *v1alpha2.MiniCluster, n names, template corev1.PodTemplateSpec) metav1.ObjectMeta {
	meta := objectMeta(mc, n.Keygen, contract.ComponentKeygen, waveKeygen)
	if template.Spec.Containers[0].Command != nil {
		meta.Annotations[fluxcdSubstitute] = fluxcdSubstituteDisabled
	}
	return meta
}

// keygenPodTemplate passes Pod Security "restricted": non-root, no privilege escalation, no
// capabilities, RuntimeDefault seccomp, read-only root filesystem. flux keygen writes the
// certificate into a memory-backed emptyDir, so the secret key never touches the node's disk.
func keygenPodTemplate(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) (corev1.PodTemplateSpec, error) {
	image, policy, project := keygenImage(mc, opts)
	container := corev1.Container{
		Name:            "keygen",
		Image:           image,
		Args:            keygenArgs(mc, opts, n, project),
		Env:             keygenJobEnv(),
		ImagePullPolicy: policy,
		// A failed keygen's last log lines become its termination message, so that status can say
		// why from the pod's status alone.
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			// The view's Python with ssl, urllib and json loaded, and flux keygen, stay far below.
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	spec := corev1.PodSpec{
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
	}
	if !project {
		script, err := keygenScript()
		if err != nil {
			return corev1.PodTemplateSpec{}, err
		}
		// $0 of the script is "keygen", for its messages; the arguments follow.
		container.Command = []string{"/bin/sh", "-c", script, "keygen"}
		container.VolumeMounts = []corev1.VolumeMount{{Name: volumeKeygen, MountPath: keygenWorkDir}}
		spec.Volumes = []corev1.Volume{{Name: volumeKeygen, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))},
		}}}
		// The image is one the broker pods pull, with their pull secrets.
		spec.ImagePullSecrets = pullSecrets(mc.Spec.Containers)
	}
	spec.Containers = []corev1.Container{container}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels(mc, contract.ComponentKeygen)}, Spec: spec}, nil
}

// inlineCurve carries spec.flux.curveCert when the user gives the certificate inline: an object of
// the kind the curve-kind option says, as the keygen Job would create. It stays mutable, so that a
// certificate edited in Git can be applied.
func inlineCurve(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) Object {
	return CurveObject(opts.CurveKind, objectMeta(mc, n.Curve, contract.ComponentCurve, waveConfig), mc.Spec.Flux.CurveCert, false)
}

// CurveObject is the certificate object of the given kind, with certText under the key
// curve.cert: what render writes for an inline certificate and what keygen publish creates.
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

// CurveLabels are the labels of the certificate object of the MiniCluster called name; the keygen
// Job puts them on the object it creates, as render does on an inline one.
func CurveLabels(name string) map[string]string {
	return labels(&v1alpha2.MiniCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}, contract.ComponentCurve)
}
