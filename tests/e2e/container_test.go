package e2e

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The container tests run the function from the project image (make image) the way users of
// kustomize and kpt container mode do, with podman and no Docker daemon, and check that it writes
// exactly what the exec binary writes. `make container-test` builds the image, sets
// MINICLUSTER_FN_IMAGE to the reference the binary writes into keygen Jobs, and CONTAINERS_CONF to
// the podman settings CI machines need.

// containerEnv is the environment in which kustomize and kpt run containers with podman.
type containerEnv struct {
	image string
	// env is the test's environment with a PATH on which `docker` is podman.
	env []string
}

// newContainerEnv skips the test unless podman and the image are there.
func newContainerEnv(t *testing.T) *containerEnv {
	t.Helper()
	image := os.Getenv("MINICLUSTER_FN_IMAGE")
	if image == "" {
		t.Skip("MINICLUSTER_FN_IMAGE is not set: run `make container-test`, which builds the image with podman and sets it")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman not found (Debian: apt-get install podman runc): container mode is not tested")
	}
	if out, err := exec.Command(podman, "image", "exists", image).CombinedOutput(); err != nil {
		t.Skipf("image %s is not in podman's local storage (%v %s): run `make image`", image, err, out)
	}

	// CONTAINERS_CONF (set by make container-test) passes on podman settings the machine needs.
	dir := t.TempDir()
	// kustomize runs containers with the docker CLI; podman takes the same arguments.
	shim := "#!/bin/sh\nexec " + podman + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	env = append(env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &containerEnv{image: image, env: env}
}

// execFunctionAnnotation is the exec form of config.kubernetes.io/function in an example.
var execFunctionAnnotation = regexp.MustCompile(`(?m)^(\s+)exec:\s*\n\s+path:\s*\S+\s*$`)

// TestContainerKustomize builds every example with the function as a container generator and
// compares the output with the exec generator's, byte for byte.
func TestContainerKustomize(t *testing.T) {
	ce := newContainerEnv(t)
	kustomizeBinary(t)
	execDir := copyExamples(t)
	containerDir := copyExamples(t)
	// The generators are the minicluster.yaml files of the kustomize examples (the overlay has none).
	for _, ex := range generatorExamples(t, containerDir) {
		f := filepath.Join(ex, "minicluster.yaml")
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		nb := execFunctionAnnotation.ReplaceAll(b, []byte("${1}container:\n${1}  image: "+ce.image))
		if bytes.Equal(b, nb) {
			t.Fatalf("%s: no exec function annotation to turn into a container one", f)
		}
		if err := os.WriteFile(f, nb, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	for _, ex := range generatorExamples(t, containerDir) {
		name := filepath.Base(ex)
		t.Run(name, func(t *testing.T) {
			want := kustomizeBuild(t, filepath.Join(execDir, name), execFlags...)
			if want.code != 0 {
				t.Fatalf("exec build exited %d\n%s", want.code, want.stderr)
			}
			// Container functions need --enable-alpha-plugins only.
			got := runEnv(t, nil, "", ce.env, kustomizeBinary(t), "build", "--enable-alpha-plugins", ex)
			if got.code != 0 {
				t.Fatalf("container build exited %d\n%s", got.code, got.stderr)
			}
			if len(got.stdout) == 0 || !bytes.Equal(got.stdout, want.stdout) {
				t.Errorf("container output differs from exec output: %s\n--- container ---\n%s", firstDiff(got.stdout, want.stdout), got.stdout)
			}
			if _, err := decodeManifests(got.stdout); err != nil {
				t.Errorf("container output does not decode: %v", err)
			}
		})
	}
}

// TestContainerKustomizeBadInput: the function's error reaches the user from inside the container
// too, and kustomize fails.
func TestContainerKustomizeBadInput(t *testing.T) {
	ce := newContainerEnv(t)
	kustomizeBinary(t)
	dir := t.TempDir()
	mc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: bad\n  annotations:\n" +
		"    config.kubernetes.io/function: |\n      container:\n        image: " + ce.image + "\n" +
		"spec:\n  size: 0\n  containers:\n  - image: ubuntu:noble\n"
	for name, text := range map[string]string{
		"minicluster.yaml":   mc,
		"kustomization.yaml": "generators:\n- minicluster.yaml\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runEnv(t, nil, "", ce.env, kustomizeBinary(t), "build", "--enable-alpha-plugins", dir)
	if res.code == 0 {
		t.Fatalf("kustomize build of an invalid MiniCluster succeeded:\n%s", res.stdout)
	}
	if !strings.Contains(string(res.stderr), "spec.size") {
		t.Errorf("stderr does not name spec.size:\n%s", res.stderr)
	}
}

// TestContainerKpt runs the image with `kpt fn eval --image` and in a Kptfile pipeline (`kpt fn
// render`) and compares the packages with those the exec binary writes.
func TestContainerKpt(t *testing.T) {
	ce := newContainerEnv(t)
	kptBinary(t)
	env := append(slices.Clone(ce.env), "KPT_FN_RUNTIME=podman")
	kptEnv := func(t *testing.T, dir string, args ...string) {
		t.Helper()
		res := runEnv(t, nil, dir, env, kptBinary(t), args...)
		if res.code != 0 {
			t.Fatalf("kpt %s: exit %d\n%s%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
		}
	}

	t.Run("fn eval", func(t *testing.T) {
		want := newKptPackage(t)
		kpt(t, want, 0, "fn", "eval", "--exec", "../../bin/minicluster-fn", "--fn-config", "minicluster.yaml", ".")
		got := newKptPackage(t)
		kptEnv(t, got, "fn", "eval", "--image", ce.image, "--image-pull-policy", "never", "--fn-config", "minicluster.yaml", ".")
		wantTree, gotTree := packageTree(t, want), packageTree(t, got)
		if len(gotTree) <= len(packageTree(t, newKptPackage(t))) {
			t.Fatalf("kpt fn eval --image wrote nothing: %v", slices.Sorted(maps.Keys(gotTree)))
		}
		if d := treeDiff(wantTree, gotTree); len(d) > 0 {
			t.Errorf("the image wrote another package than the exec binary: %v", d)
		}
	})

	t.Run("fn render", func(t *testing.T) {
		want := newKptPackage(t)
		kpt(t, want, 0, "fn", "render", "--allow-exec")
		got := newKptPackage(t)
		kptfile := filepath.Join(got, "Kptfile")
		b, err := os.ReadFile(kptfile)
		if err != nil {
			t.Fatal(err)
		}
		nb := regexp.MustCompile(`(?m)^(\s+)- exec: \S+$`).ReplaceAll(b, []byte("${1}- image: "+ce.image))
		if bytes.Equal(b, nb) {
			t.Fatal("no `- exec:` mutator in the Kptfile to turn into an image one")
		}
		if err := os.WriteFile(kptfile, nb, 0o644); err != nil {
			t.Fatal(err)
		}
		kptEnv(t, got, "fn", "render", "--image-pull-policy", "never")
		wantTree, gotTree := packageTree(t, want), packageTree(t, got)
		delete(wantTree, "Kptfile")
		delete(gotTree, "Kptfile")
		if d := treeDiff(wantTree, gotTree); len(d) > 0 {
			t.Errorf("the image rendered another package than the exec binary: %v", d)
		}
	})
}
