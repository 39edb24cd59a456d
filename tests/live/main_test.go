// Package live runs generated MiniClusters with real Flux Framework brokers on a real single-node
// Kubernetes cluster (tests/cluster: etcd, kube-apiserver, controller-manager, scheduler, kubelet,
// containerd, kube-proxy, CoreDNS), through the paths users take: `kustomize build
// --enable-alpha-plugins --enable-exec | kubectl apply --server-side`, and `kpt fn render` followed
// by an apply. The examples' images are swapped for local stand-ins (tests/images) by a kustomize
// `images:` overlay; the examples and the rendered output are never edited.
//
// TestMain brings the cluster up once (or uses one that `make cluster-up` started, and leaves it
// running), loads the images, runs the tests and takes the cluster down again. Where the machine
// cannot run a kubelet, every test skips and says loudly which piece is missing; with
// MINICLUSTER_FN_LIVE_REQUIRE=1 (CI) that is a failure instead.
//
// Inputs from the environment (make live sets them): MINICLUSTER_FN, KUSTOMIZE, KPT (default
// <repo>/bin/...), MINICLUSTER_FN_CLUSTER_STATE (the cluster's state dir, see tests/cluster/env.sh),
// MINICLUSTER_FN_TEST_IMAGES (where tests/images/build.sh puts its archives).
package live

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const modulePath = "github.com/minicluster-fn/minicluster-fn"

// suite is what TestMain found and set up; the tests read it.
var suite struct {
	repo       string
	clusterDir string // tests/cluster
	state      string
	kubectl    string
	kubeconfig string
	kustomize  string
	kpt        string
	fn         string

	// cannotRun names what this machine lacks to run a kubelet (up.sh exit status 3).
	cannotRun string
	// setupErr is any other failure of the setup: every test fails with it.
	setupErr error
	// imagesErr: the stand-in images could not be built or loaded (Flux tests fail with it).
	imagesOnce sync.Once
	imagesErr  error
	images     standInImages
}

// standInImages are the local images the overlay swaps in.
type standInImages struct {
	app     string // for the application containers (ubuntu:noble and others)
	view    string // for the flux view init container (ghcr.io/converged-computing/flux-view-*)
	project string // the keygen image the binary names; loaded under its own name
	probe   string // tests/cluster/probe, for the cluster's own checks
	before  string // the keygen image of the code before (LIVE_BENCH_BEFORE); loaded under its own name
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	started, err := setUp()
	if err != nil {
		suite.setupErr = err
	}
	prebuilt := func() {}
	if err == nil && suite.cannotRun == "" && flag.Lookup("test.run").Value.String() == "" {
		prebuilt = prebuildComponents()
	}
	code := m.Run()
	prebuilt()
	// The components beside the cluster go first (they act on it), and when the suite started
	// them on a cluster it found running, they are all it stops.
	for _, c := range []*hostComponents{fluxcdControllers, argocdComponents, operatorManager, kueueManager} {
		if err := c.stopIfStarted(); err != nil {
			fmt.Fprintf(os.Stderr, "live: stopping the %s FAILED: %v\n", c.name, err)
			code = 1
		}
	}
	// On a cluster it found running, the suite leaves the nodes as it found them; down.sh takes the
	// nodes of a cluster it started with the rest.
	if !started {
		if err := removeAddedNodes(); err != nil {
			fmt.Fprintf(os.Stderr, "live: removing the nodes the tests added FAILED: %v\n", err)
			code = 1
		}
	}
	if started {
		start := time.Now()
		if err := runScript(filepath.Join(suite.clusterDir, "down.sh")); err != nil {
			fmt.Fprintf(os.Stderr, "live: TEARDOWN FAILED: %v\n", err)
			code = 1
		} else {
			fmt.Fprintf(os.Stderr, "live: cluster down in %.1fs\n", time.Since(start).Seconds())
		}
	}
	return code
}

// setUp finds the tools, brings the cluster up unless one is running, and loads the images. It
// reports whether it started the cluster (and so must stop it).
func setUp() (started bool, err error) {
	repo, err := findRepo()
	if err != nil {
		return false, err
	}
	suite.repo = repo
	suite.clusterDir = filepath.Join(repo, "tests", "cluster")
	bin := filepath.Join(repo, "bin")
	suite.fn = envOr("MINICLUSTER_FN", filepath.Join(bin, "minicluster-fn"))
	suite.kustomize = envOr("KUSTOMIZE", filepath.Join(bin, "kustomize"))
	suite.kpt = envOr("KPT", filepath.Join(bin, "kpt"))
	// The examples name the function ../../bin/minicluster-fn: it must be the one under test.
	if fi, err := os.Stat(filepath.Join(bin, "minicluster-fn")); err != nil || fi.IsDir() {
		return false, fmt.Errorf("%s/minicluster-fn is missing (make build): the examples run it", bin)
	}
	for _, tool := range []string{suite.fn, suite.kustomize, suite.kpt} {
		if _, err := os.Stat(tool); err != nil {
			return false, fmt.Errorf("tool missing: %v (make live builds it)", err)
		}
	}

	out, err := exec.Command("bash", "-c", `. "$1/env.sh" && echo "$STATE"`, "bash", suite.clusterDir).Output()
	if err != nil {
		return false, fmt.Errorf("reading tests/cluster/env.sh: %v", err)
	}
	suite.state = strings.TrimSpace(string(out))
	suite.kubeconfig = filepath.Join(suite.state, "kubeconfig")

	if !clusterRunning() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(suite.clusterDir, "up.sh"))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			suite.cannotRun = "tests/cluster/up.sh says this machine cannot run a kubelet (see its message above)"
			if os.Getenv("MINICLUSTER_FN_LIVE_REQUIRE") == "1" {
				banner("LIVE TESTS FAIL (MINICLUSTER_FN_LIVE_REQUIRE=1): " + suite.cannotRun)
			} else {
				banner("LIVE TESTS SKIPPED: " + suite.cannotRun)
			}
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("tests/cluster/up.sh failed (%v); its output above names the component", err)
		}
		started = true
		fmt.Fprintf(os.Stderr, "live: cluster up in %.1fs\n", time.Since(start).Seconds())
		recordPhase("cluster up (with any build of the node binaries)", time.Since(start), "")
	} else {
		fmt.Fprintf(os.Stderr, "live: using the running cluster of %s (left running)\n", suite.state)
	}
	nodeBin, err := os.ReadFile(filepath.Join(suite.state, "run", "node-bin"))
	if err != nil {
		return started, err
	}
	suite.kubectl = filepath.Join(strings.TrimSpace(string(nodeBin)), "kubectl")
	return started, loadProbe()
}

// loadProbe builds (cached) and imports the probe image the cluster's own checks use.
func loadProbe() error {
	probe, err := exec.Command(filepath.Join(suite.clusterDir, "image.sh"), "probe").Output()
	if err != nil {
		return fmt.Errorf("tests/cluster/image.sh probe: %v", err)
	}
	if err := runScript(filepath.Join(suite.clusterDir, "load-image.sh"), strings.TrimSpace(string(probe))); err != nil {
		return err
	}
	suite.images.probe = "localhost/minicluster-fn-live/probe:1"
	return nil
}

// clusterRunning: a cluster from the same state dir answers (started by make cluster-up).
func clusterRunning() bool {
	nodeBin, err := os.ReadFile(filepath.Join(suite.state, "run", "node-bin"))
	if err != nil {
		return false
	}
	kubectl := filepath.Join(strings.TrimSpace(string(nodeBin)), "kubectl")
	return exec.Command(kubectl, "--kubeconfig", suite.kubeconfig, "--request-timeout=5s", "get", "--raw", "/readyz").Run() == nil
}

// loadStandIns builds the stand-in images (tests/images/build.sh, cached; flux-core takes long the
// first time) and imports them into the cluster's containerd. The first test that needs them
// does it, so tests of the cluster alone (-run TestClusterServesPods) do not wait for it.
func loadStandIns() error {
	start := time.Now()
	var archives []string

	build := filepath.Join(suite.repo, "tests", "images", "build.sh")
	if _, err := os.Stat(build); err != nil {
		return fmt.Errorf("the stand-in images cannot be built: %v", err)
	}
	outDir := envOr("MINICLUSTER_FN_TEST_IMAGES", filepath.Join(suite.repo, "bin", "test-images"))
	if err := runScript(build, outDir); err != nil {
		return fmt.Errorf("tests/images/build.sh: %v", err)
	}
	list, err := os.Open(filepath.Join(outDir, "images.txt"))
	if err != nil {
		return err
	}
	defer list.Close()
	sc := bufio.NewScanner(list)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		archive, ref := fields[0], fields[1]
		if !filepath.IsAbs(archive) {
			archive = filepath.Join(outDir, archive)
		}
		archives = append(archives, archive)
		switch {
		case strings.Contains(ref, "flux-view"):
			suite.images.view = ref
		case strings.Contains(ref, "/app:"):
			suite.images.app = ref
		default:
			suite.images.project = ref
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if suite.images.app == "" || suite.images.view == "" || suite.images.project == "" {
		return fmt.Errorf("%s/images.txt lacks the app, flux-view or project image: %+v", outDir, suite.images)
	}
	if err := runScript(filepath.Join(suite.clusterDir, "load-image.sh"), archives...); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "live: images built and loaded in %.1fs: %+v\n", time.Since(start).Seconds(), suite.images)
	recordPhase("stand-in images built and loaded", time.Since(start), "")
	return nil
}

// requireCluster skips (loudly) where the machine cannot run a kubelet, and fails on any other
// setup problem.
func requireCluster(t testing.TB) {
	t.Helper()
	if suite.setupErr != nil {
		t.Fatalf("live test setup failed: %v", suite.setupErr)
	}
	if suite.cannotRun != "" {
		if os.Getenv("MINICLUSTER_FN_LIVE_REQUIRE") == "1" {
			t.Fatalf("MINICLUSTER_FN_LIVE_REQUIRE=1 but %s", suite.cannotRun)
		}
		t.Skipf("SKIPPED, NOT PASSED: %s", suite.cannotRun)
	}
}

// requireImages also needs the stand-in images (every test that runs Flux brokers).
func requireImages(t testing.TB) {
	t.Helper()
	requireCluster(t)
	suite.imagesOnce.Do(func() { suite.imagesErr = loadStandIns() })
	if suite.imagesErr != nil {
		t.Fatalf("stand-in images: %v", suite.imagesErr)
	}
}

// recordPhase adds a line on what the suite waited for to the phase report of the make test that
// runs it (tests/phases: MINICLUSTER_FN_PHASES names its records); outside one it does nothing.
func recordPhase(what string, took time.Duration, how string) {
	path := os.Getenv("MINICLUSTER_FN_PHASES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "live: the phase report's records: %v\n", err)
		return
	}
	defer f.Close()
	// One write of one short line: lines of processes appending side by side do not mix.
	if _, err := fmt.Fprintf(f, "live\t%s\t%.1f\t%s\n", what, took.Seconds(), how); err != nil {
		fmt.Fprintf(os.Stderr, "live: the phase report's records: %v\n", err)
	}
}

func runScript(script string, args ...string) error {
	cmd := exec.Command(script, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func banner(msg string) {
	line := strings.Repeat("!", len(msg)+4)
	fmt.Fprintf(os.Stderr, "\n%s\n! %s !\n%s\n\n", line, msg, line)
}

// exhaustive skips a test that only make test-all runs (MINICLUSTER_FN_LIVE_ALL=1): the operator
// side by side on the whole runnable corpus and with the view from an image volume, and the fault
// table. make test keeps a live proof of every row of the mission; these widen it (docs/testing.md).
func exhaustive(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("MINICLUSTER_FN_LIVE_ALL") != "1" {
		t.Skipf("SKIPPED, NOT RUN: %s is part of make test-all (MINICLUSTER_FN_LIVE_ALL=1), not make test", what)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module "+modulePath+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of " + modulePath + " not found above the test directory")
		}
		dir = parent
	}
}
