package fluxcd

import (
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
)

// API versions and kinds of the Flux CD objects written here (the GA APIs of Flux v2.x), whose
// types come from the controllers' API modules.
const (
	KustomizationAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	KustomizationKind       = kustomizev1.KustomizationKind
	SourceAPIVersion        = "source.toolkit.fluxcd.io/v1"
	GitRepositoryKind       = sourcev1.GitRepositoryKind
	OCIRepositoryKind       = sourcev1.OCIRepositoryKind
)
