package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// The Argo CD examples (examples/argocd) are tested as far as it goes without an Argo CD: every
// manifest decodes strictly, the repo-server patches merge into Argo CD's repo-server Deployment
// as intended, and the MiniCluster is rendered the way each setup renders it in Argo CD.
//
// Argo CD's own types are not a dependency of this module: the examples are decoded strictly into
// the local structs below, which list only the fields the examples use (names as in argo-cd
// pkg/apis/application/v1alpha1/types.go and docs/operator-manual/config-management-plugins.md).

type argoApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Project string `json:"project"`
		Source  struct {
			RepoURL        string `json:"repoURL"`
			TargetRevision string `json:"targetRevision"`
			Path           string `json:"path"`
			Plugin         *struct {
				Name string          `json:"name"`
				Env  []corev1.EnvVar `json:"env"`
			} `json:"plugin"`
		} `json:"source"`
		Destination struct {
			Server    string `json:"server"`
			Namespace string `json:"namespace"`
		} `json:"destination"`
		SyncPolicy struct {
			Automated *struct {
				Prune      bool `json:"prune"`
				SelfHeal   bool `json:"selfHeal"`
				AllowEmpty bool `json:"allowEmpty"`
			} `json:"automated"`
			SyncOptions []string `json:"syncOptions"`
		} `json:"syncPolicy"`
	} `json:"spec"`
}

type argoCMPCommand struct {
	Command []string `json:"command"`
	Args    []string `json:"args"`
}

type argoConfigManagementPlugin struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Version          string          `json:"version"`
		Init             *argoCMPCommand `json:"init"`
		Generate         argoCMPCommand  `json:"generate"`
		PreserveFileMode bool            `json:"preserveFileMode"`
	} `json:"spec"`
}

const (
	argoAPIVersion = "argoproj.io/v1alpha1"
	// argoSyncWave orders Argo CD's apply: a wave starts once every earlier one is healthy, and a
	// Job is healthy only when it has completed (argo-cd docs/user-guide/sync-waves.md;
	// gitops-engine pkg/health/health_job.go).
	argoSyncWave = "argocd.argoproj.io/sync-wave"
	// The plugin sidecar's config file and the CMP server Argo CD's copyutil init container
	// provides (docs/operator-manual/config-management-plugins.md).
	argoCMPConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
	argoVarFiles      = "/var/run/argocd"
	argoCMPServer     = argoVarFiles + "/argocd-cmp-server"
	// Both setups put the binary here, on the PATH of Argo CD's image.
	fnOnPath = "/usr/local/bin/minicluster-fn"
)

// argoRepoServer is the part of Argo CD's argocd-repo-server Deployment the patches touch
// (argo-cd manifests/base/repo-server/argocd-repo-server-deployment.yaml).
const argoRepoServer = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: argocd-repo-server
  template:
    metadata:
      labels:
        app.kubernetes.io/name: argocd-repo-server
    spec:
      serviceAccountName: argocd-repo-server
      automountServiceAccountToken: false
      containers:
      - name: argocd-repo-server
        image: quay.io/argoproj/argocd:latest
        args: [/usr/local/bin/argocd-repo-server]
        volumeMounts:
        - {name: tmp, mountPath: /tmp}
        - {name: helm-working-dir, mountPath: /helm-working-dir}
        - {name: plugins, mountPath: /home/argocd/cmp-server/plugins}
      initContainers:
      - name: copyutil
        image: quay.io/argoproj/argocd:latest
        command: [sh, -c]
        args:
        - /bin/cp --update=none /usr/local/bin/argocd /var/run/argocd/argocd && /bin/ln -s /var/run/argocd/argocd /var/run/argocd/argocd-cmp-server
        volumeMounts:
        - {name: var-files, mountPath: /var/run/argocd}
      volumes:
      - {name: tmp, emptyDir: {}}
      - {name: helm-working-dir, emptyDir: {}}
      - {name: var-files, emptyDir: {}}
      - {name: plugins, emptyDir: {}}
`

func argoExamplesDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "examples", "argocd")
}

// argoExample reads one file of examples/argocd.
func argoExample(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(argoExamplesDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeStrict(t *testing.T, file string, data []byte, into any) {
	t.Helper()
	if err := sigsyaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestArgoCDExamplesDecode(t *testing.T) {
	dir := argoExamplesDir(t)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := splitDocuments(b)
		if err != nil || len(docs) != 1 {
			t.Fatalf("%s: want one YAML document, got %d (%v)", rel, len(docs), err)
		}
		var tm metav1.TypeMeta
		if err := sigsyaml.Unmarshal(docs[0], &tm); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		kinds[tm.Kind]++
		wantAPI := map[string]string{
			"Application": argoAPIVersion, "ConfigManagementPlugin": argoAPIVersion, "ConfigMap": "v1",
			"Deployment": "apps/v1", "Kustomization": "kustomize.config.k8s.io/v1beta1", "MiniCluster": "flux-framework.org/v1alpha2",
		}[tm.Kind]
		if wantAPI == "" || tm.APIVersion != wantAPI {
			t.Errorf("%s: %s %s is not a kind these examples should hold", rel, tm.APIVersion, tm.Kind)
			continue
		}
		switch tm.Kind {
		case "Application":
			decodeStrict(t, rel, docs[0], &argoApplication{})
		case "ConfigManagementPlugin":
			decodeStrict(t, rel, docs[0], &argoConfigManagementPlugin{})
		case "ConfigMap":
			decodeStrict(t, rel, docs[0], &corev1.ConfigMap{})
		case "Deployment":
			decodeStrict(t, rel, docs[0], &appsv1.Deployment{})
		case "Kustomization":
			decodeStrict(t, rel, docs[0], &kusttypes.Kustomization{})
		case "MiniCluster":
			if res := run(t, nil, "", fnBinary(t), "validate", file); res.code != 0 {
				t.Errorf("%s: minicluster-fn validate exited %d\n%s", rel, res.code, res.stderr)
			}
		}
	}
	want := map[string]int{"Application": 2, "ConfigManagementPlugin": 1, "ConfigMap": 2, "Deployment": 2, "Kustomization": 1, "MiniCluster": 1}
	for kind, n := range want {
		if kinds[kind] != n {
			t.Errorf("examples/argocd holds %d %s, want %d (found %v)", kinds[kind], kind, n, kinds)
		}
	}
}

// TestArgoCDApplications checks what the Applications refer to.
func TestArgoCDApplications(t *testing.T) {
	var plugin argoConfigManagementPlugin
	decodeStrict(t, "cmp/plugin.yaml", argoExample(t, "cmp/plugin.yaml"), &plugin)
	for _, rel := range []string{"kustomize-exec/application.yaml", "cmp/application.yaml"} {
		var app argoApplication
		decodeStrict(t, rel, argoExample(t, rel), &app)
		src := app.Spec.Source
		if _, err := os.Stat(filepath.Join(repoRoot(t), filepath.FromSlash(src.Path), "kustomization.yaml")); err != nil {
			t.Errorf("%s: source.path %q is no kustomization of this repository: %v", rel, src.Path, err)
		}
		// An empty render (the generator did not run) would prune everything; Argo CD refuses to
		// do that automatically unless allowEmpty is set (docs/user-guide/auto_sync.md).
		if a := app.Spec.SyncPolicy.Automated; a != nil && a.Prune && a.AllowEmpty {
			t.Errorf("%s: automated prune with allowEmpty: an empty render would delete the MiniCluster's objects", rel)
		}
		if app.Spec.Destination.Namespace == "" {
			t.Errorf("%s: no destination namespace: the generated objects have none", rel)
		}
		if rel == "cmp/application.yaml" {
			// A plugin with spec.version is named <name>-<version> in the Application.
			want := plugin.Name
			if plugin.Spec.Version != "" {
				want += "-" + plugin.Spec.Version
			}
			if src.Plugin == nil || src.Plugin.Name != want {
				t.Errorf("%s: source.plugin = %+v, want name %q (cmp/plugin.yaml)", rel, src.Plugin, want)
			}
		} else if src.Plugin != nil {
			t.Errorf("%s: a plugin is set, but this setup uses Argo CD's own kustomize", rel)
		}
	}
}

// patchedRepoServer applies a strategic merge patch of the examples to Argo CD's repo-server, as
// `kubectl patch deployment argocd-repo-server --patch-file` does.
func patchedRepoServer(t *testing.T, rel string) *corev1.PodSpec {
	t.Helper()
	var base appsv1.Deployment
	decodeStrict(t, "argoRepoServer", []byte(argoRepoServer), &base)
	orig, err := json.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := sigsyaml.YAMLToJSON(argoExample(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, patch, appsv1.Deployment{})
	if err != nil {
		t.Fatalf("%s does not apply to argocd-repo-server: %v", rel, err)
	}
	var out appsv1.Deployment
	if err := json.Unmarshal(merged, &out); err != nil {
		t.Fatal(err)
	}
	spec := &out.Spec.Template.Spec
	// The patch adds to Argo CD's lists, merged by name; it must not replace them.
	for _, c := range base.Spec.Template.Spec.Containers {
		if container(spec.Containers, c.Name) == nil {
			t.Errorf("%s: container %s of the repo-server is gone after the patch", rel, c.Name)
		}
	}
	if container(spec.InitContainers, "copyutil") == nil {
		t.Errorf("%s: Argo CD's copyutil init container is gone after the patch", rel)
	}
	for _, v := range base.Spec.Template.Spec.Volumes {
		if !slices.ContainsFunc(spec.Volumes, func(w corev1.Volume) bool { return w.Name == v.Name }) {
			t.Errorf("%s: volume %s of the repo-server is gone after the patch", rel, v.Name)
		}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
				t.Errorf("%s: container %s mounts volume %s, which the pod does not have", rel, c.Name, m.Name)
			}
		}
	}
	checkInstallInitContainer(t, rel, spec)
	return spec
}

func container(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func mountAt(c *corev1.Container, path string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// checkInstallInitContainer checks that the init container runs `minicluster-fn install` (the
// image's entrypoint) from the project's image into the volume that the other containers mount at
// fnOnPath.
func checkInstallInitContainer(t *testing.T, rel string, spec *corev1.PodSpec) {
	t.Helper()
	install := container(spec.InitContainers, "install-minicluster-fn")
	if install == nil {
		t.Fatalf("%s: no install-minicluster-fn init container", rel)
	}
	if !strings.HasPrefix(install.Image, version.ImageRepository+":") {
		t.Errorf("%s: init container image %q is not the project's image %s:<version>", rel, install.Image, version.ImageRepository)
	}
	if len(install.VolumeMounts) != 1 {
		t.Fatalf("%s: init container mounts %v, want one volume", rel, install.VolumeMounts)
	}
	vol := install.VolumeMounts[0]
	if len(install.Command) != 0 || !slices.Equal(install.Args, []string{"install", vol.MountPath}) {
		t.Errorf("%s: init container command %q args %q, want the image's entrypoint with [install %s]", rel, install.Command, install.Args, vol.MountPath)
	}
	for _, c := range spec.Containers {
		if m := mountAt(&c, fnOnPath); m != nil && (m.Name != vol.Name || m.SubPath != "minicluster-fn") {
			t.Errorf("%s: container %s mounts %s from %s/%s, want %s/minicluster-fn", rel, c.Name, fnOnPath, m.Name, m.SubPath, vol.Name)
		}
	}
}

func TestArgoCDRepoServerPatches(t *testing.T) {
	t.Run("kustomize-exec", func(t *testing.T) {
		spec := patchedRepoServer(t, "kustomize-exec/repo-server-patch.yaml")
		if repo := container(spec.Containers, "argocd-repo-server"); repo == nil || mountAt(repo, fnOnPath) == nil {
			t.Errorf("the repo-server container does not get minicluster-fn at %s", fnOnPath)
		}
		var cm corev1.ConfigMap
		decodeStrict(t, "kustomize-exec/argocd-cm-patch.yaml", argoExample(t, "kustomize-exec/argocd-cm-patch.yaml"), &cm)
		opts := strings.Fields(cm.Data["kustomize.buildOptions"])
		if cm.Name != "argocd-cm" || !slices.Contains(opts, "--enable-alpha-plugins") || !slices.Contains(opts, "--enable-exec") {
			t.Errorf("argocd-cm-patch.yaml: %s kustomize.buildOptions = %q, want argocd-cm with --enable-alpha-plugins --enable-exec", cm.Name, opts)
		}
	})

	t.Run("cmp", func(t *testing.T) {
		spec := patchedRepoServer(t, "cmp/repo-server-patch.yaml")
		sidecar := container(spec.Containers, "minicluster-fn-cmp")
		if sidecar == nil {
			t.Fatal("no minicluster-fn-cmp sidecar")
		}
		// Argo CD requires the CMP server as entrypoint and user 999 (config-management-plugins.md).
		if !slices.Equal(sidecar.Command, []string{argoCMPServer}) {
			t.Errorf("sidecar command %q, want [%s]", sidecar.Command, argoCMPServer)
		}
		if sc := sidecar.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 999 {
			t.Errorf("the sidecar does not run as user 999")
		}
		for path, volume := range map[string]string{argoVarFiles: "var-files", "/home/argocd/cmp-server/plugins": "plugins"} {
			if m := mountAt(sidecar, path); m == nil || m.Name != volume {
				t.Errorf("the sidecar does not mount %s at %s", volume, path)
			}
		}
		if m := mountAt(sidecar, "/tmp"); m == nil || m.Name == "tmp" {
			t.Errorf("the sidecar needs its own /tmp, not the repo-server's tmp volume: %+v", m)
		}
		if mountAt(sidecar, fnOnPath) == nil {
			t.Errorf("the sidecar does not get minicluster-fn at %s", fnOnPath)
		}
		m := mountAt(sidecar, argoCMPConfigPath)
		if m == nil || m.SubPath != "plugin.yaml" {
			t.Fatalf("the sidecar does not mount plugin.yaml at %s: %+v", argoCMPConfigPath, m)
		}
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 || spec.Volumes[i].ConfigMap == nil {
			t.Fatalf("plugin.yaml does not come from a ConfigMap volume")
		}
		// The ConfigMap is made from cmp/plugin.yaml as its comment says.
		create := "kubectl -n argocd create configmap " + spec.Volumes[i].ConfigMap.Name + " --from-file=plugin.yaml"
		if !strings.Contains(string(argoExample(t, "cmp/plugin.yaml")), create) {
			t.Errorf("cmp/plugin.yaml does not say how to make the ConfigMap the sidecar mounts: %q", create)
		}
	})
}

// argoBuildEnv is the environment Argo CD gives a plugin command or kustomize: the build
// environment (docs/user-guide/build-environment.md), the Application's plugin env prefixed with
// ARGOCD_ENV_, and PATH with the tools of the image.
func argoBuildEnv(t *testing.T, app *argoApplication, pathDir string) []string {
	t.Helper()
	const revision = "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8"
	env := []string{
		"PATH=" + pathDir,
		"HOME=" + t.TempDir(),
		"ARGOCD_APP_NAME=" + app.Name,
		"ARGOCD_APP_NAMESPACE=" + app.Spec.Destination.Namespace,
		"ARGOCD_APP_PROJECT_NAME=" + app.Spec.Project,
		"ARGOCD_APP_REVISION=" + revision,
		"ARGOCD_APP_REVISION_SHORT=" + revision[:7],
		"ARGOCD_APP_REVISION_SHORT_8=" + revision[:8],
		"ARGOCD_APP_SOURCE_PATH=" + app.Spec.Source.Path,
		"ARGOCD_APP_SOURCE_REPO_URL=" + app.Spec.Source.RepoURL,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + app.Spec.Source.TargetRevision,
		"KUBE_VERSION=1.37.0",
		"KUBE_API_VERSIONS=v1,apps/v1,batch/v1,rbac.authorization.k8s.io/v1",
	}
	if p := app.Spec.Source.Plugin; p != nil {
		for _, e := range p.Env {
			env = append(env, "ARGOCD_ENV_"+e.Name+"="+e.Value)
		}
	}
	return env
}

// argoCheckout copies the Application's source directory into a fresh repository checkout, as
// Argo CD hands it over: without exec bits. It returns the checkout's root.
func argoCheckout(t *testing.T, app *argoApplication) string {
	t.Helper()
	repo := t.TempDir()
	src := filepath.FromSlash(app.Spec.Source.Path)
	copyDir(t, filepath.Join(repoRoot(t), src), filepath.Join(repo, src))
	err := filepath.WalkDir(repo, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if fi, err := d.Info(); err != nil || fi.Mode()&0o111 != 0 {
			t.Fatalf("%s is executable in the checkout (%v)", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// argoToolsDir is a directory holding kustomize and minicluster-fn, the only tools on the PATH of
// the rendering commands. minicluster-fn gets there as the init container puts it there.
func argoToolsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(kustomizeBinary(t), filepath.Join(dir, "kustomize")); err != nil {
		t.Fatal(err)
	}
	if res := run(t, nil, "", fnBinary(t), "install", dir); res.code != 0 {
		t.Fatalf("minicluster-fn install %s: exit %d\n%s", dir, res.code, res.stderr)
	}
	return dir
}

func TestArgoCDRender(t *testing.T) {
	tools := argoToolsDir(t)
	mc := readMiniCluster(t, argoExample(t, "app/minicluster.yaml"))
	outputs := map[string][]byte{}

	// (b) The plugin's generate command, run as the CMP server runs it: in the Application's
	// source directory with the build environment (config-management-plugins.md).
	t.Run("cmp", func(t *testing.T) {
		var app argoApplication
		decodeStrict(t, "cmp/application.yaml", argoExample(t, "cmp/application.yaml"), &app)
		var plugin argoConfigManagementPlugin
		decodeStrict(t, "cmp/plugin.yaml", argoExample(t, "cmp/plugin.yaml"), &plugin)
		if plugin.Spec.PreserveFileMode || plugin.Spec.Init != nil {
			t.Errorf("cmp/plugin.yaml: preserveFileMode or init set; the test runs generate alone on files without exec bits")
		}
		cmd := append(slices.Clone(plugin.Spec.Generate.Command), plugin.Spec.Generate.Args...)
		if len(cmd) == 0 || strings.Contains(cmd[0], "/") {
			t.Fatalf("cmp/plugin.yaml: generate command %q, want a program found on the sidecar's PATH", cmd)
		}
		repo := argoCheckout(t, &app)
		res := runEnv(t, nil, filepath.Join(repo, filepath.FromSlash(app.Spec.Source.Path)), argoBuildEnv(t, &app, tools),
			filepath.Join(tools, cmd[0]), cmd[1:]...)
		if res.code != 0 {
			t.Fatalf("generate %q exited %d\nstderr:\n%s", cmd, res.code, res.stderr)
		}
		checkArgoRender(t, res.stdout, mc)
		outputs["cmp"] = res.stdout
	})

	// (a) Argo CD's own kustomize: `kustomize build <path> <kustomize.buildOptions>` in the
	// repository root (argo-cd util/kustomize/kustomize.go, parseKustomizeBuildOptions).
	t.Run("kustomize-exec", func(t *testing.T) {
		var app argoApplication
		decodeStrict(t, "kustomize-exec/application.yaml", argoExample(t, "kustomize-exec/application.yaml"), &app)
		var cm corev1.ConfigMap
		decodeStrict(t, "kustomize-exec/argocd-cm-patch.yaml", argoExample(t, "kustomize-exec/argocd-cm-patch.yaml"), &cm)
		repo := argoCheckout(t, &app)
		args := append([]string{"build", filepath.Join(repo, filepath.FromSlash(app.Spec.Source.Path))}, strings.Fields(cm.Data["kustomize.buildOptions"])...)
		res := runEnv(t, nil, repo, argoBuildEnv(t, &app, tools), filepath.Join(tools, "kustomize"), args...)
		if res.code != 0 {
			t.Fatalf("kustomize %q exited %d\nstderr:\n%s", args, res.code, res.stderr)
		}
		checkArgoRender(t, res.stdout, mc)
		outputs["kustomize-exec"] = res.stdout
	})

	if a, b := outputs["cmp"], outputs["kustomize-exec"]; a != nil && b != nil && string(a) != string(b) {
		t.Errorf("the two setups render different manifests:\n--- cmp ---\n%s\n--- kustomize-exec ---\n%s", a, b)
	}
}

// checkArgoRender checks a render for Argo CD: only Kubernetes objects on stdout, the complete
// manifest set, and sync waves in which every object's prerequisites come first.
func checkArgoRender(t *testing.T, out []byte, mc miniClusterInfo) {
	t.Helper()
	m, err := decodeManifests(out)
	if err != nil {
		t.Fatalf("the output is not only Kubernetes objects: %v\n%s", err, out)
	}
	checkManifestSet(t, m, mc)
	waves := map[string]int{}
	for _, o := range m.All {
		w, err := strconv.Atoi(o.GetAnnotations()[argoSyncWave])
		if err != nil {
			t.Errorf("%s: %s = %q is not a sync wave", o, argoSyncWave, o.GetAnnotations()[argoSyncWave])
		}
		waves[o.String()] = w
	}
	keygen := jobsWith(m, componentKeygen)
	brokers := jobsWith(m, componentBroker)
	headless := servicesWith(m, componentHeadless)
	if len(keygen) != 1 || len(brokers) != 1 || len(headless) != 1 {
		t.Fatalf("want one keygen Job, one broker Job and one headless Service, got %d, %d, %d", len(keygen), len(brokers), len(headless))
	}
	keygenWave := waves["Job/"+keygen[0].Name]
	for _, o := range m.All {
		w := waves[o.String()]
		switch {
		case o.GetLabels()[labelComponent] == componentKeygen && o.Kind != "Job":
			// The keygen Job's ServiceAccount, Role and RoleBinding.
			if w > keygenWave {
				t.Errorf("%s is in wave %d, after the keygen Job (%d) that needs it", o, w, keygenWave)
			}
		case o.String() == "Service/"+headless[0].Name:
			// The keygen Job makes the headless Service the owner of the certificate and fails
			// until the Service exists; a later wave would wait for the Job for ever.
			if w > keygenWave {
				t.Errorf("%s is in wave %d, after the keygen Job (%d) that needs it as the certificate's owner", o, w, keygenWave)
			}
		case o.GetLabels()[labelComponent] != componentKeygen:
			// Everything else after the keygen Job: the brokers then start with the certificate.
			if w <= keygenWave {
				t.Errorf("%s is in wave %d, not after the keygen Job (%d)", o, w, keygenWave)
			}
		}
		if w > waves["Job/"+brokers[0].Name] {
			t.Errorf("%s is in wave %d, after the broker Job (%d)", o, w, waves["Job/"+brokers[0].Name])
		}
	}
}

// TestContainerArgoCDInstall (`make container-test` runs it) runs the examples' init container
// with the project image as Kubernetes would (its args, a read-only root filesystem, an emptyDir
// of mode 0777 at the mount path): the binary must arrive in the volume, executable.
func TestContainerArgoCDInstall(t *testing.T) {
	ce := newContainerEnv(t)
	spec := patchedRepoServer(t, "kustomize-exec/repo-server-patch.yaml")
	install := container(spec.InitContainers, "install-minicluster-fn")
	vol := t.TempDir()
	if err := os.Chmod(vol, 0o777); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--rm", "--network=none", "--read-only", "-v", vol + ":" + install.VolumeMounts[0].MountPath, ce.image}, install.Args...)
	if res := runEnv(t, nil, "", ce.env, "podman", args...); res.code != 0 {
		t.Fatalf("podman %q: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	res := run(t, nil, "", filepath.Join(vol, "minicluster-fn"), "version")
	if res.code != 0 || !strings.HasPrefix(string(res.stdout), "minicluster-fn ") {
		t.Errorf("the installed binary does not run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestArgoCDReadmeSaysWhatToChange: the README's commands name files relative to examples/argocd
// that exist, and it tells the user what they must change before applying: the image of each
// repo-server patch, and each Application's repoURL and path (with what path is relative to).
func TestArgoCDReadmeSaysWhatToChange(t *testing.T) {
	readme := string(argoExample(t, "README.md"))
	if !strings.Contains(readme, "run from this directory (`examples/argocd`)") {
		t.Error("README.md does not say which directory its commands run from")
	}
	for _, m := range regexp.MustCompile(`(?m)^kubectl .*?(?:--patch-file |--from-file=|-f )(\S+)`).FindAllStringSubmatch(readme, -1) {
		if _, err := os.Stat(filepath.Join(repoRoot(t), "examples", "argocd", filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("README.md command %q: %v", m[0], err)
		}
	}
	var want []string
	for _, rel := range []string{"kustomize-exec/repo-server-patch.yaml", "cmp/repo-server-patch.yaml"} {
		var d appsv1.Deployment
		decodeStrict(t, rel, argoExample(t, rel), &d)
		for _, c := range d.Spec.Template.Spec.InitContainers {
			want = append(want, "`"+c.Image+"`")
		}
	}
	for _, rel := range []string{"kustomize-exec/application.yaml", "cmp/application.yaml"} {
		var app argoApplication
		decodeStrict(t, rel, argoExample(t, rel), &app)
		want = append(want, "`repoURL: "+app.Spec.Source.RepoURL+"`", "`"+app.Spec.Source.Path+"`", "`targetRevision: "+app.Spec.Source.TargetRevision+"`")
	}
	want = append(want, "relative to the top of that repository")
	for _, w := range want {
		if !strings.Contains(readme, w) {
			t.Errorf("README.md does not tell the user about %s", w)
		}
	}
}
