package fluxcd

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// API versions and kinds of the Flux CD objects written here (the GA APIs of Flux v2.x).
const (
	KustomizationAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	KustomizationKind       = "Kustomization"
	SourceAPIVersion        = "source.toolkit.fluxcd.io/v1"
	GitRepositoryKind       = "GitRepository"
	OCIRepositoryKind       = "OCIRepository"
)

// The types below are the subsets of the Flux CD API types that this package fills in, with the
// same JSON names. The full types live in github.com/fluxcd/kustomize-controller/api and
// github.com/fluxcd/source-controller/api, whose packages register themselves in a
// controller-runtime scheme; the binary needs none of that to print YAML. The field types shared
// by all Flux CD APIs come from github.com/fluxcd/pkg/apis/meta, and the tests decode the output
// strictly (unknown fields are errors) into the full types.

// objectMeta is the metadata written: no creationTimestamp, no status.
type objectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Kustomization is a kustomize.toolkit.fluxcd.io/v1 Kustomization.
type Kustomization struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        objectMeta        `json:"metadata"`
	Spec            KustomizationSpec `json:"spec"`
}

// KustomizationSpec has the fields of the upstream KustomizationSpec that are set here. Prune and
// Wait are written even when false, so a reader sees the choice.
type KustomizationSpec struct {
	Interval        metav1.Duration                      `json:"interval"`
	RetryInterval   *metav1.Duration                     `json:"retryInterval,omitempty"`
	Timeout         *metav1.Duration                     `json:"timeout,omitempty"`
	Path            string                               `json:"path"`
	Prune           bool                                 `json:"prune"`
	Wait            bool                                 `json:"wait"`
	SourceRef       SourceReference                      `json:"sourceRef"`
	TargetNamespace string                               `json:"targetNamespace"`
	HealthChecks    []meta.NamespacedObjectKindReference `json:"healthChecks,omitempty"`
}

// SourceReference is the upstream CrossNamespaceSourceReference.
type SourceReference struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// GitRepository is a source.toolkit.fluxcd.io/v1 GitRepository.
type GitRepository struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        objectMeta        `json:"metadata"`
	Spec            GitRepositorySpec `json:"spec"`
}

// GitRepositorySpec has the fields of the upstream GitRepositorySpec that are set here.
type GitRepositorySpec struct {
	URL       string                     `json:"url"`
	Interval  metav1.Duration            `json:"interval"`
	Reference *GitRepositoryRef          `json:"ref,omitempty"`
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
}

// GitRepositoryRef selects the branch or tag to follow.
type GitRepositoryRef struct {
	Branch string `json:"branch,omitempty"`
	Tag    string `json:"tag,omitempty"`
}

// OCIRepository is a source.toolkit.fluxcd.io/v1 OCIRepository.
type OCIRepository struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        objectMeta        `json:"metadata"`
	Spec            OCIRepositorySpec `json:"spec"`
}

// OCIRepositorySpec has the fields of the upstream OCIRepositorySpec that are set here.
type OCIRepositorySpec struct {
	URL       string                     `json:"url"`
	Interval  metav1.Duration            `json:"interval"`
	Reference *OCIRepositoryRef          `json:"ref,omitempty"`
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
}

// OCIRepositoryRef selects the artifact tag to follow.
type OCIRepositoryRef struct {
	Tag string `json:"tag,omitempty"`
}
