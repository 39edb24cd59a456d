package check

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
)

// reference is an object of the namespace that a pod of the render names and the render does not
// make: a pull Secret, a ServiceAccount, a Secret or ConfigMap volume (the curve-secret option's
// Secret among them).
type reference struct {
	check string
	ref   ObjectRef
	kind  string
	// field says where the MiniCluster names it.
	field string
}

// references are the render's references, in a stable order, each once.
func (r *Render) references() []reference {
	made := map[ObjectRef]bool{}
	for _, o := range r.Objects {
		switch o.GetObjectKind().GroupVersionKind().Kind {
		case "Secret":
			made[ObjectRef{"secrets", o.GetName()}] = true
		case "ConfigMap":
			made[ObjectRef{"configmaps", o.GetName()}] = true
		case "ServiceAccount":
			made[ObjectRef{"serviceaccounts", o.GetName()}] = true
		case "Service":
			// The keygen Job creates the certificate, named after the headless Service.
			if o.GetLabels()[contract.LabelComponent] == contract.ComponentHeadless && r.hasKeygen() {
				made[ObjectRef{"secrets", o.GetName()}] = true
				made[ObjectRef{"configmaps", o.GetName()}] = true
			}
		}
	}
	var out []reference
	add := func(ref reference) {
		if !made[ref.ref] && !slices.ContainsFunc(out, func(o reference) bool { return o.ref == ref.ref }) {
			out = append(out, ref)
		}
	}
	for _, p := range r.pods() {
		for _, s := range p.spec.ImagePullSecrets {
			add(reference{"image-pull-secret", ObjectRef{"secrets", s.Name}, "Secret", "spec.containers[].imagePullSecret"})
		}
		if sa := p.spec.ServiceAccountName; sa != "" {
			add(reference{"service-account", ObjectRef{"serviceaccounts", sa}, "ServiceAccount", "spec.pod.serviceAccountName"})
		}
		for _, v := range p.spec.Volumes {
			switch {
			case v.Secret != nil:
				add(reference{"secret", ObjectRef{"secrets", v.Secret.SecretName}, "Secret", "volume " + v.Name})
			case v.ConfigMap != nil:
				add(reference{"configmap", ObjectRef{"configmaps", v.ConfigMap.Name}, "ConfigMap", "volume " + v.Name})
			}
		}
	}
	return out
}

// claimNames are the PersistentVolumeClaims the render's pods mount, with how many pods mount each.
func (r *Render) claimNames() ([]string, map[string]int32) {
	var names []string
	pods := map[string]int32{}
	for _, p := range r.pods() {
		for _, v := range p.spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			name := v.PersistentVolumeClaim.ClaimName
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			pods[name] += p.count
		}
	}
	return names, pods
}

// references: each Secret, ConfigMap and ServiceAccount the MiniCluster names exists. Reading a
// Secret takes more than the view role: without the right, the result is Unknown.
func references(r *Render, ns *Namespace) []Result {
	var out []Result
	for _, ref := range r.references() {
		res := Result{Check: ref.check, Scope: r.Scope(), File: r.File}
		var err error = fmt.Errorf("not read")
		if ns != nil {
			if e, ok := ns.Objects[ref.ref]; ok {
				err = e
			}
		}
		what := fmt.Sprintf("%s %s (%s)", ref.kind, ref.ref.Name, ref.field)
		switch {
		case err == nil:
			res.Status, res.Message = Passed, what+" exists"
		case apierrors.IsNotFound(err):
			res.Status, res.Message = Failed, fmt.Sprintf("%s does not exist in namespace %s: the pods that name it do not start", what, r.Namespace)
			res.Fix = fmt.Sprintf("create %s %s in namespace %s before the MiniCluster, or change %s", ref.kind, ref.ref.Name, r.Namespace, ref.field)
		default:
			res.Status, res.Message = Unknown, cannotTell("get "+ref.ref.Resource+" in namespace "+r.Namespace+" to see whether "+what+" exists", err)
			res.Fix = rightFix("get", ref.ref.Resource, " in namespace "+r.Namespace)
		}
		out = append(out, res)
	}
	return out
}

// claims: each PersistentVolumeClaim the MiniCluster mounts exists and is Bound, or Pending in a
// StorageClass that binds when the first pod using it is scheduled (WaitForFirstConsumer). A claim
// that allows one node (ReadWriteOnce) or one pod (ReadWriteOncePod), mounted by several broker
// pods, is said too.
func claims(c *Cluster, r *Render, ns *Namespace) []Result {
	var out []Result
	names, pods := r.claimNames()
	job := r.brokerJob()
	onePerNode := job != nil && requiresOnePerNode(&job.Spec.Template.Spec, job.Spec.Template.Labels)
	for _, name := range names {
		res := Result{Check: "claim", Scope: r.Scope(), File: r.File}
		claim := Claim{Err: fmt.Errorf("not read")}
		if ns != nil {
			if cl, ok := ns.Claims[name]; ok {
				claim = cl
			}
		}
		what := "PersistentVolumeClaim " + name
		switch {
		case apierrors.IsNotFound(claim.Err):
			res.Status, res.Message = Failed, fmt.Sprintf("%s does not exist in namespace %s: the pods that mount it stay Pending", what, r.Namespace)
			res.Fix = "create the claim before the MiniCluster, or change spec.containers[].volumes"
		case claim.Err != nil:
			res.Status, res.Message, res.Fix = Unknown, cannotTell("get "+what+" in namespace "+r.Namespace, claim.Err), rightFix("get", "persistentvolumeclaims", " in namespace "+r.Namespace)
		default:
			res.Status, res.Message, res.Fix = claimPhase(c, claim.PVC)
		}
		if res.Status == Passed && pods[name] > 1 {
			modes := claim.PVC.Spec.AccessModes
			switch {
			case slices.Equal(modes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}):
				res.Status = Failed
				res.Message += fmt.Sprintf(", but its access mode ReadWriteOncePod lets one pod mount it, and %d pods do", pods[name])
				res.Fix = "use a claim whose access mode is ReadWriteMany or ReadOnlyMany, or one claim per broker"
			case !slices.Contains(modes, corev1.ReadWriteMany) && !slices.Contains(modes, corev1.ReadOnlyMany):
				res.Status = Unknown
				res.Message = fmt.Sprintf("cannot tell whether %d pods can share %s: its access modes (%s) let pods of one node only mount it", pods[name], what, accessModes(modes))
				res.Fix = "use a claim whose access mode is ReadWriteMany or ReadOnlyMany"
				if onePerNode {
					res.Status = Failed
					res.Message = fmt.Sprintf("%s allows pods of one node only (%s), and the brokers must run one per node", what, accessModes(modes))
				}
			}
		}
		out = append(out, res)
	}
	return out
}

func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var s []string
	for _, m := range modes {
		s = append(s, string(m))
	}
	return strings.Join(s, ", ")
}

// claimPhase judges a claim that exists.
func claimPhase(c *Cluster, pvc *corev1.PersistentVolumeClaim) (Status, string, string) {
	what := "PersistentVolumeClaim " + pvc.Name
	switch pvc.Status.Phase {
	case corev1.ClaimBound:
		return Passed, what + " is Bound", ""
	case corev1.ClaimLost:
		return Failed, what + " is Lost: its PersistentVolume is gone", "create the claim again (and restore its data)"
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	describe := "kubectl describe pvc -n " + pvc.Namespace + " " + pvc.Name
	if class == "" {
		return Failed, what + " is Pending without a StorageClass: no PersistentVolume matches it yet", "create a PersistentVolume it binds to, or a claim of a StorageClass that provisions one; see " + describe
	}
	if c.StorageClassesErr != nil {
		return Unknown, what + " is Pending; " + cannotTell("read StorageClass "+class+" (whether it binds when a pod is scheduled)", c.StorageClassesErr), rightFix("get", "storageclasses", "")
	}
	i := slices.IndexFunc(c.StorageClasses, func(sc storagev1.StorageClass) bool { return sc.Name == class })
	if i < 0 {
		return Failed, fmt.Sprintf("%s is Pending: its StorageClass %s does not exist", what, class), "use a StorageClass of the cluster (kubectl get storageclass)"
	}
	if m := c.StorageClasses[i].VolumeBindingMode; m != nil && *m == storagev1.VolumeBindingWaitForFirstConsumer {
		return Passed, fmt.Sprintf("%s is Pending until the first pod that mounts it is scheduled (StorageClass %s binds WaitForFirstConsumer)", what, class), ""
	}
	return Failed, fmt.Sprintf("%s is Pending: StorageClass %s binds at once (Immediate), and no volume was provisioned or matched", what, class), "see why: " + describe
}
