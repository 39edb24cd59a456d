package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// examplesDir returns a directory holding the examples whose exec functions run the binary under
// test: the repository's own examples when that binary is <repo root>/bin/minicluster-fn (where
// their `path: ../../bin/minicluster-fn` points), else a copy in a temporary directory with every
// `path:` line of a function annotation rewritten to the binary's absolute path.
func examplesDir(t *testing.T) string {
	t.Helper()
	fnBin := fnBinary(t)
	root := repoRoot(t)
	src := filepath.Join(root, "examples")
	want, err1 := filepath.EvalSymlinks(filepath.Join(root, "bin", "minicluster-fn"))
	got, err2 := filepath.EvalSymlinks(fnBin)
	if err1 == nil && err2 == nil && want == got {
		return src
	}
	dst := copyExamples(t)
	t.Logf("MINICLUSTER_FN=%s is not %s: running a copy of the examples in %s", fnBin, filepath.Join(root, "bin", "minicluster-fn"), dst)
	return dst
}

// copyExamples copies the examples into a temporary directory, with the function path of every
// MiniCluster set to the absolute path of the binary under test.
func copyExamples(t *testing.T) string {
	t.Helper()
	fnBin := fnBinary(t)
	dst := filepath.Join(t.TempDir(), "examples")
	copyDir(t, filepath.Join(repoRoot(t), "examples"), dst)
	pathLine := regexp.MustCompile(`(?m)^(\s+path:\s*)\S*minicluster-fn\s*$`)
	files, err := filepath.Glob(filepath.Join(dst, "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rewritten := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		nb := pathLine.ReplaceAll(b, []byte("${1}"+fnBin))
		if !bytes.Equal(b, nb) {
			rewritten++
			if err := os.WriteFile(f, nb, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rewritten == 0 {
		t.Fatalf("no `path: ...minicluster-fn` line found to rewrite in %s", dst)
	}
	return dst
}

// generatorExamples lists the example directories with a kustomization.yaml and a minicluster.yaml
// (the generators); the overlay has no MiniCluster of its own.
func generatorExamples(t *testing.T, dir string) []string {
	t.Helper()
	kusts, err := filepath.Glob(filepath.Join(dir, "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range kusts {
		out = append(out, filepath.Dir(k))
	}
	slices.Sort(out)
	return out
}

func kustomizeBuild(t *testing.T, dir string, flags ...string) result {
	t.Helper()
	args := append([]string{"build"}, flags...)
	return run(t, nil, "", kustomizeBinary(t), append(args, dir)...)
}

var execFlags = []string{"--enable-alpha-plugins", "--enable-exec"}

func TestKustomizeBuildExamples(t *testing.T) {
	kustomizeBinary(t)
	dir := examplesDir(t)
	examples := generatorExamples(t, dir)
	if len(examples) < 5 {
		t.Fatalf("found %d example directories with a kustomization.yaml in %s, want at least 5", len(examples), dir)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			res := kustomizeBuild(t, ex, execFlags...)
			if res.code != 0 {
				t.Fatalf("kustomize build exited %d\nstderr:\n%s", res.code, res.stderr)
			}
			// Our own examples show what a MiniCluster should look like: nothing to remark on.
			if len(res.stderr) > 0 {
				t.Errorf("kustomize build printed on stderr (a warning or info line of the function?):\n%s", res.stderr)
			}
			if bytes.Contains(res.stdout, []byte("kind: MiniCluster")) {
				t.Errorf("the MiniCluster itself is in the output")
			}
			m, err := decodeManifests(res.stdout)
			if err != nil {
				t.Fatalf("decoding the output: %v\n%s", err, res.stdout)
			}
			t.Logf("%d objects: %v", len(m.All), m.kindCounts())

			var mc miniClusterInfo
			if b, err := os.ReadFile(filepath.Join(ex, "minicluster.yaml")); err == nil {
				mc = readMiniCluster(t, b)
			} else if filepath.Base(ex) == "overlay" {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(ex), "hello-world", "minicluster.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				mc = readMiniCluster(t, b)
			} else {
				t.Fatalf("%s has no minicluster.yaml", ex)
			}
			job, _ := checkManifestSet(t, m, mc)
			if job == nil {
				return
			}
			if cm := entrypointConfigMap(t, m, job); cm != nil {
				checkScripts(t, cm)
			}
			if kind, name := curveSource(job); len(jobsWith(m, componentKeygen)) != 1 && m.secret(name) == nil && m.configMap(name) == nil {
				t.Errorf("the brokers mount %s %q, but neither a keygen Job nor that object is in the output: nothing provides the CURVE certificate", kind, name)
			}
		})
	}
}

// TestKustomizeWithoutEnableExec pins the kustomize behaviour the README warns about: with
// --enable-alpha-plugins but without --enable-exec, an exec generator is silently skipped.
func TestKustomizeWithoutEnableExec(t *testing.T) {
	kustomizeBinary(t)
	dir := examplesDir(t)
	res := kustomizeBuild(t, filepath.Join(dir, "hello-world"), "--enable-alpha-plugins")
	if res.code != 0 {
		t.Fatalf("kustomize build --enable-alpha-plugins exited %d, want 0 (the silent gotcha)\nstderr:\n%s", res.code, res.stderr)
	}
	if len(res.stdout) != 0 {
		t.Errorf("kustomize build --enable-alpha-plugins printed %d bytes, want nothing (if kustomize changed, update the README's warning):\n%s", len(res.stdout), res.stdout)
	}
	t.Logf("stderr: %q", res.stderr)
}

func TestOverlayNamespaceAndPrefix(t *testing.T) {
	kustomizeBinary(t)
	const ns, prefix = "hpc-team-a", "team-a-"
	dir := examplesDir(t)
	overlay := filepath.Join(dir, "overlay")

	res := kustomizeBuild(t, overlay, execFlags...)
	if res.code != 0 {
		t.Fatalf("kustomize build exited %d\nstderr:\n%s", res.code, res.stderr)
	}
	m, err := decodeManifests(res.stdout)
	if err != nil {
		t.Fatalf("decoding the output: %v\n%s", err, res.stdout)
	}
	hw, err := os.ReadFile(filepath.Join(dir, "hello-world", "minicluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mc := readMiniCluster(t, hw)
	job, svc := checkManifestSet(t, m, mc)
	if job == nil || svc == nil {
		t.FailNow()
	}
	for _, o := range m.All {
		if o.GetNamespace() != ns {
			t.Errorf("%s: namespace %q, want %q", o, o.GetNamespace(), ns)
		}
		if !strings.HasPrefix(o.GetName(), prefix) {
			t.Errorf("%s: name does not start with %q", o, prefix)
		}
	}
	if svc.Name != prefix+mc.Name {
		t.Errorf("headless Service is %q, want %q", svc.Name, prefix+mc.Name)
	}

	keygens := jobsWith(m, componentKeygen)
	if len(keygens) != 1 {
		t.Fatalf("want one keygen Job, got %d", len(keygens))
	}
	keygen := keygens[0]
	if len(keygen.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("keygen Job/%s: want one container, got %d", keygen.Name, len(keygen.Spec.Template.Spec.Containers))
	}
	args := keygen.Spec.Template.Spec.Containers[0].Args
	if got := argValue(args, "--owner-service"); got != svc.Name {
		t.Errorf("keygen Job/%s: --owner-service %q, want the Service %q (args %q)", keygen.Name, got, svc.Name, args)
	}
	curveName := argValue(args, "--name")
	if curveName == "" {
		t.Errorf("keygen Job/%s: no --name argument (args %q)", keygen.Name, args)
	}
	if sa := keygen.Spec.Template.Spec.ServiceAccountName; !slices.ContainsFunc(m.ServiceAccounts, func(s *corev1.ServiceAccount) bool { return s.Name == sa }) {
		t.Errorf("keygen Job/%s: serviceAccountName %q is not in the output", keygen.Name, sa)
	}

	if len(m.Roles) != 1 {
		t.Fatalf("want one Role, got %d", len(m.Roles))
	}
	role := m.Roles[0]
	// The Role names the Service (get), and may create the certificate Secret but read no Secret.
	var serviceNames []string
	var secretVerbs []string
	for _, r := range role.Rules {
		for _, res := range r.Resources {
			switch res {
			case "services":
				serviceNames = append(serviceNames, r.ResourceNames...)
			case "secrets":
				secretVerbs = append(secretVerbs, r.Verbs...)
			}
		}
	}
	if !slices.Contains(serviceNames, svc.Name) {
		t.Errorf("Role/%s: services resourceNames %q do not contain the Service %q", role.Name, serviceNames, svc.Name)
	}
	if argValue(args, "--kind") != "Secret" || !slices.Equal(secretVerbs, []string{"create"}) {
		t.Errorf("Role/%s: verbs on secrets %q, keygen --kind %q; want a Secret, and create only", role.Name, secretVerbs, argValue(args, "--kind"))
	}
	if len(m.RoleBindings) != 1 || m.RoleBindings[0].RoleRef.Name != role.Name {
		t.Errorf("want one RoleBinding to Role/%s, got %d", role.Name, len(m.RoleBindings))
	} else if subj := m.RoleBindings[0].Subjects; len(subj) != 1 || subj[0].Name != keygen.Spec.Template.Spec.ServiceAccountName {
		t.Errorf("RoleBinding/%s: subjects %+v, want the keygen ServiceAccount %q", m.RoleBindings[0].Name, subj, keygen.Spec.Template.Spec.ServiceAccountName)
	}

	if kind, name := curveSource(job); kind != "Secret" || name != curveName {
		t.Errorf("Job/%s mounts the certificate from %s %q but the keygen Job creates Secret %q", job.Name, kind, name, curveName)
	}

	entry := entrypointConfigMap(t, m, job)
	if entry != nil {
		if !strings.HasPrefix(entry.Name, prefix) {
			t.Errorf("entrypoint ConfigMap %q is not prefixed", entry.Name)
		}
		for k, v := range entry.Data {
			if k != "broker.toml" && !strings.HasSuffix(k, ".sh") {
				continue
			}
			for _, bad := range []string{ns, "cluster.local"} {
				if strings.Contains(v, bad) {
					t.Errorf("ConfigMap/%s key %s contains %q: the scripts must not depend on the namespace", entry.Name, k, bad)
				}
			}
		}
		checkScripts(t, entry)
	}

	// The same overlay without its configurations: kustomize does not know that a pod's subdomain
	// names a Service, so the prefix breaks the pods' DNS. This is why kustomizeconfig.yaml exists.
	t.Run("without-configurations", func(t *testing.T) {
		tmp := copyExamples(t)
		kfile := filepath.Join(tmp, "overlay", "kustomization.yaml")
		b, err := os.ReadFile(kfile)
		if err != nil {
			t.Fatal(err)
		}
		var kept []string
		dropped := false
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], "configurations:") {
				dropped = true
				for i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "- ") {
					i++
				}
				continue
			}
			kept = append(kept, lines[i])
		}
		if !dropped {
			t.Fatalf("no configurations: line in %s", kfile)
		}
		if err := os.WriteFile(kfile, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		res := kustomizeBuild(t, filepath.Join(tmp, "overlay"), execFlags...)
		if res.code != 0 {
			t.Fatalf("kustomize build exited %d\nstderr:\n%s", res.code, res.stderr)
		}
		m, err := decodeManifests(res.stdout)
		if err != nil {
			t.Fatal(err)
		}
		brokers, headless := jobsWith(m, componentBroker), servicesWith(m, componentHeadless)
		if len(brokers) != 1 || len(headless) != 1 {
			t.Fatalf("want one broker Job and one headless Service, got %d and %d", len(brokers), len(headless))
		}
		sub, name := brokers[0].Spec.Template.Spec.Subdomain, headless[0].Name
		if sub == name {
			t.Errorf("without kustomizeconfig.yaml the subdomain %q still matches the Service: the configurations file may no longer be needed (update examples/overlay and the README)", sub)
		} else {
			t.Logf("without configurations: subdomain %q != Service %q (as documented)", sub, name)
		}
	})
}

// argValue returns the argument after flag in args ("" if absent).
func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
