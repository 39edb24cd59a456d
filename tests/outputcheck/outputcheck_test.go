package outputcheck_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

const helloWorld = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: flux-sample}
spec:
  size: 4
  containers: [{image: ubuntu:noble, command: echo hello world}]
`

func helloWorldSet(t *testing.T) outputcheck.Manifests {
	t.Helper()
	mc, opts, errs := outputcheck.Prepare([]byte(helloWorld))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	objs, _, err := generators.Generate(mc, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := outputcheck.Manifests{MC: mc}
	for _, o := range objs {
		m.Objects = append(m.Objects, o)
	}
	return m
}

func find[T runtime.Object](m outputcheck.Manifests, pred func(T) bool) T {
	for _, o := range m.Objects {
		if t, ok := o.(T); ok && pred(t) {
			return t
		}
	}
	panic("not found")
}

func brokerJob(m outputcheck.Manifests) *batchv1.Job {
	return find(m, func(j *batchv1.Job) bool { return j.Spec.CompletionMode != nil })
}

// keygenJob is the Job that runs a shell script, not the broker Job.
func keygenJob(m outputcheck.Manifests) *batchv1.Job {
	return find(m, func(j *batchv1.Job) bool { return j.Spec.CompletionMode == nil })
}

func entrypoint(m outputcheck.Manifests) *corev1.ConfigMap {
	return find(m, func(c *corev1.ConfigMap) bool { _, ok := c.Data[generators.InitScriptKey]; return ok })
}

// TestCheckCatchesRegressions: each mutation of a good manifest set is reported, so the checks
// have teeth.
func TestCheckCatchesRegressions(t *testing.T) {
	if errs := outputcheck.Check(helloWorldSet(t), outputcheck.Options{Bash: true}); len(errs) > 0 {
		t.Fatalf("hello-world does not pass: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		mutate func(m outputcheck.Manifests)
		want   string
	}{
		{"bash syntax", func(m outputcheck.Manifests) {
			entrypoint(m).Data[generators.WaitScriptKey(0)] += "\nif true; then\n"
		}, "bash -n"},
		{"certificate printed", func(m outputcheck.Manifests) {
			entrypoint(m).Data[generators.WaitScriptKey(0)] += "\ncat \"${curvepath}\"\n"
		}, "prints the certificate"},
		{"keygen script syntax", func(m outputcheck.Manifests) {
			keygenJob(m).Spec.Template.Spec.Containers[0].Command[2] += "\nif true; then\n"
		}, "/bin/sh -n"},
		{"keygen publisher prints the certificate", func(m outputcheck.Manifests) {
			cmd := keygenJob(m).Spec.Template.Spec.Containers[0].Command
			cmd[2] = strings.Replace(cmd[2], "    return 0\n", "    print(cert_text)\n    return 0\n", 1)
		}, "prints the certificate"},
		{"certificate copy readable", func(m outputcheck.Manifests) {
			cm := entrypoint(m)
			cm.Data[generators.WaitScriptKey(0)] = strings.Replace(cm.Data[generators.WaitScriptKey(0)], "umask 077", "umask 022", 1)
		}, "umask 077"},
		{"certificate mode", func(m outputcheck.Manifests) {
			for _, v := range brokerJob(m).Spec.Template.Spec.Volumes {
				if v.Secret != nil && v.Secret.Items != nil {
					v.Secret.DefaultMode = ptr.To(int32(0o644))
				}
			}
		}, "defaultMode 0644"},
		{"certificate in a sidecar", func(m outputcheck.Manifests) {
			init := &brokerJob(m).Spec.Template.Spec.InitContainers[0]
			init.VolumeMounts = append(init.VolumeMounts, corev1.VolumeMount{Name: "flux-curve", MountPath: "/c", ReadOnly: true})
		}, "mount the certificate"},
		{"hosts", func(m outputcheck.Manifests) {
			cm := entrypoint(m)
			cm.Data[generators.BrokerConfigKey] = strings.Replace(cm.Data[generators.BrokerConfigKey], "-[1-3]", "-[1-2]", 1)
		}, "bootstrap.hosts expand to"},
		{"toml", func(m outputcheck.Manifests) {
			entrypoint(m).Data[generators.BrokerConfigKey] += "\nbroken = [\n"
		}, "TOML"},
		{"missing key", func(m outputcheck.Manifests) {
			cm := entrypoint(m)
			cm.Data[generators.BrokerConfigKey] = strings.Replace(cm.Data[generators.BrokerConfigKey], "default_port = 8050\n", "", 1)
		}, "default_port"},
		{"wider role", func(m outputcheck.Manifests) {
			r := find(m, func(*rbacv1.Role) bool { return true })
			r.Rules = append(r.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}})
		}, `"list secrets"`},
		{"role on any service", func(m outputcheck.Manifests) {
			r := find(m, func(*rbacv1.Role) bool { return true })
			r.Rules[1].ResourceNames = nil
		}, `"get services"`},
		{"role reads the certificate Secret", func(m outputcheck.Manifests) {
			r := find(m, func(*rbacv1.Role) bool { return true })
			r.Rules = append(r.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"},
				ResourceNames: []string{brokerJob(m).Spec.Template.Spec.Subdomain}, Verbs: []string{"get"}})
		}, `"get secrets/<the certificate Secret>"`},
		{"broker token", func(m outputcheck.Manifests) {
			brokerJob(m).Spec.Template.Spec.AutomountServiceAccountToken = ptr.To(true)
		}, "automountServiceAccountToken true"},
		{"brokers use the keygen account", func(m outputcheck.Manifests) {
			sa := find(m, func(*corev1.ServiceAccount) bool { return true })
			brokerJob(m).Spec.Template.Spec.ServiceAccountName = sa.Name
		}, "only the keygen Job may use it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := helloWorldSet(t)
			tc.mutate(m)
			errs := outputcheck.Check(m, outputcheck.Options{Bash: true})
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Errorf("want a problem with %q, got %v", tc.want, errs)
			}
		})
	}
}

func TestExpandHostlist(t *testing.T) {
	for in, want := range map[string][]string{
		"a-0":              {"a-0"},
		"a-[0-2],b-7":      {"a-0", "a-1", "a-2", "b-7"},
		"c[01,04-05]x":     {"c01x", "c04x", "c05x"},
		"10.0.0.1,l-[1-2]": {"10.0.0.1", "l-1", "l-2"},
	} {
		got, err := outputcheck.ExpandHostlist(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ExpandHostlist(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a-[0-", "a-[3-1]", "a,,b", "a-[x]", "a-[0-99999999]"} {
		if got, err := outputcheck.ExpandHostlist(bad); err == nil {
			t.Errorf("ExpandHostlist(%q) = %v, want an error", bad, got)
		}
	}
}

// TestShellcheckReportsFindings: a finding is reported on every run, also once the clean text
// beside it is remembered (in a cache directory of the test's own).
func TestShellcheckReportsFindings(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	for run := 1; run <= 2; run++ {
		findings, err := outputcheck.Shellcheck(map[string]string{"bad.sh": "#!/bin/bash\necho $1\n", "good.sh": "#!/bin/bash\necho \"$1\"\n"})
		if err != nil {
			t.Skipf("SKIPPED: %v", err)
		}
		if len(findings) != 1 || !strings.Contains(findings[0].Error(), "bad.sh:2:") || !strings.Contains(findings[0].Error(), "SC2086") {
			t.Errorf("run %d: findings = %v, want SC2086 in bad.sh line 2", run, findings)
		}
		remembered, _ := filepath.Glob(filepath.Join(cache, "minicluster-fn-tests", "shellcheck-clean", "*"))
		if len(remembered) != 1 {
			t.Errorf("run %d: %d texts remembered as clean, want good.sh's only", run, len(remembered))
		}
	}
}
