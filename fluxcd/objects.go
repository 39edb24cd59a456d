// Package fluxcd writes the Flux CD objects (a source and a kustomize.toolkit.fluxcd.io/v1
// Kustomization) that apply a directory of rendered MiniClusters. Flux CD's kustomize-controller
// runs no KRM functions, so MiniClusters reach it rendered: in Git or as an OCI artifact.
//
// The health checks follow how kustomize-controller judges objects. Its Job status reader
// (fluxcd/pkg runtime/statusreaders/job.go, "Modified to return Current status only when the Job
// has completed") calls a Job Current only once its Complete condition is True, Failed when
// Failed is True, and InProgress while it runs; upstream kstatus would call a running Job
// Current. kustomize-controller puts that reader first in the poller
// (internal/controller/kustomization_controller.go getClientAndPoller, v1.9.4), before the reader
// of spec.healthCheckExprs, and the poller uses the first reader that supports a kind
// (fluxcd/cli-utils kstatus/polling/engine statusReaderForGroupKind), so a CEL expression cannot
// make a running Job healthy. (With spec.serviceAccountName or spec.kubeConfig the impersonating
// client puts the CEL reader first, fluxcd/pkg runtime/client/impersonator.go newStatusPoller;
// nothing here writes CEL for Jobs, so that changes nothing.) Hence a broker Job is health-checked
// only when it runs to completion: a persistent cluster's Kustomization would never be Ready.
// Services, ConfigMaps and Secrets are Current once they exist, a Pod once it is Ready.
package fluxcd

import (
	"io"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Options are the settings of the Flux CD objects. The caller validates them.
type Options struct {
	// Name and Namespace of both the source and the Kustomization.
	Name, Namespace string
	// TargetNamespace is where the MiniClusters' objects go; the rendered objects have no
	// namespace, and kustomize-controller rejects namespaced objects without one.
	TargetNamespace string
	// SourceKind is GitRepositoryKind or OCIRepositoryKind.
	SourceKind string
	URL        string
	// Branch (Git only) or Tag to follow.
	Branch, Tag string
	// SecretRef names the Secret with the credentials of the source, if any.
	SecretRef string
	// Path of the rendered directory inside the source.
	Path string
	// SourceInterval is how often the source is checked for changes; Interval how often the
	// Kustomization is applied again (drift correction); RetryInterval how soon a failed
	// reconciliation is retried; Timeout bounds build, apply and health checks.
	SourceInterval, Interval, RetryInterval, Timeout time.Duration
	// BrokerHealthChecks adds the broker Jobs that run to completion to the health checks.
	BrokerHealthChecks bool
}

// Objects returns the source and the Kustomization for the rendered MiniClusters, and a note for
// each broker Job that is not health-checked.
func Objects(clusters []MiniCluster, o Options) (source runtime.Object, ks *kustomizev1.Kustomization, notes []string) {
	metadata := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace}
	sourceInterval := metav1.Duration{Duration: o.SourceInterval}
	if o.SourceKind == OCIRepositoryKind {
		source = &sourcev1.OCIRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: SourceAPIVersion, Kind: OCIRepositoryKind},
			ObjectMeta: metadata,
			Spec: sourcev1.OCIRepositorySpec{URL: o.URL, Interval: sourceInterval,
				Reference: &sourcev1.OCIRepositoryRef{Tag: o.Tag}, SecretRef: secretRef(o.SecretRef)},
		}
	} else {
		source = &sourcev1.GitRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: SourceAPIVersion, Kind: GitRepositoryKind},
			ObjectMeta: metadata,
			Spec: sourcev1.GitRepositorySpec{URL: o.URL, Interval: sourceInterval,
				Reference: &sourcev1.GitRepositoryRef{Branch: o.Branch, Tag: o.Tag}, SecretRef: secretRef(o.SecretRef)},
		}
	}
	var checks []meta.NamespacedObjectKindReference
	check := func(apiVersion, kind, name string) {
		checks = append(checks, meta.NamespacedObjectKindReference{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: o.TargetNamespace})
	}
	for _, mc := range clusters {
		if mc.KeygenJob != "" {
			check("batch/v1", "Job", mc.KeygenJob)
		}
		// The certificate the brokers mount: without it kubelet never starts them. This also
		// catches a missing user Secret, or a certificate deleted after the keygen Job ran.
		if mc.Curve != "" {
			check("v1", mc.CurveKind, mc.Curve)
		}
		check("v1", "Service", mc.Service)
		if mc.ServicesPod != "" {
			check("v1", "Pod", mc.ServicesPod)
		}
		switch {
		case !o.BrokerHealthChecks:
		case mc.Persistent != "":
			notes = append(notes, "MiniCluster "+mc.Name+": broker Job "+mc.BrokerJob+" is not health-checked ("+mc.Persistent+
				"); see its pods with: kubectl -n "+o.TargetNamespace+" get job,pods -l app.kubernetes.io/instance="+mc.Name)
		default:
			check("batch/v1", "Job", mc.BrokerJob)
		}
	}
	ks = &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: KustomizationAPIVersion, Kind: KustomizationKind},
		ObjectMeta: metadata,
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: o.Interval},
			RetryInterval: &metav1.Duration{Duration: o.RetryInterval},
			Timeout:       &metav1.Duration{Duration: o.Timeout},
			Path:          o.Path,
			// Prune removes what a new revision no longer has: a changed MiniCluster's Job under
			// its old hash name, a deleted MiniCluster.
			Prune: true,
			// wait: true would check every object, the broker Job of a persistent cluster too.
			Wait:            false,
			SourceRef:       kustomizev1.CrossNamespaceSourceReference{Kind: o.SourceKind, Name: o.Name},
			TargetNamespace: o.TargetNamespace,
			HealthChecks:    checks,
		},
	}
	return source, ks, notes
}

func secretRef(name string) *meta.LocalObjectReference {
	if name == "" {
		return nil
	}
	return &meta.LocalObjectReference{Name: name}
}

// WriteYAML writes the objects as one YAML stream, without status (the controllers write it) and
// without empty metadata.
func WriteYAML(w io.Writer, objs ...runtime.Object) error {
	for i, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		delete(u, "status")
		data, err := yaml.Marshal(u)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}
