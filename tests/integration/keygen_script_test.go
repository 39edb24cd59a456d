package integration

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The default keygen Job runs its script (/bin/sh -c) in the Flux view image: the view's flux
// keygen writes the certificate into a memory-backed emptyDir and the view's Python creates the
// certificate object with the pod's ServiceAccount. These tests run that command and its
// arguments on this host, as kubelet would in the pod, against the real API server:
//   - the ServiceAccount files (token, ca.crt, namespace) are files of the test, with a real token of
//     the generated ServiceAccount from the TokenRequest API, and KUBERNETES_SERVICE_HOST/PORT
//     point at the API server, as kubelet sets them;
//   - the Flux view is a directory laid out like the operator's views (bin/flux, and the view's
//     Python bin/python3.X beside lib/python3.X), whose Python is this host's python3;
//   - its flux is a stand-in: no flux-core is installed on these hosts. `flux keygen --name NAME
//     PATH` runs `minicluster-fn keygen --cert-name NAME` into PATH, the pure-Go keygen that writes
//     the format of flux-core's flux keygen (internal/curve). A real flux keygen runs in the live
//     tests, in the stand-in view image.
//
// The view, the ServiceAccount directory and the emptyDir are arguments of the script
// (--view, --serviceaccount, --work-dir, paths in generators/layout.go); the test passes its
// own directories there, as kubelet's mounts would put them at the rendered paths.

// scriptPod is what the keygen script finds in its pod, as files and settings of the test.
type scriptPod struct {
	view, account, work string
	// server is the API server's address, host:port, for KUBERNETES_SERVICE_HOST/PORT.
	server string
}

// fluxKeygen is the stand-in view's flux: `flux keygen --name NAME PATH` writes a new certificate
// to PATH, mode 0600, as flux keygen does. filter, a shell command from stdin to stdout, edits it
// on the way (a malformed certificate); empty for none. It may run "$fn", this binary.
func fluxKeygen(t *testing.T, filter string) string {
	t.Helper()
	script := "#!/bin/sh\n" +
		"# The stand-in for flux keygen: minicluster-fn keygen writes flux keygen's format.\n" +
		"set -eu\n" +
		`[ "$#" = 4 ] && [ "$1" = keygen ] && [ "$2" = --name ] || { echo "flux: unexpected arguments: $*" >&2; exit 2; }` + "\n" +
		"umask 077\n" +
		"fn=" + shellQuote(fnBinary(t)) + "\n"
	keygen := `"$fn" keygen --cert-name "$3"`
	if filter != "" {
		keygen += " | " + filter
	}
	return script + keygen + ` > "$4"` + "\n"
}

// hostPython is this host's python3 interpreter (sys.executable, not a shim) and its python3.X.
var hostPython = sync.OnceValues(func() ([]string, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable); print('python%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
})

// newView lays out a Flux view in a new directory: bin/flux (flux, the script of fluxKeygen) and,
// with python, the view's Python bin/python3.X (this host's) beside lib/python3.X.
func newView(t *testing.T, flux string, python bool) string {
	t.Helper()
	view := t.TempDir()
	if err := os.MkdirAll(filepath.Join(view, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(view, "bin", "flux"), []byte(flux), 0o755); err != nil {
		t.Fatal(err)
	}
	if python {
		py, err := hostPython()
		if err != nil || len(py) != 2 {
			t.Skipf("no python3 on this host (%v): the keygen script's publisher needs one", err)
		}
		if err := os.MkdirAll(filepath.Join(view, "lib", py[1], "site-packages"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(py[0], filepath.Join(view, "bin", py[1])); err != nil {
			t.Fatal(err)
		}
	}
	return view
}

// newScriptPod is a pod of the keygen Job in ns whose ServiceAccount token is token, with the
// stand-in view.
func (c *cluster) newScriptPod(t *testing.T, ns, token string) *scriptPod {
	t.Helper()
	ca, err := os.ReadFile(c.servingCert)
	if err != nil {
		t.Fatal(err)
	}
	p := &scriptPod{view: newView(t, fluxKeygen(t, ""), true), account: t.TempDir(), work: t.TempDir()}
	for name, content := range map[string]string{"token": token, "ca.crt": string(ca), "namespace": ns} {
		if err := os.WriteFile(filepath.Join(p.account, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	host, err := url.Parse(c.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p.server = host.Host
	return p
}

// runScript runs a keygen container's command and arguments as kubelet would in pod p: with the
// view, ServiceAccount and emptyDir arguments pointing at p's directories, the environment kubelet
// gives (PATH, KUBERNETES_SERVICE_HOST/PORT) and nothing else.
func runScript(t *testing.T, command, args []string, p *scriptPod, extra ...string) fnResult {
	t.Helper()
	if len(command) < 3 || command[1] != "-c" {
		t.Fatalf("the keygen Job does not run a script: command %q", command)
	}
	args = append([]string{}, args...)
	for flag, value := range map[string]string{"--view": p.view, "--serviceaccount": p.account, "--work-dir": p.work} {
		i := slices.Index(args, flag)
		if i < 0 || i+1 >= len(args) {
			t.Fatalf("no %s in the keygen arguments %q", flag, args)
		}
		args[i+1] = value
	}
	host, port, err := net.SplitHostPort(p.server)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(command[0], append(append(command[1:], args...), extra...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running the keygen script: %v", err)
		}
		code = ee.ExitCode()
	}
	return fnResult{out.String(), errOut.String(), code}
}

// shellQuote single-quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// script runs the setup's keygen script in pod p.
func (s *keygenSetup) script(t *testing.T, p *scriptPod, extra ...string) fnResult {
	t.Helper()
	return runScript(t, s.command, s.args, p, extra...)
}

// testKeygenScript: the default keygen Job's script, with a real token of the generated
// ServiceAccount, creates the certificate Secret once, owned by the Service and the keygen Job,
// leaves it alone on the next run, and prints no part of the secret key; with curve-kind
// ConfigMap, the ConfigMap; and a MiniCluster whose certificate the project image's keygen
// publish made keeps it when the script runs (an upgrade to the view-image keygen).
func (c *cluster) testKeygenScript(t *testing.T) {
	t.Run("Secret", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		first := s.script(t, p)
		if first.code != 0 || !strings.Contains(first.stdout, "created Secret "+s.ns+"/"+s.name+" (public key ") ||
			!strings.Contains(first.stdout, "owned by Service "+s.ns+"/"+s.service) || !strings.Contains(first.stdout, " and Job "+s.ns+"/"+s.job.GetName()) {
			t.Fatalf("first run of the keygen script: %s", first)
		}
		secret := c.getSecret(t, s.ns, s.name)
		if secret.Type != "Opaque" {
			t.Errorf("type %q, want Opaque", secret.Type)
		}
		cert := string(secret.Data["curve.cert"])
		c.checkPublished(t, s, secret.ObjectMeta, secret.Immutable, cert, first)
		// What flux keygen wrote, byte for byte: the emptyDir still holds it after the run.
		written, err := os.ReadFile(filepath.Join(p.work, "curve.cert"))
		if err != nil || string(written) != cert {
			t.Errorf("the Secret does not hold the certificate flux keygen wrote (%v)", err)
		}
		if m := secret.ManagedFields; len(m) != 1 || m[0].Manager != "minicluster-fn-keygen" {
			t.Errorf("managedFields %+v, want one entry of minicluster-fn-keygen", m)
		}

		second := s.script(t, p)
		if second.code != 0 || !strings.Contains(second.stdout, "Secret "+s.ns+"/"+s.name+" exists; left unchanged and not read") {
			t.Fatalf("second run of the keygen script: %s", second)
		}
		if again := c.getSecret(t, s.ns, s.name); again.ResourceVersion != secret.ResourceVersion || string(again.Data["curve.cert"]) != cert {
			t.Errorf("the second run changed the Secret (resourceVersion %s -> %s)", secret.ResourceVersion, again.ResourceVersion)
		}
		assertNoSecretKey(t, second, cert)
	})

	t.Run("ConfigMap", func(t *testing.T) {
		s := c.keygenSetupOf(t, configMapHelloWorld(t), nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		first := s.script(t, p)
		if first.code != 0 || !strings.Contains(first.stdout, "created ConfigMap "+s.ns+"/"+s.name) {
			t.Fatalf("first run of the keygen script: %s", first)
		}
		cm := c.getConfigMap(t, s.ns, s.name)
		cert := cm.Data["curve.cert"]
		c.checkPublished(t, s, cm.ObjectMeta, cm.Immutable, cert, first)
		second := s.script(t, p)
		if second.code != 0 || !strings.Contains(second.stdout, "ConfigMap "+s.ns+"/"+s.name+" exists and holds a valid certificate; left unchanged") {
			t.Fatalf("second run of the keygen script: %s", second)
		}
		if again := c.getConfigMap(t, s.ns, s.name); again.ResourceVersion != cm.ResourceVersion {
			t.Errorf("the second run changed the ConfigMap (resourceVersion %s -> %s)", cm.ResourceVersion, again.ResourceVersion)
		}
		assertNoSecretKey(t, second, cert)
	})

	t.Run("upgrade from the project image", func(t *testing.T) {
		// The certificate of a running MiniCluster, made by keygen publish ...
		before := c.keygenSetupOf(t, renderHelloWorld(t, projectKeygen), nil)
		if res := before.publish(t, c.kubeconfigFor(t, c.token(t, before.ns, before.account), before.ns)); res.code != 0 {
			t.Fatalf("keygen publish: %s", res)
		}
		secret := c.getSecret(t, before.ns, before.name)
		// ... then the default output applied over it: its keygen Job runs the script.
		objs := renderHelloWorld(t, "")
		applied := c.apply(t, before.ns, objs)
		var job *unstructured.Unstructured
		for _, o := range applied {
			if o.GetKind() == "Job" && o.GetLabels()["minicluster-fn.dev/component"] == "keygen" {
				job = o
			}
		}
		if job == nil || job.GetName() == before.job.GetName() {
			t.Fatalf("the default output has no keygen Job of its own (the project image's was %s)", before.job.GetName())
		}
		command, args, account := keygenContainer(t, find(t, objs, "Job", "keygen"), job)
		res := runScript(t, command, args, c.newScriptPod(t, before.ns, c.token(t, before.ns, account)))
		if res.code != 0 || !strings.Contains(res.stdout, "Secret "+before.ns+"/"+before.name+" exists; left unchanged") {
			t.Fatalf("the keygen script over the project image's certificate: %s", res)
		}
		if after := c.getSecret(t, before.ns, before.name); after.ResourceVersion != secret.ResourceVersion {
			t.Errorf("the certificate changed: resourceVersion %s -> %s", secret.ResourceVersion, after.ResourceVersion)
		}
	})
}

// testKeygenScriptFailures: every failure of the keygen script is a clear message and exit 1,
// changes nothing, and prints no part of the secret key.
func (c *cluster) testKeygenScriptFailures(t *testing.T) {
	ctx := context.Background()
	absent := func(t *testing.T, s *keygenSetup) {
		t.Helper()
		if _, err := c.cs.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a certificate Secret was created: %v", err)
		}
	}

	t.Run("forbidden", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		// The namespace's default ServiceAccount has no Role.
		res := s.script(t, c.newScriptPod(t, s.ns, c.token(t, s.ns, "default")))
		if res.code != 1 || !strings.Contains(res.stderr, "error: get Service "+s.ns+"/"+s.service+": ") ||
			!strings.Contains(res.stderr, `cannot get resource "services"`) ||
			!strings.Contains(res.stderr, "(the keygen Role must allow get on the Service "+s.service+" and create on secrets)") {
			t.Errorf("%s", res)
		}
		absent(t, s)
	})

	t.Run("credentials rejected", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		res := s.script(t, c.newScriptPod(t, s.ns, "not-a-token"))
		if res.code != 1 || !strings.Contains(res.stderr, "rejected the credentials") {
			t.Errorf("%s", res)
		}
	})

	t.Run("API server unreachable", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p.server = l.Addr().String()
		l.Close()
		start := time.Now()
		res := s.script(t, p, "--timeout", "4")
		took := time.Since(start)
		if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the Kubernetes API server at https://"+p.server) || !strings.Contains(res.stderr, "retrying in") {
			t.Errorf("%s", res)
		}
		if took > 20*time.Second {
			t.Errorf("gave up after %s with --timeout 4", took)
		}
		absent(t, s)
	})

	t.Run("API server not vouched for by the CA", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		// The CA of the API server's loopback certificate, which did not sign its serving one.
		if err := os.WriteFile(filepath.Join(p.account, "ca.crt"), c.config.CAData, 0o644); err != nil {
			t.Fatal(err)
		}
		res := s.script(t, p)
		if res.code != 1 || !strings.Contains(res.stderr, "is not the one the pod's ServiceAccount CA vouches for") || strings.Contains(res.stderr, "retrying") {
			t.Errorf("%s", res)
		}
		absent(t, s)
	})

	t.Run("missing Service", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil, "ServiceAccount", "Role", "RoleBinding")
		res := s.script(t, c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account)))
		if want := "error: owner Service " + s.ns + "/" + s.service + " not found"; res.code != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("want %q: %s", want, res)
		}
		absent(t, s)
	})

	t.Run("malformed certificate", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		// flux keygen leaves out the name entry, which brokers need.
		p.view = newView(t, fluxKeygen(t, "sed '/ name = /d'"), true)
		res := s.script(t, p)
		if res.code != 1 || !strings.Contains(res.stderr, "error: flux keygen wrote a malformed certificate (") ||
			!strings.Contains(res.stderr, `metadata has no "name" entry`) || !strings.Contains(res.stderr, "nothing was created") {
			t.Errorf("%s", res)
		}
		written, err := os.ReadFile(filepath.Join(p.work, "curve.cert"))
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecretKey(t, res, string(written))
		absent(t, s)
	})

	t.Run("keys that do not match", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		// The public key of another certificate.
		other := `"$("$fn" keygen | sed -n 's/^ *public-key = //p')"`
		p.view = newView(t, fluxKeygen(t, `awk -v key=`+other+` '/^ *public-key = /{print "    public-key = " key; next} {print}'`), true)
		res := s.script(t, p)
		if res.code != 1 || !strings.Contains(res.stderr, "error: flux keygen wrote a malformed certificate (public-key does not match secret-key)") {
			t.Errorf("%s", res)
		}
		written, err := os.ReadFile(filepath.Join(p.work, "curve.cert"))
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecretKey(t, res, string(written))
		absent(t, s)
	})

	t.Run("flux keygen fails", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		p.view = newView(t, "#!/bin/sh\necho 'flux-keygen: open /keygen/curve.cert: Read-only file system' >&2\nexit 1\n", true)
		res := s.script(t, p)
		if res.code != 1 || !strings.Contains(res.stderr, "keygen --name flux-sample "+filepath.Join(p.work, "curve.cert")+" failed (exit 1): flux-keygen: open") {
			t.Errorf("%s", res)
		}
		absent(t, s)
	})

	t.Run("no Python in the view", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		p := c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account))
		p.view = newView(t, fluxKeygen(t, ""), false)
		res := s.script(t, p)
		if res.code != 1 || !strings.Contains(res.stderr, "error: this image has no Python 3 in the Flux view "+p.view) ||
			!strings.Contains(res.stderr, "minicluster-fn.dev/keygen-image") {
			t.Errorf("%s", res)
		}
		absent(t, s)
	})

	t.Run("existing ConfigMap is not a certificate", func(t *testing.T) {
		s := c.keygenSetupOf(t, configMapHelloWorld(t), nil)
		bad, err := c.cs.CoreV1().ConfigMaps(s.ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			Data:       map[string]string{"curve.cert": "written by hand\n"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := s.script(t, c.newScriptPod(t, s.ns, c.token(t, s.ns, s.account)))
		want := "error: ConfigMap " + s.ns + "/" + s.name + ` exists but does not hold a valid CURVE certificate in key "curve.cert"`
		if res.code != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "left unchanged") {
			t.Errorf("want %q: %s", want, res)
		}
		if after := c.getConfigMap(t, s.ns, s.name); after.ResourceVersion != bad.ResourceVersion {
			t.Errorf("the ConfigMap was changed: resourceVersion %s -> %s", bad.ResourceVersion, after.ResourceVersion)
		}
	})
}

// assertNoSecretKey fails if what the run printed holds the secret key of cert, or an 8-character
// piece of it.
func assertNoSecretKey(t *testing.T, printed fnResult, cert string) {
	t.Helper()
	_, rest, ok := strings.Cut(cert, `secret-key = "`)
	if !ok || len(rest) < 40 {
		t.Fatalf("no secret key in the certificate")
	}
	secret, text := rest[:40], printed.stdout+printed.stderr
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+8]) {
			t.Fatalf("the keygen script printed part of the secret key:\n%s", printed)
		}
	}
}
