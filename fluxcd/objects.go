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
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
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
	// BrokerHealthChecks checks that the broker Jobs of MiniClusters that run to completion
	// complete (wait: true for their directories).
	BrokerHealthChecks bool
	// Insecure lets an OCIRepository use plain HTTP (a registry on loopback, say).
	Insecure bool
}

// Objects returns the source and one Kustomization for each directory of rendered MiniClusters,
// and a note for each broker Job that is not health-checked.
//
// The health checks never name an object whose name changes with an edit. The Kustomizations
// are themselves applied from Git (by the user's flux-system Kustomization, say), through another
// source object or at another moment than the rendered directory: a health check naming the new
// revision's hash-named Job could reach the cluster before that revision is applied, or an old
// check could name a Job the new revision pruned, and kustomize-controller would wait for it
// until the timeout. So a directory whose MiniClusters all run to completion gets wait: true:
// kustomize-controller then checks every object of the revision it applied (the keygen and
// broker Jobs until they complete), whatever the Kustomization was written for. A directory with a
// MiniCluster whose broker Job never completes cannot use wait (that Job would never be healthy);
// its Kustomization checks the certificate, the headless Service and the services Pod, whose names
// an edit of the command or size does not change.
func Objects(clusters []MiniCluster, o Options) (source runtime.Object, kss []*kustomizev1.Kustomization, notes []string, err error) {
	metadata := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace}
	sourceInterval := metav1.Duration{Duration: o.SourceInterval}
	if o.SourceKind == OCIRepositoryKind {
		source = &sourcev1.OCIRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: SourceAPIVersion, Kind: OCIRepositoryKind},
			ObjectMeta: metadata,
			Spec: sourcev1.OCIRepositorySpec{URL: o.URL, Interval: sourceInterval, Insecure: o.Insecure,
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
	byDir := map[string][]MiniCluster{}
	for _, mc := range clusters {
		byDir[mc.Dir] = append(byDir[mc.Dir], mc)
	}
	owner := map[string]string{} // Kustomization name -> directory
	var problems []error
	for _, dir := range slices.Sorted(maps.Keys(byDir)) {
		name := KustomizationName(o.Name, dir)
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			problems = append(problems, fmt.Errorf("directory %s: the Kustomization name %q it gets is not valid (%s): rename the directory, or give a shorter --name", dir, name, strings.Join(msgs, "; ")))
			continue
		}
		if other, ok := owner[name]; ok {
			problems = append(problems, fmt.Errorf("directories %s and %s both give the Kustomization name %q: rename one", other, dir, name))
			continue
		}
		owner[name] = dir
		ks, dirNotes := kustomization(name, dir, byDir[dir], o)
		kss = append(kss, ks)
		notes = append(notes, dirNotes...)
	}
	if len(problems) > 0 {
		return nil, nil, nil, errors.Join(problems...)
	}
	return source, kss, notes, nil
}

// KustomizationName is the name of the Kustomization that applies dir, a directory relative to
// the rendered one: the name of the source for the directory itself, else the name and the
// directory's path, with "/" and "_" as "-".
func KustomizationName(name, dir string) string {
	if dir == "." {
		return name
	}
	return name + "-" + strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(dir))
}

// kustomization applies one directory; see Objects for how its health is checked.
func kustomization(name, dir string, clusters []MiniCluster, o Options) (*kustomizev1.Kustomization, []string) {
	var notes []string
	var persistent []string
	for _, mc := range clusters {
		if mc.Persistent != "" {
			persistent = append(persistent, mc.Name)
		}
	}
	wait := o.BrokerHealthChecks && len(persistent) == 0
	var checks []meta.NamespacedObjectKindReference
	check := func(apiVersion, kind, name string) {
		checks = append(checks, meta.NamespacedObjectKindReference{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: o.TargetNamespace})
	}
	for _, mc := range clusters {
		see := "; see its pods with: kubectl -n " + o.TargetNamespace + " get job,pods -l " + contract.LabelMiniCluster + "=" + mc.Name
		switch {
		case wait:
			continue // every object of the revision is checked
		case !o.BrokerHealthChecks:
		case mc.Persistent != "":
			notes = append(notes, "MiniCluster "+mc.Name+": broker Job "+mc.BrokerJob+" is not health-checked ("+mc.Persistent+")"+see)
		default:
			notes = append(notes, "MiniCluster "+mc.Name+": broker Job "+mc.BrokerJob+" is not health-checked: directory "+dir+
				" also holds "+strings.Join(persistent, ", ")+", whose broker Job never completes; render each MiniCluster file into its own directory (render.sh does)"+see)
		}
		// The certificate the brokers mount: it exists once the keygen Job has run (whose own name
		// is a hash), and without it kubelet never starts the brokers. This also catches a missing
		// user Secret, or a certificate deleted after the keygen Job ran.
		if mc.Curve != "" {
			check("v1", mc.CurveKind, mc.Curve)
		}
		check("v1", "Service", mc.Service)
		if mc.ServicesPod != "" {
			check("v1", "Pod", mc.ServicesPod)
		}
	}
	p := o.Path
	if dir != "." {
		p = "./" + path.Join(o.Path, dir)
	}
	return &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: KustomizationAPIVersion, Kind: KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace},
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: o.Interval},
			RetryInterval: &metav1.Duration{Duration: o.RetryInterval},
			Timeout:       &metav1.Duration{Duration: o.Timeout},
			Path:          p,
			// Prune removes what a new revision no longer has: a changed MiniCluster's Job under
			// its old hash name, a deleted MiniCluster.
			Prune:           true,
			Wait:            wait,
			SourceRef:       kustomizev1.CrossNamespaceSourceReference{Kind: o.SourceKind, Name: o.Name},
			TargetNamespace: o.TargetNamespace,
			HealthChecks:    checks,
		},
	}, notes
}

func secretRef(name string) *meta.LocalObjectReference {
	if name == "" {
		return nil
	}
	return &meta.LocalObjectReference{Name: name}
}
