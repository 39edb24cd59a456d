package main

import (
	"bytes"
	"encoding/base64"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// countingReader yields 0, 1, 2, ... so generated keys are the same on every run.
type countingReader struct{ next byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.next
		r.next++
	}
	return len(p), nil
}

// runKeygenCLI runs the root command with args, as a user would, with deterministic randomness.
func runKeygenCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	saved := keygenRand
	keygenRand = &countingReader{}
	t.Cleanup(func() { keygenRand = saved })

	var out, errOut bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = execute(cmd)
	return out.String(), errOut.String(), err
}

// checkKeygenGolden compares got with testdata/keygen/name, or rewrites it with -update.
func checkKeygenGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "keygen", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Keygen -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -run Keygen -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// deterministicCert is the certificate the tests' reader produces for name.
func deterministicCert(t *testing.T, name string) *curve.Cert {
	t.Helper()
	c, err := curve.Generate(name, &countingReader{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKeygenGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"cert.golden", []string{"keygen"}},
		{"cert-name.golden", []string{"keygen", "--cert-name", "hello-world"}},
		{"configmap.yaml", []string{"keygen", "--cert-name", "hello", "--output", "configmap", "--name", "hello-curve"}},
		{"secret.yaml", []string{"keygen", "--cert-name", "hello", "-o", "secret", "--name", "hello-curve", "--namespace", "flux"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			stdout, stderr, err := runKeygenCLI(t, "", tt.args...)
			if err != nil {
				t.Fatalf("keygen failed: %v\nstderr:\n%s", err, stderr)
			}
			if stderr != "" {
				t.Errorf("unexpected stderr:\n%s", stderr)
			}
			if strings.Contains(stdout, "creationTimestamp") {
				t.Errorf("output contains creationTimestamp:\n%s", stdout)
			}
			checkKeygenGolden(t, tt.golden, stdout)
		})
	}
}

func TestKeygenCertRoundTrips(t *testing.T) {
	stdout, stderr, err := runKeygenCLI(t, "", "keygen", "--cert-name", "hello")
	if err != nil {
		t.Fatalf("keygen failed: %v\n%s", err, stderr)
	}
	c, err := curve.Parse([]byte(stdout))
	if err != nil {
		t.Fatalf("generated certificate does not parse: %v", err)
	}
	if c.Name() != "hello" {
		t.Errorf("name = %q, want hello", c.Name())
	}
	if want := deterministicCert(t, "hello"); c.PublicKey != want.PublicKey || c.SecretKey != want.SecretKey {
		t.Errorf("keys do not come from the injected reader")
	}
}

func TestKeygenRealRandomness(t *testing.T) {
	// Without the test reader, two runs give different keys.
	var certs [2]*curve.Cert
	for i := range certs {
		var out, errOut bytes.Buffer
		cmd := newRootCmd()
		cmd.SetArgs([]string{"keygen"})
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		if err := execute(cmd); err != nil {
			t.Fatalf("keygen failed: %v\n%s", err, errOut.String())
		}
		c, err := curve.Parse(out.Bytes())
		if err != nil {
			t.Fatalf("generated certificate does not parse: %v", err)
		}
		certs[i] = c
	}
	if certs[0].SecretKey == certs[1].SecretKey {
		t.Error("two runs gave the same secret key")
	}
}

func TestKeygenManifestsCarryCert(t *testing.T) {
	want := string(deterministicCert(t, "hello").Marshal())

	stdout, stderr, err := runKeygenCLI(t, "", "keygen", "--cert-name", "hello", "--output", "secret", "--name", "hello-curve")
	if err != nil {
		t.Fatalf("keygen failed: %v\n%s", err, stderr)
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict([]byte(stdout), &s); err != nil {
		t.Fatalf("Secret does not decode: %v", err)
	}
	if s.APIVersion != "v1" || s.Kind != "Secret" || s.Type != corev1.SecretTypeOpaque || s.Name != "hello-curve" {
		t.Errorf("unexpected Secret header: %s %s %s %s", s.APIVersion, s.Kind, s.Type, s.Name)
	}
	if s.Labels["app.kubernetes.io/managed-by"] != "minicluster-fn" {
		t.Errorf("labels = %v", s.Labels)
	}
	if _, ok := s.Labels["app.kubernetes.io/instance"]; ok {
		t.Error("instance label set: render would take the Secret for its own output and replace it")
	}
	if got := s.StringData["curve.cert"]; got != want {
		t.Errorf("stringData[curve.cert] =\n%s\nwant\n%s", got, want)
	}

	stdout, stderr, err = runKeygenCLI(t, "", "keygen", "--cert-name", "hello", "--output", "configmap", "--name", "hello-curve")
	if err != nil {
		t.Fatalf("keygen failed: %v\n%s", err, stderr)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(stdout), &cm); err != nil {
		t.Fatalf("ConfigMap does not decode: %v", err)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Name != "hello-curve" || cm.Namespace != "" {
		t.Errorf("unexpected ConfigMap header: %s %s %s %q", cm.APIVersion, cm.Kind, cm.Name, cm.Namespace)
	}
	if got := cm.Data["curve.cert"]; got != want {
		t.Errorf("data[curve.cert] =\n%s\nwant\n%s", got, want)
	}
}

func TestKeygenCheckOK(t *testing.T) {
	cert, stderr, err := runKeygenCLI(t, "", "keygen", "--cert-name", "hello")
	if err != nil {
		t.Fatalf("keygen failed: %v\n%s", err, stderr)
	}
	file := filepath.Join(t.TempDir(), "curve.cert")
	if err := os.WriteFile(file, []byte(cert), 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := runKeygenCLI(t, "", "keygen", "check", file)
	if err != nil {
		t.Fatalf("keygen check failed: %v\n%s", err, stderr)
	}
	if want := "ok: " + file + ": CURVE certificate \"hello\"\n"; stdout != want || stderr != "" {
		t.Errorf("stdout = %q, stderr = %q; want stdout %q", stdout, stderr, want)
	}

	stdout, stderr, err = runKeygenCLI(t, cert, "keygen", "check", "-")
	if err != nil {
		t.Fatalf("check - failed: %v\n%s", err, stderr)
	}
	if want := "ok: -: CURVE certificate \"hello\"\n"; stdout != want {
		t.Errorf("stdout = %q, want %q", stdout, want)
	}
}

func TestKeygenCheckBad(t *testing.T) {
	c := deterministicCert(t, "hello")
	good := string(c.Marshal())
	secretZ85 := secretKeyZ85(t, good)
	lines := strings.SplitAfter(good, "\n")

	// Truncated in the middle of the secret key.
	truncated := good[:strings.Index(good, secretZ85)+10]
	// The two key values trade places.
	swapped := strings.NewReplacer(c.PublicKeyZ85(), secretZ85, secretZ85, c.PublicKeyZ85()).Replace(good)
	// No name entry in the metadata section.
	var noName strings.Builder
	for _, l := range lines {
		if !strings.Contains(l, "name =") {
			noName.WriteString(l)
		}
	}

	tests := []struct {
		name, cert, golden string
		want               []string // each must appear in stderr
	}{
		{"truncated", truncated, "check-truncated.stderr", []string{"line 8: secret-key: value is not double-quoted"}},
		{"truncated before keys", good[:strings.Index(good, "curve\n")], "check-no-keys.stderr", []string{`no "curve" section`}},
		{"keys swapped", swapped, "check-swapped.stderr", []string{"public-key does not match secret-key"}},
		{"missing name", noName.String(), "check-no-name.stderr", []string{`metadata has no "name" entry`}},
		{"empty", "", "check-empty.stderr", []string{"certificate is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "curve.cert")
			if err := os.WriteFile(file, []byte(tt.cert), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, err := runKeygenCLI(t, "", "keygen", "check", file)
			if err == nil {
				t.Fatal("keygen check succeeded on a bad certificate")
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, "error: "+file+": ") || !strings.Contains(stderr, w) {
					t.Errorf("stderr does not name the problem %q:\n%s", w, stderr)
				}
			}
			for _, l := range strings.SplitAfter(strings.TrimSuffix(stderr, "\n"), "\n") {
				if !strings.HasPrefix(l, "error: "+file+": ") {
					t.Errorf("stderr line %q is not an error line for the file", l)
				}
			}
			assertNoSecret(t, stderr, secretZ85)
			// The goldens name the file "-": the same input on stdin.
			_, stdinErr, _ := runKeygenCLI(t, tt.cert, "keygen", "check", "-")
			assertNoSecret(t, stdinErr, secretZ85)
			checkKeygenGolden(t, tt.golden, stdinErr)
		})
	}
}

func TestKeygenCheckMissingFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "absent.cert")
	_, stderr, err := runKeygenCLI(t, "", "keygen", "check", file)
	if err == nil {
		t.Fatal("check of a missing file succeeded")
	}
	if want := "error: " + file + ": no such file or directory\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}

// secretKeyZ85 returns the secret key text of a certificate file.
func secretKeyZ85(t *testing.T, cert string) string {
	t.Helper()
	_, rest, ok := strings.Cut(cert, `secret-key = "`)
	if !ok || len(rest) < 40 {
		t.Fatalf("no secret key in\n%s", cert)
	}
	return rest[:40]
}

// base64Run is a stretch of text that may be base64, as a Secret's data holds its values.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{12,}={0,2}`)

// assertNoSecret fails if text holds the secret key or any 8-character piece of it, as it is or
// in a base64 value (how a Secret would carry it).
func assertNoSecret(t *testing.T, text, secret string) {
	t.Helper()
	texts := []string{text}
	for _, run := range base64Run.FindAllString(text, -1) {
		if decoded, err := base64.StdEncoding.DecodeString(run); err == nil {
			texts = append(texts, string(decoded))
		}
	}
	for _, text := range texts {
		for i := 0; i+8 <= len(secret); i++ {
			if strings.Contains(text, secret[i:i+8]) {
				t.Fatalf("output leaks part of the secret key:\n%s", text)
			}
		}
	}
}

func TestKeygenFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"secret without name", []string{"keygen", "--output", "secret"}, "error: --output secret needs --name (the name of the Secret)"},
		{"configmap without name", []string{"keygen", "-o", "configmap"}, "error: --output configmap needs --name (the name of the ConfigMap)"},
		{"secret without cert name", []string{"keygen", "--output", "secret", "--name", "hello-cert"}, "error: --output secret needs --cert-name: the name of the MiniCluster that mounts the Secret"},
		{"configmap without cert name", []string{"keygen", "-o", "configmap", "--name", "hello-cert"}, "error: --output configmap needs --cert-name: the name of the MiniCluster that mounts the ConfigMap"},
		{"bad name", []string{"keygen", "--output", "secret", "--name", "Hello_Curve"}, `error: invalid argument "Hello_Curve" for "--name" flag: a lowercase RFC 1123 subdomain`},
		{"empty name", []string{"keygen", "--output", "secret", "--name", ""}, `error: invalid argument "" for "--name" flag: a lowercase RFC 1123 subdomain`},
		{"bad namespace", []string{"keygen", "--output", "secret", "--name", "x", "--namespace", "Flux_NS"}, `error: invalid argument "Flux_NS" for "--namespace" flag: a lowercase RFC 1123 label`},
		{"bad output", []string{"keygen", "--output", "yaml"}, `error: invalid argument "yaml" for "-o, --output" flag: must be cert, configmap or secret`},
		{"name with cert output", []string{"keygen", "--name", "x"}, "error: --name and --namespace only apply to --output configmap or --output secret"},
		{"empty cert name", []string{"keygen", "--cert-name", ""}, `error: invalid argument "" for "--cert-name" flag: certificate name is empty`},
		{"bad cert name", []string{"keygen", "--cert-name", "a_b"}, `error: invalid argument "a_b" for "--cert-name" flag: certificate name "a_b" contains '_'`},
		{"long cert name", []string{"keygen", "--cert-name", strings.Repeat("a", curve.MaxNameLength+1)}, `error: invalid argument "` + strings.Repeat("a", curve.MaxNameLength+1) + `" for "--cert-name" flag: certificate name is 243 bytes, longer than 242`},
		{"positional argument", []string{"keygen", "extra"}, `error: keygen takes no arguments, got "extra" (to check a certificate file, use keygen check FILE)`},
		{"unknown flag", []string{"keygen", "--bogus"}, "error: unknown flag: --bogus"},
		// The forms from before the subcommands are gone: no keygen Job of an earlier version runs.
		{"the old publish flag", []string{"keygen", "--publish", "--name", "c", "--owner-service", "s"}, "error: unknown flag: --publish"},
		{"the old check flag", []string{"keygen", "--check", "f"}, "error: unknown flag: --check"},
		{"a publish flag", []string{"keygen", "--owner-service", "svc"}, "error: unknown flag: --owner-service"},
		{"check without file", []string{"keygen", "check"}, "error: accepts 1 arg(s), received 0"},
		{"check with a flag", []string{"keygen", "check", "--output", "secret", "f"}, "error: unknown flag: --output"},
		{"publish without name", []string{"keygen", "publish", "--owner-service", "hello"}, `error: required flag(s) "name" not set`},
		{"publish without owner", []string{"keygen", "publish", "--name", "hello-curve"}, `error: required flag(s) "owner-service" not set`},
		{"bad owner", []string{"keygen", "publish", "--name", "c", "--owner-service", "1svc"}, `error: invalid argument "1svc" for "--owner-service" flag: a DNS-1035 label`},
		{"bad owner job", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "--owner-job", "J", "--owner-job-uid", "u"}, `error: invalid argument "J" for "--owner-job" flag: a lowercase RFC 1123 subdomain`},
		{"owner job without uid", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "--owner-job", "j"}, "error: if any flags in the group [owner-job owner-job-uid] are set they must all be set"},
		{"publish bad name", []string{"keygen", "publish", "--name", "C", "--owner-service", "s"}, `error: invalid argument "C" for "--name" flag: a lowercase RFC 1123 subdomain`},
		{"publish bad namespace", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "--namespace", "N"}, `error: invalid argument "N" for "--namespace" flag: a lowercase RFC 1123 label`},
		{"publish bad cert name", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "--cert-name", "a_b"}, `error: invalid argument "a_b" for "--cert-name" flag: certificate name "a_b" contains '_'`},
		{"zero timeout", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "--timeout", "0s"}, "error: invalid --timeout 0s: must be positive"},
		{"publish a cert", []string{"keygen", "publish", "--name", "c", "--owner-service", "s", "-o", "cert"}, `error: invalid argument "cert" for "-o, --output" flag: must be secret or configmap`},
		{"publish with argument", []string{"keygen", "publish", "x"}, `error: unknown command "x" for "minicluster-fn keygen publish"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runKeygenCLI(t, "", tt.args...)
			if err == nil {
				t.Fatalf("keygen %v succeeded", tt.args)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, tt.want)
			}
			command := "minicluster-fn keygen"
			if len(tt.args) > 1 && (tt.args[1] == "check" || tt.args[1] == "publish") {
				command += " " + tt.args[1]
			}
			if !strings.Contains(stderr, "Run '"+command+" --help' for usage.") {
				t.Errorf("stderr does not point to --help: %q", stderr)
			}
		})
	}
}

func TestKeygenPublishWithoutCredentials(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBECONFIG", "")
	// The arguments of the generated keygen Job with the keygen-image option, outside a pod.
	stdout, stderr, err := runKeygenCLI(t, "", "keygen", "publish", "--output", "secret", "--name", "hello-curve", "--owner-service", "hello", "--cert-name", "hello")
	if err == nil {
		t.Fatal("keygen publish without credentials succeeded")
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want nothing", stdout)
	}
	want := "error: no Kubernetes credentials: not running in a pod with a ServiceAccount token " +
		"(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are unset), and neither --kubeconfig nor KUBECONFIG is given\n"
	if stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}

func TestKeygenHelp(t *testing.T) {
	for command, wants := range map[string][]string{
		"keygen": {
			"A secret key committed to Git in plain text is a leak",
			"SOPS",
			"keygen Job",
			"minicluster-fn.dev/curve-secret: N",
			"curve.cert",
			"keygen check FILE",
			"keygen publish",
		},
		"check": {"every problem", "The secret key is never printed"},
		"publish": {
			"publish --output secret --name NAME --owner-service SERVICE --cert-name MINICLUSTER",
			"only if no Secret of that name exists",
			"minicluster-fn.dev/keygen-image",
			"--owner-service",
			"--kubeconfig",
			"--timeout",
		},
	} {
		args := []string{"keygen", "--help"}
		if command != "keygen" {
			args = []string{"keygen", command, "--help"}
		}
		stdout, _, err := runKeygenCLI(t, "", args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v does not mention %q", args, want)
			}
		}
	}
}

// TestKeygenHelpPublishExample: the --help example of keygen publish does what the keygen Job of
// that MiniCluster does with the keygen-image option, so it creates the object its brokers mount:
// the same arguments, plus only where to connect.
func TestKeygenHelpPublishExample(t *testing.T) {
	help, _, err := runKeygenCLI(t, "", "keygen", "publish", "--help")
	if err != nil {
		t.Fatal(err)
	}
	_, examples, _ := strings.Cut(help, "Examples:")
	_, example, ok := strings.Cut(examples, "minicluster-fn keygen publish")
	if !ok {
		t.Fatalf("no example in the help:\n%s", help)
	}
	example, _, _ = strings.Cut(strings.ReplaceAll(example, "\\\n", " "), "\n")
	got := map[string]string{}
	fields := strings.Fields(example)
	for i := 0; i+1 < len(fields); i += 2 {
		got[fields[i]] = fields[i+1]
	}
	delete(got, "--kubeconfig")
	delete(got, "--namespace")

	mc, errs := v1alpha2.Decode([]byte("apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\n" +
		"metadata: {name: hello, annotations: {minicluster-fn.dev/keygen-image: registry.example/minicluster-fn:v1}}\n" +
		"spec: {containers: [{image: ubuntu:noble}]}\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mc.Default()
	opts, errs := mc.ParseOptions()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	objs, _, err := generators.Generate(mc, opts)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range objs {
		if job, ok := o.(*batchv1.Job); ok && job.Labels[contract.LabelComponent] == "keygen" {
			args = job.Spec.Template.Spec.Containers[0].Args
		}
	}
	if len(args) < 2 || args[0] != "keygen" || args[1] != "publish" {
		t.Fatalf("keygen Job arguments %q", args)
	}
	want := map[string]string{}
	for i := 2; i+1 < len(args); i += 2 {
		want[args[i]] = args[i+1]
	}
	// A run by hand has no Job: in the Job, kubelet fills these in from the pod's labels.
	delete(want, "--owner-job")
	delete(want, "--owner-job-uid")
	if !maps.Equal(got, want) {
		t.Errorf("the help's publish example passes %v, the keygen Job of MiniCluster hello %v", got, want)
	}
}
