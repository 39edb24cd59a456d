package v1alpha2_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// indexes are the list indexes and map keys of a field path.
var indexes = regexp.MustCompile(`\[[^\]]*\]`)

const legacyHead = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: old}\n"

// legacyCases are one MiniCluster per field of the operator's v1alpha1 API that v1alpha2 lacks,
// written as a v1alpha1 user would have, with the path the error must name and what the message
// must say about v1alpha2.
var legacyCases = []struct {
	name, spec, path, v1alpha2 string
}{
	{"spec.volumes",
		"spec: {size: 2, volumes: {data: {storageClass: hostpath, path: /tmp/data}}, containers: [{image: a, volumes: {data: {path: /data}}}]}",
		"spec.volumes", "spec.containers[].volumes.<name>.claimName"},
	{"spec.users",
		"spec: {users: [{name: alice}], containers: [{image: a}]}",
		"spec.users", "v1alpha2 has no such field"},
	{"spec.fluxRestful",
		"spec: {fluxRestful: {port: 5000}, containers: [{image: a}]}",
		"spec.fluxRestful", "v1alpha2 has no such field"},
	{"spec.flux.curveCertSecret",
		"spec: {flux: {curveCertSecret: flux-curve}, containers: [{image: a}]}",
		"spec.flux.curveCertSecret", "minicluster-fn.dev/curve-secret"},
	{"spec.flux.installRoot",
		"spec: {flux: {installRoot: /opt/flux}, containers: [{image: a}]}",
		"spec.flux.installRoot", "spec.flux.container"},
	{"containers existingVolumes",
		"spec: {containers: [{image: a, existingVolumes: {data: {claimName: data, path: /data}}}]}",
		"spec.containers[0].existingVolumes", "the v1alpha2 form is spec.containers[].volumes"},
	{"containers addCapabilities",
		"spec: {containers: [{image: a, securityContext: {privileged: true, addCapabilities: [SYS_PTRACE]}}]}",
		"spec.containers[0].securityContext.addCapabilities", "the v1alpha2 form is spec.containers[].securityContext.capabilities.add"},
	{"containers cores",
		"spec: {containers: [{image: a, cores: 4}]}",
		"spec.containers[0].cores", "v1alpha2 has no such field"},
	{"containers diagnostics",
		"spec: {containers: [{image: a, diagnostics: true}]}",
		"spec.containers[0].diagnostics", "v1alpha2 has no such field"},
	{"containers fluxUser",
		"spec: {containers: [{image: a, fluxUser: {name: flux, uid: 1000}}]}",
		"spec.containers[0].fluxUser", "spec.containers[].securityContext.runAsUser"},
	{"containers runFluxAsRoot",
		"spec: {containers: [{image: a, commands: {runFluxAsRoot: true}}]}",
		"spec.containers[0].commands.runFluxAsRoot", "spec.containers[].securityContext.runAsUser"},
	{"services existingVolumes",
		"spec: {containers: [{image: a}], services: [{name: s, image: b}, {name: t, image: b, existingVolumes: {d: {secretName: x}}}]}",
		"spec.services[1].existingVolumes", "the v1alpha2 form is spec.services[].volumes"},
	{"services addCapabilities",
		"spec: {containers: [{image: a}], services: [{name: s, image: b, securityContext: {addCapabilities: [NET_ADMIN]}}]}",
		"spec.services[0].securityContext.addCapabilities", "the v1alpha2 form is spec.services[].securityContext.capabilities.add"},
	{"services cores",
		"spec: {containers: [{image: a}], services: [{name: s, image: b, cores: 1}]}",
		"spec.services[0].cores", "v1alpha2 has no such field"},
	{"services diagnostics",
		"spec: {containers: [{image: a}], services: [{name: s, image: b, diagnostics: true}]}",
		"spec.services[0].diagnostics", "v1alpha2 has no such field"},
	{"services fluxUser",
		"spec: {containers: [{image: a}], services: [{name: s, image: b, fluxUser: {name: flux}}]}",
		"spec.services[0].fluxUser", "spec.services[].securityContext.runAsUser"},
	{"services runFluxAsRoot",
		"spec: {containers: [{image: a}], services: [{name: s, image: b, commands: {runFluxAsRoot: true}}]}",
		"spec.services[0].commands.runFluxAsRoot", "spec.services[].securityContext.runAsUser"},
}

// TestLegacyFields: each v1alpha1 field is refused with a message that names the field, says it
// belongs to the older API and says what v1alpha2 has instead, never "check the spelling".
func TestLegacyFields(t *testing.T) {
	for _, c := range legacyCases {
		t.Run(c.name, func(t *testing.T) {
			_, errs := v1alpha2.Decode([]byte(legacyHead + c.spec))
			var found *field.Error
			for _, e := range errs {
				if e.Field == c.path {
					found = e
				} else {
					t.Errorf("unexpected error: %v", e)
				}
			}
			if found == nil {
				t.Fatalf("no error for %s; got %v", c.path, errs)
			}
			msg := found.Error()
			for _, want := range []string{"unknown field", "older API (v1alpha1)", c.v1alpha2} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "check the spelling") {
				t.Errorf("message %q sends a v1alpha1 user to check the spelling", msg)
			}
		})
	}
}

// TestLegacyFieldHintOnlyForLegacyPaths: typos, and fields of the same name elsewhere, get no
// v1alpha1 hint.
func TestLegacyFieldHintOnlyForLegacyPaths(t *testing.T) {
	for _, p := range []string{
		"spec.sizee", "spec.containers[0].comand", "spec.volume", "spec.containers[0].volumes[data].pth",
		"spec.flux.container.installRoot", "spec.pod.cores", "metadata.users", "spec.containers[0].securityContext.addCapability",
		"spec.network.volumes",
	} {
		if hint := v1alpha2.LegacyFieldHint(p); hint != "" {
			t.Errorf("LegacyFieldHint(%q) = %q, want none", p, hint)
		}
	}
	_, errs := v1alpha2.Decode([]byte(legacyHead + "spec: {containers: [{image: a, comand: x}]}"))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "did you mean spec.containers[0].command?") || strings.Contains(errs[0].Error(), "v1alpha1") {
		t.Errorf("a typo: got %v, want the nearest field and no v1alpha1 hint", errs)
	}
}

// TestLegacyFieldsOfCorpus: the operator's examples that still use v1alpha1 fields get the hint
// for each of them; no unknown field of the corpus is left with "check the spelling".
func TestLegacyFieldsOfCorpus(t *testing.T) {
	inputs, err := outputcheck.Corpus()
	if errors.Is(err, outputcheck.ErrNoCorpus) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// What the message must name, by the path with its indexes left out.
	v1alpha2Form := map[string]string{}
	for _, c := range legacyCases {
		v1alpha2Form[indexes.ReplaceAllString(c.path, "[]")] = c.v1alpha2
	}
	legacy := 0
	for _, in := range inputs {
		_, errs := v1alpha2.Decode(in.Doc)
		for _, e := range errs {
			if !strings.Contains(e.Detail, "unknown field") {
				continue
			}
			want, ok := v1alpha2Form[indexes.ReplaceAllString(e.Field, "[]")]
			if !ok {
				t.Errorf("%s: %v: an unknown field that is not a v1alpha1 field", in.Name, e)
				continue
			}
			legacy++
			if !strings.Contains(e.Detail, want) || !strings.Contains(e.Detail, "older API (v1alpha1)") {
				t.Errorf("%s: %v: the message does not say %q", in.Name, e, want)
			}
			t.Logf("%s: %v", in.Name, e)
		}
	}
	if legacy == 0 {
		t.Fatal("no corpus file uses a v1alpha1 field: the corpus changed, so this test checks nothing")
	}
}

// TestOtherVersions: a MiniCluster of another version of the group is refused at its apiVersion;
// a v1alpha1 one is pointed to the table of the older API's fields in the docs, which must exist.
func TestOtherVersions(t *testing.T) {
	for apiVersion, want := range map[string]string{
		"flux-framework.org/v1alpha1": "docs/differences-from-operator.md",
		"flux-framework.org/v1beta1":  "reads MiniClusters of apiVersion flux-framework.org/v1alpha2 only",
	} {
		_, errs := v1alpha2.Decode([]byte("apiVersion: " + apiVersion + "\nkind: MiniCluster\nmetadata: {name: a}\nspec: {containers: [{image: a}]}\n"))
		if len(errs) != 1 || errs[0].Field != "apiVersion" || !strings.Contains(errs[0].Detail, want) {
			t.Errorf("%s: %v, want one error at apiVersion saying %q", apiVersion, errs, want)
		}
	}
	for apiVersion, kind := range map[string]string{"v1": "ConfigMap", "flux-framework.org/v1alpha2": "MiniCluster", "example.com/v1alpha1": "MiniCluster"} {
		if d := v1alpha2.OtherVersionDetail(apiVersion, kind); d != "" {
			t.Errorf("OtherVersionDetail(%s, %s) = %q, want none", apiVersion, kind, d)
		}
	}
	docs, err := os.ReadFile("../../docs/differences-from-operator.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docs), "## Fields of the operator's older API") {
		t.Error(`docs/differences-from-operator.md has no section "Fields of the operator's older API", which the v1alpha1 message names`)
	}
}
