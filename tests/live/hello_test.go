package live

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHelloWorld applies examples/hello-world (size 4) through both consumer paths and checks what
// a user expects: the keygen Job publishes the certificate, 4 brokers run, rank 0 prints the
// command's output, every pod exits 0 and the Job completes. The kustomize path also checks that
// nothing of the project ran in the cluster (checkNoProjectImage).
func TestHelloWorld(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	t.Run("kustomize", func(t *testing.T) {
		ns := namespace(t, "hello-kustomize")
		dir := filepath.Join(suite.repo, "examples", "hello-world")
		manifests := renderKustomize(t, ns, dir)
		checkHelloWorld(t, ns, "flux-sample", manifests)
		checkNoProjectImage(t, ns, kustomizeBuild(t, dir))
	})
	t.Run("kpt", func(t *testing.T) {
		ns := namespace(t, "hello-kpt")
		checkHelloWorld(t, ns, "flux-kpt", renderKpt(t, ns))
	})
}

// renderKpt runs `kpt fn render` on a copy of examples/kpt (hello-world as a kpt package), then
// applies the package as rendered: a kustomization over its files swaps the images.
func renderKpt(t *testing.T, ns string) []byte {
	t.Helper()
	// The Kptfile runs ../../bin/minicluster-fn relative to where kpt starts: keep that shape.
	root := t.TempDir()
	pkg := filepath.Join(root, "examples", "kpt")
	if err := os.CopyFS(pkg, os.DirFS(filepath.Join(suite.repo, "examples", "kpt"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(suite.repo, "bin"), filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	if out, err := run(pkg, suite.kpt, "fn", "render", "--allow-exec"); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
	// What the package holds for the cluster: every file but the local config (Kptfile, the
	// MiniCluster).
	var files []string
	var rendered []byte
	err := filepath.WalkDir(pkg, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "config.kubernetes.io/local-config: \"true\"") {
			return nil
		}
		rel, _ := filepath.Rel(pkg, p)
		files = append(files, rel)
		rendered = append(append(rendered, b...), "\n---\n"...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The generated objects are <kind>_<name>.yaml next to the MiniCluster.
	if !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "job_flux-kpt-") }) {
		t.Fatalf("kpt fn render wrote no job_flux-kpt-*.yaml; package files: %v", files)
	}
	overlayIn(t, pkg, ns, rendered, files...)
	out := kustomizeBuild(t, pkg)
	checkNoRemoteImages(t, out)
	return out
}

func checkHelloWorld(t *testing.T, ns, instance string, manifests []byte) {
	t.Helper()
	start := time.Now()
	watch := watchBrokers(ns, instance, 4, start)
	defer watch.finish()
	apply(t, manifests)
	certificate(t, ns, instance)
	tCert := time.Since(start)
	j := brokerJob(t, ns, instance)
	jobComplete(t, ns, j.Metadata.Name, completeLimit)
	tComplete := time.Since(start)
	running, ready, seenReady := watch.finish()
	j = brokerJob(t, ns, instance)
	if j.Status.Succeeded != 4 {
		t.Errorf("Job %s: %d succeeded, want 4", j.Metadata.Name, j.Status.Succeeded)
	}
	checkAllExitedZero(t, ns, j.Metadata.Name, 4)
	log := brokerLog(t, ns, rankPod(t, ns, instance, "0"))
	if !strings.Contains(log, "hello world") {
		t.Errorf("rank 0's log does not show the command's output %q:\n%s", "hello world", log)
	}
	t.Logf("from apply: certificate %.1fs, 4 brokers running %s, %d of 4 seen Ready (joined) by %s, Job complete %.1fs; rank 0 log:\n%s",
		tCert.Seconds(), seconds(running), seenReady, seconds(ready), tComplete.Seconds(), log)
}

// checkNoProjectImage: a MiniCluster got its certificate, joined and completed without the
// project's image. The output as a user renders it (rendered, before the stand-ins replace the
// images) names no image of the project, no pod of the namespace ran one, and the keygen pod ran
// the Flux view image (its stand-in).
func checkNoProjectImage(t *testing.T, ns string, rendered []byte) {
	t.Helper()
	project := imageName(suite.images.project)
	if strings.Contains(string(rendered), project) {
		t.Errorf("the rendered output names the project image %s", project)
	}
	pods := mustKube(t, nil, "-n", ns, "get", "pods", "-o",
		`jsonpath={range .items[*]}{.metadata.name}{": "}{.spec.initContainers[*].image}{" "}{.spec.containers[*].image}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(pods), "\n") {
		if strings.Contains(line, project) {
			t.Errorf("pod %s ran the project image", line)
		}
	}
	keygen := strings.Fields(mustKube(t, nil, "-n", ns, "get", "pods", "-l", labelComponent+"=keygen",
		"-o", "jsonpath={.items[*].spec.containers[*].image}"))
	if len(keygen) == 0 || slices.ContainsFunc(keygen, func(image string) bool { return image != suite.images.view }) {
		t.Errorf("keygen pods ran %q, want the view image %s", keygen, suite.images.view)
	}
}

// TestHelloRanks runs hello-world with a command that shows the instance from rank 0: all 4 brokers
// joined (flux resource list, flux overlay status) and a job on 4 nodes runs on every pod. Both
// ways of giving the brokers the flux view: copied by the init containers (the default), and
// mounted from an image volume of the view image (minicluster-fn.dev/view-source: ImageVolume,
// which the node's containerd 2 mounts).
func TestHelloRanks(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "hello-ranks"
	t.Run("copy", func(t *testing.T) {
		checkHelloRanks(t, instance, namespace(t, "hello-ranks"), fnDir(t, instance), 4)
	})
	t.Run("image volume", func(t *testing.T) {
		dir := fnDir(t, instance)
		setImageVolume(t, dir)
		// Strict: the broker script stops at the first failing command, such as a write to the
		// view, which is read-only here.
		setCommand(t, dir, "    quiet: true\n", "    quiet: true\n    strict: true\n")
		ns := namespace(t, "hello-ranks-image")
		checkHelloRanks(t, instance, ns, dir, 4)
		// The brokers ran flux from the view image's volume: the view volume holds only a link
		// into it (TestEntrypointRunInitImageVolume), so they could not have run without it.
		j := brokerJob(t, ns, instance)
		refs := strings.TrimSpace(mustKube(t, nil, "get", "job", "-n", ns, j.Metadata.Name, "-o", "jsonpath={.spec.template.spec.volumes[?(@.image)].image.reference}"))
		if refs != suite.images.view {
			t.Errorf("the broker pods' image volumes are of %q, want one of the view image %s", refs, suite.images.view)
		}
	})
}

// checkHelloRanks applies the hello-ranks MiniCluster of dir (fnDir, size brokers; resizeHelloRanks)
// in ns and checks what rank 0 shows of the instance. It returns the broker Job.
func checkHelloRanks(t *testing.T, instance, ns, dir string, size int) job {
	t.Helper()
	apply(t, renderKustomize(t, ns, dir))
	certificate(t, ns, instance)
	j := brokerJob(t, ns, instance)
	jobComplete(t, ns, j.Metadata.Name, completeLimit)
	checkAllExitedZero(t, ns, j.Metadata.Name, size)

	log := brokerLog(t, ns, rankPod(t, ns, instance, "0"))
	t.Logf("rank 0 log:\n%s", log)
	run := fmt.Sprintf("== flux run -N%d -n%d hostname", size, size)
	resources, overlayStatus, hostnames := section(log, "== flux resource list", "== flux overlay status"),
		section(log, "== flux overlay status", run), section(log, run, "")

	// flux resource list: no node down, the node list covers the pods.
	nodelist := fmt.Sprintf("%s-[0-%d]", j.Metadata.Name, size-1)
	if !strings.Contains(resources, nodelist) {
		t.Errorf("flux resource list does not show %s:\n%s", nodelist, resources)
	}
	for _, line := range strings.Split(resources, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "down" && f[1] != "0" {
			t.Errorf("flux resource list shows nodes down: %s", line)
		}
	}
	// flux overlay status: one line per rank, "<rank> <host>: full" once that rank and all below it
	// are connected (seen on the cluster: "0 hello-ranks-<hash>-0: full", then "├─ 1 ...: full").
	if n := strings.Count(overlayStatus, ": full\n"); n != size {
		t.Errorf("flux overlay status on rank 0 shows %d of %d ranks full:\n%s", n, size, overlayStatus)
	}
	// flux run -N<size> -n<size> hostname: one line from each pod.
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(hostnames), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			got = append(got, line)
		}
	}
	slices.Sort(got)
	var want []string
	for i := range size {
		want = append(want, fmt.Sprintf("%s-%d", j.Metadata.Name, i))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("flux run -N%d -n%d hostname printed %q, want the %d pod hostnames %q", size, size, got, size, want)
	}
	return j
}

// resizeHelloRanks makes the hello-ranks MiniCluster of dir (fnDir) one of size brokers, its job on
// every one of them.
func resizeHelloRanks(t *testing.T, dir string, size int) {
	t.Helper()
	setCommand(t, dir, "  size: 4\n", fmt.Sprintf("  size: %d\n", size))
	for range 2 { // the section's title, and the command
		setCommand(t, dir, "flux run -N4 -n4 hostname", fmt.Sprintf("flux run -N%d -n%d hostname", size, size))
	}
}

// section is the text of log between the line start and the line end ("" = to the end).
func section(log, start, end string) string {
	_, after, ok := strings.Cut(log, start+"\n")
	if !ok {
		return ""
	}
	if end != "" {
		after, _, _ = strings.Cut(after, end+"\n")
	}
	return after
}
