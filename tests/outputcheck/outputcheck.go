// Package outputcheck checks the manifest set generated for one MiniCluster the way the cluster
// and the pods will use it: every script with `bash -n` (and, separately, shellcheck), the broker
// config with a real TOML parser after the substitution flux-init.sh makes, the host list against
// the hostnames of the Job's pods, the RBAC rules, service account tokens and the certificate's
// file modes. It is test support: the tests of generators, fn and cmd share this one
// implementation; the binary never imports it.
//
// It finds what it checks by structure (the Indexed Job, the ConfigMap its init container runs
// flux-init.sh from, the volume holding curve.cert), not by the generators' naming rules, so it
// does not simply repeat them.
package outputcheck

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// The file names and placeholders of the scripts' runtime contract (generators/entrypoint.go).
const (
	initScriptKey   = "flux-init.sh"
	brokerConfigKey = "broker.toml"
	curveCertKey    = "curve.cert"
	// flux-init.sh replaces these in broker.toml at pod start.
	placeholderJobName   = "@JOB_NAME@"
	placeholderDNSSuffix = "@DNS_SUFFIX@"
	// testDNSSuffix stands for what flux-init.sh reads from /etc/hosts.
	testDNSSuffix = "svc-x.team-a.svc.cluster.example"
)

// Options select the checks that start processes.
type Options struct {
	// Bash runs `bash -n` on every script and evaluates the hosts= line of flux-init.sh.
	Bash bool
	// TrustUserConfig skips what the user wrote rather than the generator: the content of a
	// flux.brokerConfig, and whether the Job's pods are in a flux.bursting host list (leadBroker,
	// hostlist): arbitrary text there is the user's to get right. The fuzz target sets it so that
	// it looks for bugs of ours.
	TrustUserConfig bool
}

// Manifests are the objects generated for one MiniCluster.
type Manifests struct {
	// MC is the MiniCluster as rendered: decoded, defaulted and valid.
	MC      *v1alpha2.MiniCluster
	Objects []runtime.Object
}

// Check runs every check but shellcheck (see Shellcheck) and returns the problems found.
func Check(m Manifests, o Options) []error {
	c := &checker{m: m}
	c.findBroker()
	if c.job == nil {
		return c.errs
	}
	if o.Bash {
		c.bashSyntax()
	}
	c.brokerConfig(o)
	c.podFailurePolicy()
	c.access()
	c.curveHygiene()
	return c.errs
}

type checker struct {
	m    Manifests
	errs []error
	job  *batchv1.Job
	// entrypoint is the ConfigMap the broker pods run their scripts from.
	entrypoint *corev1.ConfigMap
}

func (c *checker) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// findBroker finds the Indexed Job of brokers and the ConfigMap of its scripts.
func (c *checker) findBroker() {
	for _, o := range c.m.Objects {
		if j, ok := o.(*batchv1.Job); ok && j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			if c.job != nil {
				c.errorf("two Indexed Jobs: %s and %s", c.job.Name, j.Name)
				return
			}
			c.job = j
		}
	}
	if c.job == nil {
		c.errorf("no Indexed Job of brokers in the output")
		return
	}
	// flux-init.sh runs in the init container or, in a pod without one (view-source ImageVolume
	// with the broker container alone), first in the broker script.
	pod := &c.job.Spec.Template.Spec
	var runner corev1.Container
	switch {
	case len(pod.InitContainers) == 1:
		runner = pod.InitContainers[0]
		if len(runner.Command) != 2 || runner.Command[0] != "/bin/bash" || path.Base(runner.Command[1]) != initScriptKey {
			c.errorf("Job/%s: the init container runs %q, want /bin/bash <dir>/%s", c.job.Name, runner.Command, initScriptKey)
			return
		}
	case len(pod.InitContainers) == 0 && len(pod.Containers) == 1:
		runner = pod.Containers[0]
		if len(runner.Command) != 2 || runner.Command[0] != "/bin/bash" {
			c.errorf("Job/%s: the broker container runs %q, want /bin/bash <dir>/<broker script>", c.job.Name, runner.Command)
			return
		}
	default:
		c.errorf("Job/%s: want one init container (flux-init.sh), or none and the broker container alone; got %d and %d",
			c.job.Name, len(pod.InitContainers), len(pod.Containers))
		return
	}
	dir := path.Dir(runner.Command[1])
	cmName := configMapMountedAt(pod, runner, dir)
	c.entrypoint = findObject[*corev1.ConfigMap](c.m.Objects, cmName)
	if c.entrypoint == nil {
		c.errorf("Job/%s: container %s's scripts come from ConfigMap %q, which is not in the output", c.job.Name, runner.Name, cmName)
		c.job = nil
		return
	}
	if len(pod.InitContainers) == 0 && !strings.Contains(c.entrypoint.Data[path.Base(runner.Command[1])], "/bin/bash "+dir+"/"+initScriptKey+";") {
		c.errorf("Job/%s: the pod has no init container, and its broker script %s does not run %s", c.job.Name, path.Base(runner.Command[1]), initScriptKey)
	}
}

// podFailurePolicy checks what the API server requires of a Job's pod failure policy: the pods'
// restartPolicy is Never, every rule names a container of the pod, and the exit codes of a rule
// are sorted and unique (at most 255, no 0 with In).
func (c *checker) podFailurePolicy() {
	pfp := c.job.Spec.PodFailurePolicy
	if pfp == nil {
		return
	}
	pod := &c.job.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		c.errorf("Job/%s: a podFailurePolicy needs restartPolicy Never, the pods have %q", c.job.Name, pod.RestartPolicy)
	}
	for i, r := range pfp.Rules {
		if (r.OnExitCodes == nil) == (len(r.OnPodConditions) == 0) {
			c.errorf("Job/%s: podFailurePolicy rule %d must have onExitCodes or onPodConditions, not both or neither", c.job.Name, i)
			continue
		}
		e := r.OnExitCodes
		if e == nil {
			continue
		}
		if name := e.ContainerName; name != nil && !slices.ContainsFunc(slices.Concat(pod.InitContainers, pod.Containers), func(ctr corev1.Container) bool { return ctr.Name == *name }) {
			c.errorf("Job/%s: podFailurePolicy rule %d names container %q, which the pod does not have", c.job.Name, i, *name)
		}
		if len(e.Values) == 0 || len(e.Values) > 255 || !slices.IsSorted(e.Values) || len(slices.Compact(slices.Clone(e.Values))) != len(e.Values) ||
			(e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(e.Values, 0)) {
			c.errorf("Job/%s: podFailurePolicy rule %d has exit codes %v: want 1 to 255 sorted, unique values (no 0 with In)", c.job.Name, i, e.Values)
		}
	}
}

// configMapMountedAt is the name of the ConfigMap volume container ctr mounts at dir.
func configMapMountedAt(pod *corev1.PodSpec, ctr corev1.Container, dir string) string {
	for _, m := range ctr.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	return ""
}

func findObject[T interface {
	runtime.Object
	GetName() string
}](objs []runtime.Object, name string) T {
	var zero T
	for _, o := range objs {
		if t, ok := o.(T); ok && t.GetName() == name {
			return t
		}
	}
	return zero
}

func objectsOf[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// Scripts are the shell scripts of the output: every .sh key of every ConfigMap, by
// "ConfigMap/<name>/<key>", and the script of every container whose command is `sh -c SCRIPT`
// (the keygen Job's), by "<Kind>/<name>/<container>".
func Scripts(objs []runtime.Object) map[string]string {
	scripts := map[string]string{}
	for _, cm := range objectsOf[*corev1.ConfigMap](objs) {
		for k, v := range cm.Data {
			if strings.HasSuffix(k, ".sh") {
				scripts["ConfigMap/"+cm.Name+"/"+k] = v
			}
		}
	}
	for name, pod := range podSpecs(objs) {
		for _, ctr := range slices.Concat(pod.InitContainers, pod.Containers) {
			if cmd := ctr.Command; len(cmd) >= 3 && shells[cmd[0]] != "" && cmd[1] == "-c" {
				scripts[name+"/"+ctr.Name] = cmd[2]
			}
		}
	}
	return scripts
}

// shells are the interpreters a script may name in its first line (#!), and in a container's
// command: the dialect shellcheck checks it as is the shebang's.
var shells = map[string]string{"/bin/bash": "bash", "/bin/sh": "sh"}

func (c *checker) bashSyntax() {
	scripts := Scripts(c.m.Objects)
	if len(scripts) == 0 {
		c.errorf("no scripts in the output")
	}
	for _, name := range slices.Sorted(maps.Keys(scripts)) {
		text := scripts[name]
		shebang, _, _ := strings.Cut(text, "\n")
		shell, ok := strings.CutPrefix(shebang, "#!")
		if !ok || shells[shell] == "" {
			c.errorf("%s does not start with #!/bin/bash or #!/bin/sh", name)
			continue
		}
		cmd := exec.Command(shell, "-n")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			c.errorf("%s -n %s: %v\n%s", shell, name, err, out)
		}
	}
}

// ShellcheckPath is where CI's Debian package installs shellcheck.
const ShellcheckPath = "/usr/bin/shellcheck"

// shellcheckExclusions are the deliberate exceptions, each with its reason. Keep the list short:
// a finding in generated code is fixed in the template, or excluded there with a
// `# shellcheck disable=` comment saying why.
var shellcheckExclusions = []string{
	// SC1091: flux-view.sh and other files sourced at run time do not exist when checking.
	"SC1091",
	// SC2164: `cd dir` without `|| exit` in users' commands.* hooks, which are inserted verbatim
	// (the operator's own examples do it); the generated code itself never runs cd.
	"SC2164",
}

// Shellcheck runs shellcheck (style level, every optional check but the exclusions above) once
// over all the scripts (name -> text, e.g. from Scripts) and returns one error per finding. Each
// is checked in the dialect its first line names (#!/bin/bash or #!/bin/sh). Identical texts are
// checked once, and so is a text across runs: shellcheck's result is a function of its version,
// its options and the text alone, so a text it found nothing in is remembered as clean in the
// user's cache directory (shellcheckMemo) and not checked again by the same shellcheck with the
// same options. Findings are never remembered. The generated scripts are about 90 texts of some
// 10 KB, which shellcheck takes about a second each to check.
func Shellcheck(scripts map[string]string) ([]error, error) {
	if _, err := os.Stat(ShellcheckPath); err != nil {
		return nil, fmt.Errorf("shellcheck is not installed at %s (apt-get install -y shellcheck): %w", ShellcheckPath, err)
	}
	options := []string{"--severity=style", "--format=gcc", "--norc", "--exclude=" + strings.Join(shellcheckExclusions, ",")}
	memo, err := newShellcheckMemo(options)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "outputcheck-shellcheck-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	byText := map[string][]string{} // text -> script names
	for name, text := range scripts {
		byText[text] = append(byText[text], name)
	}
	files := map[string][]string{} // file -> script names
	texts := map[string]string{}   // file -> text
	var args []string
	for text, names := range byText {
		if memo.clean(text) {
			continue
		}
		slices.Sort(names)
		f := filepath.Join(dir, fmt.Sprintf("%04d.sh", len(args)))
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			return nil, err
		}
		files[f], texts[f] = names, text
		args = append(args, f)
	}
	if len(args) == 0 {
		return nil, nil
	}
	slices.Sort(args)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ShellcheckPath, append(slices.Clone(options), args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if stderr.Len() > 0 {
		return nil, fmt.Errorf("shellcheck: %v: %s", err, stderr.String())
	}
	var findings []error
	found := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		f, rest, _ := strings.Cut(line, ":")
		found[f] = true
		findings = append(findings, fmt.Errorf("%s:%s", strings.Join(files[f], ", "), rest))
	}
	if err != nil && len(findings) == 0 {
		return nil, fmt.Errorf("shellcheck failed without findings: %v", err)
	}
	for _, f := range args {
		if !found[f] {
			memo.remember(texts[f])
		}
	}
	return findings, nil
}

// shellcheckMemo remembers the texts a shellcheck found nothing in, as empty files named by the
// SHA-256 of its version, its options and the text, under the user's cache directory. Where
// there is no cache directory it remembers nothing.
type shellcheckMemo struct {
	dir, key string
}

func newShellcheckMemo(options []string) (*shellcheckMemo, error) {
	version, err := exec.Command(ShellcheckPath, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("shellcheck --version: %w", err)
	}
	m := &shellcheckMemo{key: string(version) + "\x00" + strings.Join(options, "\x00") + "\x00"}
	if cache, err := os.UserCacheDir(); err == nil {
		m.dir = filepath.Join(cache, "minicluster-fn-tests", "shellcheck-clean")
	}
	return m, nil
}

func (m *shellcheckMemo) path(text string) string {
	return filepath.Join(m.dir, fmt.Sprintf("%x", sha256.Sum256([]byte(m.key+text))))
}

func (m *shellcheckMemo) clean(text string) bool {
	if m.dir == "" {
		return false
	}
	_, err := os.Stat(m.path(text))
	return err == nil
}

// remember records a clean text; a cache that cannot be written only costs the next run time.
func (m *shellcheckMemo) remember(text string) {
	if m.dir == "" || os.MkdirAll(m.dir, 0o755) != nil {
		return
	}
	_ = os.WriteFile(m.path(text), nil, 0o644)
}

// printsCurve matches a script line that would print the certificate: a shell command, or a Python
// print or write (the keygen publisher, whose certificate text and key are cert_text and
// secret_key), that names it.
var printsCurve = regexp.MustCompile(`\b((cat|echo|printf|head|tail|less|more|xxd|od|base64|strings|tee)\s|(print|write|say)\()[^\n]*(curve\.cert|curvepath|curve_cert|cert_text|secret_key)`)
