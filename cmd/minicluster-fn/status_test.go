package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/cluster/status/statustest"
)

// fixtureCluster serves cluster/status's fixture, a namespace of MiniClusters in every phase, to
// the commands in place of an API server, filtered by name as the label selector would.
type fixtureCluster struct {
	objs *status.Objects
	logs status.LogReader
	// reads counts Read calls.
	reads int
}

func (f *fixtureCluster) Read(_ context.Context, names []string) (*status.Objects, error) {
	f.reads++
	if len(names) == 0 {
		return f.objs, nil
	}
	var out status.Objects
	named := func(l map[string]string) bool { return slices.Contains(names, l[contract.LabelMiniCluster]) }
	for _, j := range f.objs.Jobs {
		if named(j.Labels) {
			out.Jobs = append(out.Jobs, j)
		}
	}
	for _, p := range f.objs.Pods {
		if named(p.Labels) {
			out.Pods = append(out.Pods, p)
		}
	}
	out.Events, out.PVCs = f.objs.Events, f.objs.PVCs
	return &out, nil
}

func (f *fixtureCluster) Logs(ctx context.Context, namespace, pod, container string, lines int64) (string, error) {
	return f.logs(ctx, namespace, pod, container, lines)
}

// useFixtureCluster makes the commands read the fixture, in namespace hpc, at a fixed time.
func useFixtureCluster(t *testing.T) *fixtureCluster {
	t.Helper()
	dir := filepath.Join("..", "..", "cluster", "status", "testdata")
	objs, err := statustest.Objects(filepath.Join(dir, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := statustest.Logs(filepath.Join(dir, "logs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixtureCluster{objs: objs, logs: logs}
	oldConnect, oldNow := connect, now
	t.Cleanup(func() { connect, now = oldConnect, oldNow })
	connect = func(c status.Connection) (clusterSource, string, error) {
		if c.AllNamespaces {
			return f, "", nil
		}
		return f, "hpc", nil
	}
	now = func() time.Time { return time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC) }
	return f
}

// TestStatusGolden: status's output in each format, for a namespace of MiniClusters in every
// phase (goldens under testdata/status; -update rewrites them).
func TestStatusGolden(t *testing.T) {
	useFixtureCluster(t)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"text.txt", nil},
		{"wide.txt", []string{"-o", "wide"}},
		{"all-namespaces.txt", []string{"-A"}},
		{"named.txt", []string{"persistent", "pullfail"}},
		{"brokers.txt", []string{"--brokers", "nodelost", "stuck"}},
		{"json.json", []string{"-o", "json"}},
		{"yaml.yaml", []string{"-o", "yaml"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := runCmd(t, "", append([]string{"status"}, tc.args...)...)
			if err != nil || errOut != "" {
				t.Fatalf("status %v: %v\n%s", tc.args, err, errOut)
			}
			golden(t, filepath.Join("testdata", "status", tc.golden), out)
		})
	}
}

// TestStatusNoneFound: as kubectl, an empty namespace is a line on stderr and exit 0.
func TestStatusNoneFound(t *testing.T) {
	useFixtureCluster(t)
	out, errOut, err := runCmd(t, "", "status", "nothing-of-that-name")
	if err != nil || out != "" || errOut != "No MiniClusters found in namespace hpc.\n" {
		t.Errorf("status of an absent MiniCluster: %v, stdout %q, stderr %q", err, out, errOut)
	}
}

func TestStatusBadOutput(t *testing.T) {
	useFixtureCluster(t)
	_, errOut, err := runCmd(t, "", "status", "-o", "table")
	if err == nil || !strings.Contains(errOut, `--output "table": want wide, json or yaml`) {
		t.Errorf("status -o table: %v, stderr %q", err, errOut)
	}
}

// TestStatusPrinterWatch: under --watch a MiniCluster is printed again only when it changed, under
// the header printed once.
func TestStatusPrinterWatch(t *testing.T) {
	var out strings.Builder
	p := &statusPrinter{out: &out}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = func() time.Time { return t0.Add(time.Minute) }
	t.Cleanup(func() { now = time.Now })
	a := status.MiniCluster{Name: "a", Phase: status.PhaseStarting, Size: 2, MaxSize: 2, Created: t0, Certificate: status.CertificatePresent}
	b := status.MiniCluster{Name: "b", Phase: status.PhaseReady, Joined: 1, Size: 1, MaxSize: 1, Created: t0}
	for _, rows := range [][]status.MiniCluster{{a, b}, {a, b}} {
		if err := p.print(rows); err != nil {
			t.Fatal(err)
		}
	}
	a.Joined, a.Phase = 2, status.PhaseRunning
	if err := p.print([]status.MiniCluster{a, b}); err != nil {
		t.Fatal(err)
	}
	want := "NAME   PHASE      BROKERS   LIFETIME   AGE   REASON\n" +
		"a      Starting   0/2       <none>     60s   \n" +
		"b      Ready      1/1       <none>     60s   \n" +
		"a   Running   2/2   <none>   60s   \n"
	if out.String() != want {
		t.Errorf("watch output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestKubectlPlugin: as kubectl-minicluster, the binary answers `kubectl minicluster status` and
// `wait` with the same output as minicluster-fn, and names itself as kubectl users type it.
func TestKubectlPlugin(t *testing.T) {
	useFixtureCluster(t)
	run := func(args ...string) (string, string, error) {
		cmd := newPluginCmd()
		var out, errOut strings.Builder
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := execute(cmd)
		return out.String(), errOut.String(), err
	}
	want, _, err := runCmd(t, "", "status", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if got, errOut, err := run("status", "-o", "wide"); err != nil || got != want {
		t.Errorf("kubectl minicluster status -o wide: %v\n%s\n%s", err, got, errOut)
	}
	if got, _, err := run("wait", "persistent", "--for=joined"); err != nil || got != "MiniCluster persistent joined (Ready, 2/2 (max 4) brokers)\n" {
		t.Errorf("kubectl minicluster wait: %v, %q", err, got)
	}
	if _, errOut, err := run("status", "--bogus"); err == nil || !strings.Contains(errOut, "Run 'kubectl minicluster status --help' for usage.") {
		t.Errorf("a usage error points at %q", errOut)
	}
}
