package live

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pushedDigest is the digest in flux push artifact's "✔ artifact successfully pushed to
// <registry>/<repository>@sha256:..." line.
var pushedDigest = regexp.MustCompile(`successfully pushed to \S+@(sha256:[0-9a-f]{64})`)

// startRegistry builds and starts tests/cluster/ociregistry, an OCI registry on a free loopback
// port, and returns its address; the test's cleanup stops it by PID.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ociregistry")
	build := exec.Command("go", "build", "-o", bin, "./ociregistry")
	build.Dir = suite.clusterDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tests/cluster/ociregistry: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	// Its stderr is the test binary's, a pipe that go test reads to the end: a registry outliving
	// a test binary that died (a -timeout panic, a kill) would keep go test, and with-cluster.sh's
	// teardown after it, waiting. The kernel stops it with its parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("ociregistry: %v", err)
		}
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("ociregistry printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// fluxcdCLI is the directory of the flux CLI that tests/cluster/build-fluxcd.sh built with the
// controllers (cached).
func fluxcdCLI(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(suite.clusterDir, "build-fluxcd.sh")).Output()
	if err != nil {
		t.Fatalf("tests/cluster/build-fluxcd.sh: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "bin")
}

// TestFluxCDLiveOCI is the README's Flux CD flow with an OCI artifact: render.sh -p pushes the
// rendered directory to a registry on loopback with the flux CLI, the Flux CD objects (an
// OCIRepository and the Kustomizations) are applied from Git as in TestFluxCDLiveGit, and Flux CD
// applies the MiniClusters from the artifact; then an edit is pushed the same way.
func TestFluxCDLiveOCI(t *testing.T) {
	t.Parallel()
	repo, _ := newFluxCDTest(t, "fluxcd-oci")
	system, target := repo.system, repo.target
	registry := startRegistry(t)
	artifact := "oci://" + registry + "/hpc"
	path := fluxcdCLI(t) + string(os.PathListSeparator) + os.Getenv("PATH")

	const hello = "hello-oci"
	helloFile, ks := "hpc/"+hello+".yaml", "miniclusters-"+hello
	// The CI step: commit the MiniClusters, render and push the artifact tagged with that commit
	// and latest, then commit the Flux CD objects.
	// It returns the revision Flux CD gives the artifact: latest@<the digest flux push printed>.
	push := func(message string) string {
		t.Helper()
		gitCmd(t, repo.dir, "add", "--all")
		gitCmd(t, repo.dir, "commit", "--quiet", "-m", message)
		out, err := repo.renderWith(t, []string{"-p", artifact}, []string{"PATH=" + path},
			"--source-kind", "OCIRepository", "--url", artifact, "--tag", "latest")
		if err != nil {
			t.Fatalf("render.sh -p: %v\n%s", err, out)
		}
		t.Logf("render.sh -p %s:\n%s", artifact, out)
		gitCmd(t, repo.dir, "add", "--all")
		gitCmd(t, repo.dir, "commit", "--quiet", "--allow-empty", "-m", "Render: "+message)
		gitCmd(t, repo.dir, "push", "--quiet", "origin", "main")
		m := pushedDigest.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("render.sh -p printed no pushed digest:\n%s", out)
		}
		return "latest@" + m[1]
	}

	repo.write(t, helloFile, helloMiniCluster(hello, "echo from-an-oci-artifact"))
	rev := push("A MiniCluster")
	if objects := repo.read(t, repo.fluxcdObjectsRel); !strings.Contains(objects, "kind: OCIRepository") || !strings.Contains(objects, "path: ./"+hello) {
		t.Fatalf("render.sh -f did not write an OCIRepository and a Kustomization of ./%s:\n%s", hello, objects)
	}
	start := time.Now()
	repo.bootstrap(t)
	kustomizationReady(t, system, ks, rev, fluxcdStepLimit)
	j := brokerJob(t, target, hello)
	if log := jobRank0Log(t, target, j.Metadata.Name); !strings.Contains(log, "from-an-oci-artifact") {
		t.Errorf("rank 0 did not print the command's output:\n%s", log)
	}
	t.Logf("from the bootstrap apply: %s Ready on %s (keygen and broker Jobs complete) after %.1fs", ks, rev, time.Since(start).Seconds())

	repo.replace(t, helloFile, "from-an-oci-artifact", "from-the-next-artifact")
	next := push("Edit the command")
	took := kustomizationReady(t, system, ks, next, fluxcdStepLimit)
	gone(t, target, "jobs", j.Metadata.Name, time.Minute)
	j = brokerJob(t, target, hello)
	if log := jobRank0Log(t, target, j.Metadata.Name); !strings.Contains(log, "from-the-next-artifact") {
		t.Errorf("the edited command's output is not on rank 0:\n%s", log)
	}
	t.Logf("the edit pushed as an artifact: %s Ready on %s %.1fs after the push, the old Job pruned", ks, next, took.Seconds())
}
