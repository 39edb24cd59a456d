// Package integration checks the manifests minicluster-fn renders, and its in-cluster keygen,
// against a real kube-apiserver (k8s.io/kubernetes v1.37.1, in-process, with an embedded etcd).
//
// It is its own Go module so that k8s.io/kubernetes and its replace lines stay out of the main
// module. Every module it compiles that another Go build compiles too is at one version in both,
// and make integration builds with their flags (the root module's: CGO_ENABLED=0, -trimpath), so
// that this test reuses the Kubernetes packages the root module's tests compiled, and the live
// cluster's binaries, Flux CD and Argo CD reuse the ones this test compiled (.ci/hygiene.sh
// checks the versions). It drives the
// built binary (MINICLUSTER_FN; `make integration` builds and sets it), as users and the keygen Job
// do, and never imports the main module.
package integration

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// apiserverLog receives the API server's and etcd's log lines, which would drown the test output.
var apiserverLog string

func TestMain(m *testing.M) {
	flag.Parse()
	if err := rootTrimmedSources(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logFile, err := os.CreateTemp("", "minicluster-fn-integration-*.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	apiserverLog = logFile.Name()
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := klogFlags.Set(k, v); err != nil {
			panic(err)
		}
	}
	klog.SetOutput(logFile)

	code := m.Run()
	klog.Flush()
	logFile.Close()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "API server log: %s\n", apiserverLog)
	} else {
		os.Remove(apiserverLog)
	}
	os.Exit(code)
}

// rootTrimmedSources lets the in-process API server of a -trimpath build find its certificate
// fixtures. k8s.io/kubernetes/cmd/kube-apiserver/app/testing looks for them beside its own source
// file, whose path a trimmed build records as <module>@<version>/<dir>, relative; for such a path
// it reads Bazel's TEST_SRCDIR and TEST_WORKSPACE and looks in TEST_SRCDIR/TEST_WORKSPACE/<path>:
// with the module cache and ".", that is the package's directory in the module cache. An untrimmed
// build records absolute paths and needs nothing.
func rootTrimmedSources() error {
	_, file, _, ok := runtime.Caller(0)
	if !ok || filepath.IsAbs(file) {
		return nil
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return fmt.Errorf("go env GOMODCACHE (for the API server's certificate fixtures in a -trimpath build): %v", err)
	}
	if err := os.Setenv("TEST_SRCDIR", strings.TrimSpace(string(out))); err != nil {
		return err
	}
	return os.Setenv("TEST_WORKSPACE", ".")
}

// repoRoot is the main module's directory: two levels up from this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "minicluster-fn")); err != nil {
		t.Fatalf("%s is not the minicluster-fn repository: %v", dir, err)
	}
	return dir
}

// fnBinary is the minicluster-fn binary under test: MINICLUSTER_FN, else <repo>/bin/minicluster-fn.
func fnBinary(t testing.TB) string {
	t.Helper()
	p := os.Getenv("MINICLUSTER_FN")
	if p == "" {
		p = filepath.Join(repoRoot(t), "bin", "minicluster-fn")
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Skipf("minicluster-fn not found at %s (set MINICLUSTER_FN): run `make integration`, which builds it", p)
	}
	return p
}
