package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// inlineCertDoc is a MiniCluster with the certificate inline, indented for spec.flux.curveCert,
// followed by extra (which may break it).
func inlineCertDoc(t *testing.T, cert, annotations, extra string) string {
	t.Helper()
	indented := "      " + strings.ReplaceAll(strings.TrimSuffix(cert, "\n"), "\n", "\n      ")
	return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n" + annotations +
		"spec:\n  size: 2\n  flux:\n    curveCert: |\n" + indented + "\n  containers: [{image: ubuntu:noble, command: hostname}]\n" + extra
}

// TestSecretKeyNeverInMessages: whatever is wrong around an inline certificate, no message of
// render, validate or the KRM function (stderr, KRM results) holds any piece of its secret key.
func TestSecretKeyNeverInMessages(t *testing.T) {
	cert := string(deterministicCert(t, "flux-sample").Marshal())
	secret := secretKeyZ85(t, cert)
	mapCert := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: flux-sample}\nspec:\n  flux:\n    curveCert: {secret-key: \"" +
		secret + "\"}\n  containers: [{image: ubuntu:noble}]\n"
	listCert := strings.Replace(mapCert, `{secret-key: "`+secret+`"}`, `["`+secret+`"]`, 1)
	for _, tc := range []struct {
		name, doc string
		valid     bool
	}{
		{"valid", inlineCertDoc(t, cert, "", ""), true},
		{"unknown field", inlineCertDoc(t, cert, "", "  sizee: 3\n"), false},
		{"with curve-secret", inlineCertDoc(t, cert, "  annotations: {minicluster-fn.dev/curve-secret: s}\n", ""), false},
		{"invalid size", strings.Replace(inlineCertDoc(t, cert, "", ""), "size: 2", "size: -2", 1), false},
		{"certificate as a mapping", mapCert, false},
		{"certificate as a list", listCert, false},
		{"YAML breaks after the key", inlineCertDoc(t, cert, "", "  x: [\n"), false},
		{"YAML breaks inside the certificate", strings.Replace(inlineCertDoc(t, cert, "", ""), "      curve\n", "  curve: ]\n", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, args := range [][]string{{"render", "-"}, {"validate", "-"}} {
				stdout, stderr, err := runCmd(t, tc.doc, args...)
				if (err == nil) != tc.valid {
					t.Fatalf("%v: err = %v, stderr:\n%s", args, err, stderr)
				}
				assertNoSecret(t, stderr, secret)
				if args[0] == "validate" || !tc.valid {
					assertNoSecret(t, stdout, secret)
				} else if !strings.Contains(stdout, base64.StdEncoding.EncodeToString([]byte(cert))) {
					// The certificate Secret's data: base64 of the certificate as given.
					t.Error("render's output lacks the inline certificate: the test's secret is not the one rendered")
				}
			}
			// The KRM function: its results hold messages only (the items are the input as given).
			rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " +
				strings.ReplaceAll(strings.TrimSuffix(tc.doc, "\n"), "\n", "\n  ") + "\n"
			stdout, stderr, err := runCmd(t, rl)
			if (err == nil) != tc.valid {
				t.Errorf("KRM: err = %v", err)
			}
			assertNoSecret(t, stderr, secret)
			var out struct {
				Results []map[string]any `json:"results"`
			}
			if err := yaml.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("KRM output does not parse: %v\n%s", err, stdout)
			}
			results, _ := yaml.Marshal(out.Results)
			assertNoSecret(t, string(results), secret)
			if !tc.valid && len(out.Results) == 0 && stderr == "" {
				t.Errorf("KRM: invalid input without results or message:\n%s", stdout)
			}
		})
	}
}
