package operator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// operatorTarball is the operator's source at the commit the reference notes describe. The module
// proxy refuses the module, so it is vendored beside the project (never committed here).
const operatorTarball = "flux-operator-0d75cef8.tar.gz"

// repoRoot is the checkout this module lives in (tests/operator).
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// sharedDir is ../shared beside the checkout; tests that need it skip, with a message, without it.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "vendor", operatorTarball)); err != nil {
		t.Skipf("../shared/vendor/%s not found: the differential tests against the operator are skipped", operatorTarball)
	}
	return dir
}

var (
	oracleOnce sync.Once
	oracleBin  string
	oracleCRD  string
	oracleErr  error
)

// oracle returns the operator-oracle binary and the operator's CRD. The binary is built once per
// content of the tarball and of testdata/oracle, in a scratch copy under the build cache
// (${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/operator-oracle-<hash>), never in the checkout.
func oracle(t testing.TB) (bin, crd string) {
	t.Helper()
	shared := sharedDir(t)
	oracleOnce.Do(func() { oracleBin, oracleCRD, oracleErr = buildOracle(repoRoot(t), shared) })
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oracleBin, oracleCRD
}

func buildOracle(root, shared string) (string, string, error) {
	tarball := filepath.Join(shared, "vendor", operatorTarball)
	// The oracle's module files are kept under testdata with other names: as a go.mod in the
	// checkout, the module would name ./flux-operator, which exists only in the scratch copy, and no
	// go command could run on it there. The scratch copy gets their real names.
	moduleFiles := map[string]string{"go.mod.src": "go.mod", "go.sum.src": "go.sum", "main.go": "main.go"}
	sources := []string{tarball}
	for _, f := range []string{"go.mod.src", "go.sum.src", "main.go"} {
		sources = append(sources, filepath.Join(root, "tests", "operator", "testdata", "oracle", f))
	}
	h := sha256.New()
	// The go commands below are the toolchain that built this test (GOTOOLCHAIN, inherited): a new
	// one builds the oracle anew, and so compiles what the operator's manager shares with it.
	io.WriteString(h, runtime.Version())
	for _, f := range sources {
		fh, err := os.Open(f)
		if err != nil {
			return "", "", err
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", "", err
		}
	}
	cache := os.Getenv("MINICLUSTER_FN_CACHE")
	if cache == "" {
		cache = "/var/cache/minicluster-fn"
	}
	dir := filepath.Join(cache, "operator-oracle-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin := filepath.Join(dir, "operator-oracle")
	crd := filepath.Join(dir, "flux-operator", "config", "crd", "bases", "flux-framework.org_miniclusters.yaml")
	if _, err := os.Stat(bin); err == nil {
		recordBuild("the operator oracle", 0, "cached")
		return bin, crd, nil
	}
	start := time.Now()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", "", err
	}
	scratch, err := os.MkdirTemp(cache, "operator-oracle-build-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(scratch)
	for _, f := range sources[1:] {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(scratch, moduleFiles[filepath.Base(f)]), data, 0o644); err != nil {
			return "", "", err
		}
	}
	src := filepath.Join(scratch, "flux-operator")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", "", err
	}
	steps := [][]string{
		{"tar", "-xzf", tarball, "-C", src, "--strip-components=1"},
		// The module is tidy only here, with the operator's source in place.
		{"go", "mod", "tidy", "-diff"},
		// The operator's stub keygen stays: certificates are compared by shape (no CZMQ). The flags
		// are tests/cluster/build-operator.sh's (cgo on, -trimpath), so that the live tests' build of
		// the operator's manager takes the packages both import from the Go build cache.
		{"go", "build", "-trimpath", "-o", "operator-oracle", "."},
	}
	// The CPU time of the steps' processes, their children's (the compilers') included, for the
	// phase report.
	var cpu time.Duration
	for _, step := range steps {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = scratch
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=", "CGO_CPPFLAGS=", "CGO_CXXFLAGS=", "CGO_LDFLAGS=",
			"GOFLAGS=-buildvcs=false -mod=readonly")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", "", fmt.Errorf("building the operator oracle: %s: %v\n%s", strings.Join(step, " "), err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err := os.Rename(scratch, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(bin); statErr != nil {
			return "", "", err
		}
	}
	recordBuild("the operator oracle", time.Since(start), fmt.Sprintf("built, %.0f CPU-s", cpu.Seconds()))
	return bin, crd, nil
}

// operatorResult is what the operator made of one MiniCluster: the objects its reconciler created,
// and the fields the API server's pruning dropped.
type operatorResult struct {
	objects []object
	pruned  []string
	stderr  string
}

// recordBuild adds the oracle's build to the phase report of the make test that runs this test
// (tests/phases: MINICLUSTER_FN_PHASES names its records, one line per build); outside one it does
// nothing.
func recordBuild(what string, took time.Duration, how string) {
	path := os.Getenv("MINICLUSTER_FN_PHASES")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "operator: the phase report's records: %v\n", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "build\t%s\t%.1f\t%s\n", what, took.Seconds(), how)
}

func runOracle(t testing.TB, input string) operatorResult {
	t.Helper()
	bin, crd := oracle(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-crd", crd, input)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("operator oracle on %s: %v\n%s", input, err, stderr.String())
	}
	objs, err := parseStream(stdout.Bytes())
	if err != nil {
		t.Fatalf("operator oracle output for %s: %v", input, err)
	}
	var res operatorResult
	for _, o := range objs {
		if o.kind() == "MiniCluster" {
			continue
		}
		res.objects = append(res.objects, o)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if p, ok := strings.CutPrefix(line, "pruned: "); ok {
			res.pruned = append(res.pruned, p)
		}
	}
	res.stderr = stderr.String()
	return res
}

var (
	fnOnce sync.Once
	fnBin  string
	fnErr  error
)

// ourBinary is $MINICLUSTER_FN (make passes the one it built) or a build of ./cmd/minicluster-fn.
func ourBinary(t testing.TB) string {
	t.Helper()
	fnOnce.Do(func() {
		if fnBin = os.Getenv("MINICLUSTER_FN"); fnBin != "" {
			return
		}
		dir, err := os.MkdirTemp("", "minicluster-fn-operator-test-")
		if err != nil {
			fnErr = err
			return
		}
		fnBin = filepath.Join(dir, "minicluster-fn")
		cmd := exec.Command("go", "build", "-o", fnBin, "./cmd/minicluster-fn")
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			fnErr = fmt.Errorf("go build ./cmd/minicluster-fn: %v\n%s", err, out)
		}
	})
	if fnErr != nil {
		t.Fatal(fnErr)
	}
	return fnBin
}

// ourResult is our render of one file: objects, or the refusal (exit code and stderr).
type ourResult struct {
	objects []object
	code    int
	stderr  string
}

func runOurs(t testing.TB, input string) ourResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ourBinary(t), "render", input)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := ourResult{stderr: stderr.String()}
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		res.code = exitErr.ExitCode()
		return res
	}
	objs, err := parseStream(stdout.Bytes())
	if err != nil {
		t.Fatalf("our output for %s: %v", input, err)
	}
	res.objects = objs
	return res
}
