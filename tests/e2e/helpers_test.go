// Package e2e drives the real minicluster-fn binary, alone and under the real kustomize, and checks
// the manifests it produces by decoding them into the typed Kubernetes objects.
//
// The binaries come from the environment (MINICLUSTER_FN, KUSTOMIZE: `make test` sets both) or,
// when unset, from <repo root>/bin.
package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
)

const (
	modulePath = "github.com/minicluster-fn/minicluster-fn"

	labelComponent   = contract.LabelComponent
	labelMiniCluster = contract.LabelMiniCluster
	labelManagedBy   = "app.kubernetes.io/managed-by"

	componentBroker   = contract.ComponentBroker
	componentHeadless = contract.ComponentHeadless
	componentKeygen   = contract.ComponentKeygen
	componentEntry    = contract.ComponentEntrypoint

	// jobCompletionIndexLabel is set on every pod of an Indexed Job by the Job controller.
	jobCompletionIndexLabel = "batch.kubernetes.io/job-completion-index"
)

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repoRoot is the directory of the go.mod of this module, found upwards from the test's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.Contains(string(b), "module "+modulePath+"\n") {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("go.mod of " + modulePath + " not found above the test directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		t.Fatal(rootErr)
	}
	return rootDir
}

// tool finds a binary: the absolute path in env, else <repo root>/bin/<name>. A missing binary skips
// the test with the command that provides it.
func tool(t testing.TB, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(repoRoot(t), "bin", name)
	} else if !filepath.IsAbs(p) {
		t.Fatalf("%s=%q must be an absolute path", env, p)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Skipf("%s not found at %s (set %s): run `make unit`, which builds it", name, p, env)
	}
	return p
}

func fnBinary(t testing.TB) string        { return tool(t, "MINICLUSTER_FN", "minicluster-fn") }
func kustomizeBinary(t testing.TB) string { return tool(t, "KUSTOMIZE", "kustomize") }

// result is what a process left behind.
type result struct {
	stdout, stderr []byte
	code           int
}

// run runs a command with stdin (may be nil) and returns its output and exit code; a failure to
// start it at all fails the test.
func run(t testing.TB, stdin []byte, dir string, name string, args ...string) result {
	t.Helper()
	return runEnv(t, stdin, dir, nil, name, args...)
}

// runEnv is run with the environment env (nil: the test's own).
func runEnv(t testing.TB, stdin []byte, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			t.Fatalf("running %s %s: %v", name, strings.Join(args, " "), err)
		}
		code = exitErr.ExitCode()
	}
	return result{stdout: out.Bytes(), stderr: errOut.Bytes(), code: code}
}

// manifests are the decoded objects of one YAML stream, in stream order.
type manifests struct {
	ConfigMaps      []*corev1.ConfigMap
	Secrets         []*corev1.Secret
	Services        []*corev1.Service
	Jobs            []*batchv1.Job
	Pods            []*corev1.Pod
	ServiceAccounts []*corev1.ServiceAccount
	Roles           []*rbacv1.Role
	RoleBindings    []*rbacv1.RoleBinding
	// LocalQueues are Kueue's, which examples/kueue's kustomization holds beside the MiniCluster.
	LocalQueues []*kueue.LocalQueue
	// All holds every object, with its kind, in stream order.
	All []object
}

type object struct {
	Kind string
	metav1.Object
}

func (o object) String() string { return o.Kind + "/" + o.GetName() }

// splitDocuments splits a YAML stream into its non-empty documents.
func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// decodeManifests decodes every document strictly into its typed object; a kind this function does
// not generate (but Kueue's LocalQueue, which an example's kustomization adds), or a field the type
// does not have, is an error.
func decodeManifests(data []byte) (*manifests, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("splitting the YAML stream: %w", err)
	}
	m := &manifests{}
	for i, doc := range docs {
		var tm metav1.TypeMeta
		if err := sigsyaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var target interface {
			metav1.Object
		}
		wantAPI := "v1"
		switch tm.Kind {
		case "ConfigMap":
			o := &corev1.ConfigMap{}
			m.ConfigMaps, target = append(m.ConfigMaps, o), o
		case "Secret":
			o := &corev1.Secret{}
			m.Secrets, target = append(m.Secrets, o), o
		case "Service":
			o := &corev1.Service{}
			m.Services, target = append(m.Services, o), o
		case "Pod":
			o := &corev1.Pod{}
			m.Pods, target = append(m.Pods, o), o
		case "ServiceAccount":
			o := &corev1.ServiceAccount{}
			m.ServiceAccounts, target = append(m.ServiceAccounts, o), o
		case "Job":
			o := &batchv1.Job{}
			m.Jobs, target, wantAPI = append(m.Jobs, o), o, "batch/v1"
		case "Role":
			o := &rbacv1.Role{}
			m.Roles, target, wantAPI = append(m.Roles, o), o, "rbac.authorization.k8s.io/v1"
		case "RoleBinding":
			o := &rbacv1.RoleBinding{}
			m.RoleBindings, target, wantAPI = append(m.RoleBindings, o), o, "rbac.authorization.k8s.io/v1"
		case "LocalQueue":
			o := &kueue.LocalQueue{}
			m.LocalQueues, target, wantAPI = append(m.LocalQueues, o), o, kueue.GroupVersion.String()
		default:
			return nil, fmt.Errorf("document %d: unexpected kind %q (apiVersion %q)", i+1, tm.Kind, tm.APIVersion)
		}
		if tm.APIVersion != wantAPI {
			return nil, fmt.Errorf("document %d: %s has apiVersion %q, want %q", i+1, tm.Kind, tm.APIVersion, wantAPI)
		}
		if err := sigsyaml.UnmarshalStrict(doc, target); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
		m.All = append(m.All, object{Kind: tm.Kind, Object: target})
	}
	return m, nil
}

func (m *manifests) kindCounts() map[string]int {
	c := map[string]int{}
	for _, o := range m.All {
		c[o.Kind]++
	}
	return c
}

func (m *manifests) configMap(name string) *corev1.ConfigMap {
	for _, cm := range m.ConfigMaps {
		if cm.Name == name {
			return cm
		}
	}
	return nil
}

func (m *manifests) secret(name string) *corev1.Secret {
	for _, s := range m.Secrets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// curveSource is the kind (Secret or ConfigMap) and name of the object whose curve.cert the
// broker pods of job mount; empty when they mount none.
func curveSource(job *batchv1.Job) (kind, name string) {
	for _, v := range job.Spec.Template.Spec.Volumes {
		switch {
		case v.Name != curveVolumeName:
		case v.Secret != nil:
			return "Secret", v.Secret.SecretName
		case v.ConfigMap != nil:
			return "ConfigMap", v.ConfigMap.Name
		}
	}
	return "", ""
}

func jobsWith(m *manifests, component string) []*batchv1.Job {
	var out []*batchv1.Job
	for _, j := range m.Jobs {
		if j.Labels[labelComponent] == component {
			out = append(out, j)
		}
	}
	return out
}

func servicesWith(m *manifests, component string) []*corev1.Service {
	var out []*corev1.Service
	for _, s := range m.Services {
		if s.Labels[labelComponent] == component {
			out = append(out, s)
		}
	}
	return out
}

// miniClusterInfo is what the checks need to know of an input MiniCluster, read generically so the
// tests do not depend on the Go types under test.
type miniClusterInfo struct {
	Name string
	Size int
	// UserConfigMaps are ConfigMaps the MiniCluster mounts but does not generate (volumes with
	// configMapName): they exist in the cluster already.
	UserConfigMaps map[string]bool
}

// curveVolumeName is the broker pods' volume of the CURVE certificate.
const curveVolumeName = "flux-curve"

func readMiniCluster(t testing.TB, data []byte) miniClusterInfo {
	t.Helper()
	var mc struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Size       *int `json:"size"`
			Containers []struct {
				Volumes map[string]struct {
					ConfigMapName string `json:"configMapName"`
				} `json:"volumes"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(data, &mc); err != nil {
		t.Fatalf("reading the MiniCluster: %v", err)
	}
	info := miniClusterInfo{Name: mc.Metadata.Name, Size: 1, UserConfigMaps: map[string]bool{}}
	if mc.Spec.Size != nil {
		info.Size = *mc.Spec.Size
	}
	for _, c := range mc.Spec.Containers {
		for _, v := range c.Volumes {
			if v.ConfigMapName != "" {
				info.UserConfigMaps[v.ConfigMapName] = true
			}
		}
	}
	return info
}

// checkManifestSet asserts what every rendered MiniCluster must satisfy: one broker Job of size pods,
// a headless Service that selects them and is their subdomain, ConfigMap volumes that resolve, no
// MiniCluster and no orchestrator annotations. It returns the broker Job and the headless Service.
func checkManifestSet(t testing.TB, m *manifests, mc miniClusterInfo) (*batchv1.Job, *corev1.Service) {
	t.Helper()
	if len(m.All) == 0 {
		t.Errorf("no objects in the output")
		return nil, nil
	}
	for _, o := range m.All {
		for k := range o.GetAnnotations() {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "config.k8s.io/") {
				t.Errorf("%s: orchestrator annotation %q leaked into the output", o, k)
			}
		}
	}
	brokers := jobsWith(m, componentBroker)
	if len(brokers) != 1 {
		t.Errorf("want exactly one broker Job (%s=%s), got %d", labelComponent, componentBroker, len(brokers))
		return nil, nil
	}
	job := brokers[0]
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("Job/%s: completionMode = %v, want Indexed", job.Name, spec.CompletionMode)
	}
	if spec.Completions == nil || int(*spec.Completions) != mc.Size {
		t.Errorf("Job/%s: completions = %v, want spec.size %d", job.Name, deref(spec.Completions), mc.Size)
	}
	if spec.Parallelism == nil || int(*spec.Parallelism) != mc.Size {
		t.Errorf("Job/%s: parallelism = %v, want spec.size %d", job.Name, deref(spec.Parallelism), mc.Size)
	}

	headless := servicesWith(m, componentHeadless)
	if len(headless) != 1 {
		t.Errorf("want exactly one headless Service (%s=%s), got %d", labelComponent, componentHeadless, len(headless))
		return job, nil
	}
	svc := headless[0]
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("Service/%s: clusterIP = %q, want None", svc.Name, svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service/%s: publishNotReadyAddresses is false, want true", svc.Name)
	}
	if len(svc.Spec.Selector) == 0 {
		t.Errorf("Service/%s: empty selector", svc.Name)
	} else {
		// The Job controller adds the completion index label to each pod; a Service may select
		// one rank with it (the minimal service selects rank 0).
		podLabels := labels.Set{}
		maps.Copy(podLabels, job.Spec.Template.Labels)
		if idx, ok := svc.Spec.Selector[jobCompletionIndexLabel]; ok {
			if n, err := strconv.Atoi(idx); err != nil || n < 0 || n >= mc.Size {
				t.Errorf("Service/%s: selects %s=%q, not a rank of 0..%d", svc.Name, jobCompletionIndexLabel, idx, mc.Size-1)
			}
			podLabels[jobCompletionIndexLabel] = idx
		}
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
			t.Errorf("Service/%s: selector %v does not match the broker pod labels %v", svc.Name, svc.Spec.Selector, job.Spec.Template.Labels)
		}
	}
	if got := job.Spec.Template.Spec.Subdomain; got != svc.Name {
		t.Errorf("Job/%s: pod subdomain = %q, want the headless Service %q", job.Name, got, svc.Name)
	}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil || v.Name == curveVolumeName {
			continue
		}
		if mc.UserConfigMaps[v.ConfigMap.Name] {
			t.Logf("Job/%s: volume %s mounts the user's ConfigMap %s (named in the MiniCluster, not generated)", job.Name, v.Name, v.ConfigMap.Name)
			continue
		}
		if m.configMap(v.ConfigMap.Name) == nil {
			t.Errorf("Job/%s: volume %s refers to ConfigMap %q, which is not in the output", job.Name, v.Name, v.ConfigMap.Name)
		}
	}
	return job, svc
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// entrypointConfigMap is the ConfigMap the broker Job mounts as its entrypoint (the first ConfigMap
// volume that is in the output and carries the entrypoint component label).
func entrypointConfigMap(t testing.TB, m *manifests, job *batchv1.Job) *corev1.ConfigMap {
	t.Helper()
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		if cm := m.configMap(v.ConfigMap.Name); cm != nil && cm.Labels[labelComponent] == componentEntry {
			return cm
		}
	}
	t.Errorf("Job/%s mounts no entrypoint ConfigMap of the output", job.Name)
	return nil
}

var bashOnce sync.Once
var bashPath string

// checkScripts runs `bash -n` on every .sh key of the ConfigMap.
func checkScripts(t testing.TB, cm *corev1.ConfigMap) {
	t.Helper()
	bashOnce.Do(func() { bashPath, _ = exec.LookPath("bash") })
	if bashPath == "" {
		t.Fatalf("bash not found in PATH: needed to syntax-check the generated scripts")
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		if strings.HasSuffix(k, ".sh") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		t.Errorf("ConfigMap/%s has no .sh scripts", cm.Name)
	}
	dir := t.TempDir()
	for _, k := range keys {
		file := filepath.Join(dir, k)
		if err := os.WriteFile(file, []byte(cm.Data[k]), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bashPath, "-n", file)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("ConfigMap/%s key %s: bash -n failed: %v\n%s", cm.Name, k, err, out)
		}
	}
}

// copyDir copies a directory tree of regular files.
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
