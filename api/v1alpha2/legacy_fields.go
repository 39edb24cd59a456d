package v1alpha2

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// legacyHintPrefix opens every hint, so a reader sees at once that the field is not a typo.
const legacyHintPrefix = "belongs to the operator's older API (v1alpha1); "

// legacyContainerHints are the per-container fields; they apply to spec.containers[] and
// spec.services[] alike, and name the v1alpha2 form under the same list.
var legacyContainerHints = map[string]func(list string) string{
	"existingVolumes": func(list string) string {
		return "the v1alpha2 form is " + list + "[].volumes, with the same keys (path, claimName, configMapName, items, secretName, readOnly)"
	},
	"securityContext.addCapabilities": func(list string) string {
		return "the v1alpha2 form is " + list + "[].securityContext.capabilities.add, as in a Kubernetes container"
	},
	"cores": func(string) string {
		return "v1alpha2 has no such field: each broker registers the cores its pod sees (flux R encode --local); size the pod with resources"
	},
	"diagnostics": func(string) string {
		return "v1alpha2 has no such field: the diagnostics mode was removed; run the checks in the command"
	},
	"fluxUser": func(list string) string {
		return "v1alpha2 has no such field: Flux runs as the container's own user (" + list + "[].securityContext.runAsUser)"
	},
	"commands.runFluxAsRoot": func(list string) string {
		return "v1alpha2 has no such field: Flux runs as the container's own user (" + list + "[].securityContext.runAsUser)"
	},
}

// legacySpecHints are the other fields, by their path under spec.
var legacySpecHints = map[string]string{
	"volumes": "v1alpha2 has no such field and creates no storage (v1alpha1 made a PersistentVolume and claim from it): " +
		"create the claim yourself and mount it per container with spec.containers[].volumes.<name>.claimName " +
		"and .path, or use .hostPath, .csiDriver, .secretName, .configMapName or .emptyDir there",
	"users": "v1alpha2 has no such field: it runs Flux in single-user mode, as the container's user",
	"fluxRestful": "v1alpha2 has no such field: the RESTful API server mode was removed; " +
		"run such a server as a container of spec.containers or spec.services",
	"flux.curveCertSecret": "v1alpha2 has no such field, only spec.flux.curveCert (the certificate inline); " +
		"to mount an existing Secret with minicluster-fn, set the annotation " + CurveSecretAnnotation + ": <Secret name>",
	"flux.installRoot": "v1alpha2 has no such field: Flux comes from the view container (spec.flux.container), " +
		"mounted at spec.flux.container.mountPath, not from the application image",
}

// bracketed matches the list indexes and map keys of a field path, `[0]` or `[data]`.
var bracketed = regexp.MustCompile(`\[[^\]]*\]`)

// LegacyFieldHint says where an unknown field of a MiniCluster went, if it is a v1alpha1 field:
// path is the field's path as field.Path prints it (spec.containers[0].existingVolumes). It is ""
// for any other path.
//
// The hints are for the fields of the operator's older API, flux-framework.org/v1alpha1 (last
// released as operator 0.1.1), that v1alpha2 renamed, moved or removed. Files written for
// v1alpha1 still carry them,
// six of the operator's own examples among them. "Check the spelling" would send their authors
// the wrong way, so the unknown-field message says where the field went instead.
//
// Their list is the difference between the v1alpha1 schema of every released operator version and
// the v1alpha2 schema, reduced to the topmost field of each removed subtree: a strict decoder
// reports only that one.
func LegacyFieldHint(path string) string {
	shape := bracketed.ReplaceAllString(path, "[]")
	for _, list := range []string{"spec.containers", "spec.services"} {
		if rest, ok := strings.CutPrefix(shape, list+"[]."); ok {
			if hint, ok := legacyContainerHints[rest]; ok {
				return legacyHintPrefix + hint(list)
			}
			return ""
		}
	}
	if rest, ok := strings.CutPrefix(shape, "spec."); ok {
		if hint, ok := legacySpecHints[rest]; ok {
			return legacyHintPrefix + hint
		}
	}
	return ""
}

// OtherVersionDetail says what to do with a MiniCluster of another version of the
// flux-framework.org group than v1alpha2, which this package does not read; it is "" for any other
// document. A v1alpha1 file is pointed to the table that maps the older API's fields: once its
// apiVersion says v1alpha2, every field still in the older form is an unknown field with its hint.
func OtherVersionDetail(apiVersion, kind string) string {
	if kind != Kind || apiVersion == APIVersion || !strings.HasPrefix(apiVersion, Group+"/") {
		return ""
	}
	if apiVersion == Group+"/v1alpha1" {
		return apiVersion + " is the operator's older API, which minicluster-fn does not read: set apiVersion: " + APIVersion +
			` and move the fields v1alpha2 renamed or removed; the table "Fields of the operator's older API" in ` +
			"docs/differences-from-operator.md maps each of them, and validate then names every one left"
	}
	return "minicluster-fn reads MiniClusters of apiVersion " + APIVersion + " only, not " + apiVersion
}

// UnknownFieldDetail is the message for a field that is not in the v1alpha2 schema: where a
// v1alpha1 field went, else the known fields whose names are nearest (didYouMean, full paths),
// else a pointer to the spelling.
func UnknownFieldDetail(p *field.Path, didYouMean []string) string {
	if hint := LegacyFieldHint(p.String()); hint != "" {
		return "unknown field: " + hint
	}
	if len(didYouMean) > 0 {
		return "unknown field: not in the MiniCluster v1alpha2 schema; did you mean " + strings.Join(didYouMean, " or ") + "?"
	}
	return "unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"
}
