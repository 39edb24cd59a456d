package live

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The labels of the generated objects that say which MiniCluster and which part of it they are
// (api/contract; docs/generated-objects.md). This module uses the standard library only (go.mod).
const (
	labelMiniCluster = "minicluster-fn.dev/minicluster"
	labelComponent   = "minicluster-fn.dev/component"
)

// selector of a MiniCluster's objects of one component (broker, keygen, ...).
func selector(instance, component string) string {
	return labelMiniCluster + "=" + instance + "," + labelComponent + "=" + component
}

// run runs a tool with a bounded time in dir and returns its stdout.
func run(dir string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s (in %s): %v: %s", filepath.Base(name), strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// kustomizeBuild is the consumer path for kustomize users.
func kustomizeBuild(t testing.TB, dir string) []byte {
	t.Helper()
	out, err := run(dir, suite.kustomize, "build", "--enable-alpha-plugins", "--enable-exec", dir)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// imageLine matches the image fields of kustomize's (normalized) YAML output: containers' image,
// and the reference of image volumes (view-source ImageVolume), which kustomize's images: entries
// rewrite too.
var imageLine = regexp.MustCompile(`(?m)^\s*(?:- )?(?:image|reference): ["']?([^"'\s]+)["']?\s*$`)

// imageName is the reference without its tag or digest: what kustomize's images: entries match.
func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// standIn is the local image that replaces ref: the flux view stand-in for flux-view images, the
// project's images (current and, for the before/after benchmark, earlier) and localhost/ names
// stay (loaded under their own names, or meant to be missing), the application stand-in otherwise.
func standIn(ref string) string {
	switch {
	// Local names are the node's own (the stand-ins) or one a test chose not to exist.
	case ref == suite.images.project, ref == suite.images.before, strings.HasPrefix(ref, "localhost/"):
		return ""
	case strings.Contains(imageName(ref), "flux-view"):
		return suite.images.view
	default:
		return suite.images.app
	}
}

// overlay writes a kustomization into a new directory that takes resources (directories), puts
// everything into namespace ns and swaps every image of rendered (the resources' output) for its
// local stand-in. It returns the overlay's directory.
func overlay(t testing.TB, ns string, rendered []byte, resources ...string) string {
	t.Helper()
	dir := t.TempDir()
	overlayIn(t, dir, ns, rendered, resources...)
	return dir
}

// overlayIn writes that kustomization into dir; resources may then be files under dir.
func overlayIn(t testing.TB, dir, ns string, rendered []byte, resources ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
	fmt.Fprintf(&b, "namespace: %s\nresources:\n", ns)
	for _, r := range resources {
		// kustomize takes only relative paths to other kustomizations (as an overlay's ../base).
		if filepath.IsAbs(r) {
			rel, err := filepath.Rel(dir, r)
			if err != nil {
				t.Fatal(err)
			}
			r = rel
		}
		fmt.Fprintf(&b, "- %s\n", r)
	}
	var names []string
	for _, m := range imageLine.FindAllSubmatch(rendered, -1) {
		ref := string(m[1])
		if standIn(ref) != "" && !slices.Contains(names, imageName(ref)) {
			names = append(names, imageName(ref))
		}
	}
	if len(names) > 0 {
		b.WriteString("images:\n")
	}
	for _, name := range names {
		local := standIn(name)
		fmt.Fprintf(&b, "- name: %s\n  newName: %s\n  newTag: %q\n", name, imageName(local), strings.TrimPrefix(local, imageName(local)+":"))
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// renderKustomize renders a kustomization directory that runs minicluster-fn as a generator, with
// the images swapped and everything in ns, exactly as `kustomize build` of an overlay would.
func renderKustomize(t testing.TB, ns, dir string) []byte {
	t.Helper()
	base := kustomizeBuild(t, dir)
	out := kustomizeBuild(t, overlay(t, ns, base, dir))
	checkNoRemoteImages(t, out)
	return out
}

// checkNoRemoteImages: every image left must be one the cluster has (nothing can be pulled).
func checkNoRemoteImages(t testing.TB, manifests []byte) {
	t.Helper()
	for _, m := range imageLine.FindAllSubmatch(manifests, -1) {
		ref := string(m[1])
		if ref != suite.images.app && ref != suite.images.view && ref != suite.images.project && ref != suite.images.probe && ref != suite.images.before {
			t.Fatalf("the overlay left image %s, which the cluster does not have", ref)
		}
	}
}

// apply is `kubectl apply --server-side` of the manifests, as a user would pipe them.
func apply(t testing.TB, manifests []byte, extra ...string) string {
	t.Helper()
	return mustKube(t, manifests, append([]string{"apply", "--server-side", "-f", "-"}, extra...)...)
}

// fnDir copies a test MiniCluster (testdata/NAME) into a new directory with a kustomization that
// runs the function under test as its generator, and returns the directory.
func fnDir(t testing.TB, name string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "minicluster.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	kust := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- minicluster.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust), 0o644); err != nil {
		t.Fatal(err)
	}
	// The testdata names the function ./minicluster-fn, relative to the kustomization.
	if err := os.Symlink(suite.fn, filepath.Join(dir, "minicluster-fn")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setImageVolume sets the option minicluster-fn.dev/view-source: ImageVolume on the MiniCluster
// of dir (its minicluster.yaml has a metadata.annotations map), which the operator does not read.
func setImageVolume(t testing.TB, dir string) {
	t.Helper()
	setCommand(t, dir, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/view-source: ImageVolume\n")
}

// setCommand rewrites the command of a test MiniCluster copied by fnDir: the edit a user makes.
func setCommand(t testing.TB, dir, from, to string) {
	t.Helper()
	path := filepath.Join(dir, "minicluster.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(from)) {
		t.Fatalf("%s has no %q", path, from)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}
