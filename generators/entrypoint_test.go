package generators

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// update rewrites the golden files of this package's tests (go test ./generators -update).
var update = flag.Bool("update", false, "rewrite golden files")

const (
	testJobHash   = "abcd1234"
	testNamespace = "ns-never-in-output"
)

func int32p(v int32) *int32 { return &v }

// testMiniCluster is a MiniCluster as a user writes it (not defaulted yet).
func testMiniCluster(size int32, containers ...v1alpha2.MiniClusterContainer) *v1alpha2.MiniCluster {
	mc := &v1alpha2.MiniCluster{Spec: v1alpha2.MiniClusterSpec{Size: size, Containers: containers}}
	mc.APIVersion = v1alpha2.APIVersion
	mc.Kind = v1alpha2.Kind
	mc.Name = "flux-sample"
	mc.Namespace = testNamespace
	return mc
}

// testNames are the render-time names with a fixed hash.
func testNames(mc *v1alpha2.MiniCluster) names {
	return newNames(mc, v1alpha2.Options{JobNaming: v1alpha2.JobNamingHash}, testJobHash, testJobHash, testJobHash)
}

type entrypointCase struct {
	name string
	mc   func() *v1alpha2.MiniCluster
	keys []string // the ConfigMap keys expected
}

var defaultKeys = []string{BrokerConfigKey, InitScriptKey, ReadyScriptKey, WaitScriptKey(0)}

func entrypointCases() []entrypointCase {
	return []entrypointCase{
		{name: "hello-world", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "echo hello world"})
			mc.Spec.Logging.Quiet = true
			return mc
		}},
		{name: "interactive", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{Image: "ghcr.io/rse-ops/lammps:flux-sched-focal", WorkingDir: "/home/flux"})
			mc.Spec.Interactive = true
			mc.Spec.MaxSize = 10
			return mc
		}},
		{name: "batch", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{
				Image: "ubuntu:noble",
				Batch: true,
				Command: "echo hello world 1\necho \"hello world 2\"\n\necho 'hello $world 3'\n" +
					"MINICLUSTER_FN_EOF\n",
				Commands: v1alpha2.Commands{Post: "ls /tmp/fluxout -1\ncat /tmp/fluxout/job-0.out\n"},
			})
			mc.Spec.Logging.Quiet = true
			return mc
		}},
		{name: "batch-raw", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{
				Image: "ubuntu:noble", Batch: true, BatchRaw: true, Logs: "/data/logs",
				Command: "flux submit -N 2 hostname\nflux queue idle\n",
			})
			return mc
		}},
		{name: "launcher", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{
				Image: "ghcr.io/rse-ops/atacseq:app-latest", WorkingDir: "/workflow", Launcher: true,
				Command: "snakemake --cores 1 --flux --jobs 1",
			})
			mc.Spec.Logging.Quiet = true
			return mc
		}},
		{name: "sidecar", keys: []string{BrokerConfigKey, InitScriptKey, ReadyScriptKey, StartScriptKey(0), StartScriptKey(3), WaitScriptKey(1)}, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2,
				v1alpha2.MiniClusterContainer{
					Image: "ubuntu:noble", Name: "flux-queue",
					Command:  "sleep 10 && flux proxy ${fluxsocket} flux jobs -a",
					Commands: v1alpha2.Commands{ServicePre: "echo preparing the queue watcher", Init: "export QUEUE=1"},
				},
				v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", RunFlux: true, Command: "sleep 200"},
				v1alpha2.MiniClusterContainer{Image: "nginx", Name: "nginx", NoWrapEntrypoint: true, Ports: []int32{80}},
				v1alpha2.MiniClusterContainer{
					Image: "ubuntu:noble", Name: "scripted",
					Commands: v1alpha2.Commands{Script: "#!/bin/bash\necho \"socket is $fluxsocket\"\nflux proxy \"$fluxsocket\" flux resource list\n"},
				},
			)
			return mc
		}},
		{name: "bursting", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "flux resource list"})
			mc.Spec.MaxSize = 5
			mc.Spec.Flux.Bursting.Clusters = []v1alpha2.BurstedCluster{{Name: "burst-0", Size: 3}, {Name: "burst-1", Size: 1}}
			return mc
		}},
		{name: "leadbroker", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble"})
			mc.Spec.Interactive = true
			mc.Spec.Flux.Bursting.LeadBroker = &v1alpha2.FluxBroker{Address: "24.123.50.21", Name: "flux-sample", Size: 4, Port: 30093}
			return mc
		}},
		{name: "view-image-volume", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "echo hello world"})
			mc.Annotations = map[string]string{v1alpha2.ViewSourceAnnotation: string(v1alpha2.ViewSourceImageVolume)}
			return mc
		}},
		{name: "custom-config", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "echo hello world"})
			mc.Spec.Logging.Quiet = true
			mc.Spec.Flux.BrokerConfig = customBrokerConfig
			return mc
		}},
		{name: "disable-view", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{
				Image: "ghcr.io/rse-ops/lammps:flux-sched-focal", WorkingDir: "/home/flux/examples/reaxff/HNS",
				Command: "lmp -v x 2 -v y 2 -v z 2 -in in.reaxc.hns -nocite",
			})
			mc.Spec.Tasks = int32p(2)
			mc.Spec.Logging.Quiet = true
			mc.Spec.Flux.Container.Image = "ubuntu:focal"
			mc.Spec.Flux.Container.Disable = true
			return mc
		}},
		{name: "logging", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "echo hello world"})
			mc.Spec.Logging = v1alpha2.LoggingSpec{Strict: true, Timed: true, Debug: true, Zeromq: true}
			mc.Spec.Flux.LogLevel = int32p(7)
			return mc
		}},
		{name: "options", keys: defaultKeys, mc: func() *v1alpha2.MiniCluster {
			mc := testMiniCluster(4, v1alpha2.MiniClusterContainer{
				Image:   "ghcr.io/rse-ops/lammps:flux-sched-focal",
				Command: `python3 -c "import os; print('it\'s', os.environ['HOME'])" "$HOME" '$NOT_EXPANDED' # a comment`,
				Logs:    "/tmp/flux out",
				Commands: v1alpha2.Commands{
					Prefix:    "singularity exec --bind /data app.sif",
					Init:      "echo init one\necho init two",
					Pre:       "mkdir -p /tmp/app-data\nexport OMP_NUM_THREADS=2",
					BrokerPre: "echo only the main broker",
					WorkerPre: "echo only workers",
					Post:      "echo \"finished on $(hostname)\"",
				},
			})
			mc.Spec.MaxSize = 6
			mc.Spec.MinSize = 3
			mc.Spec.Tasks = int32p(8)
			mc.Spec.Archive.Path = "/state/archive.tar.gz"
			f := &mc.Spec.Flux
			f.Topology = "kary:2"
			f.ConnectTimeout = "10s"
			f.OptionFlags = "--exclusive -o cpu-affinity=per-task"
			f.SubmitCommand = "flux run"
			f.Wrap = "strace,-e,network"
			f.CompleteWorkers = true
			f.DisableSocket = true
			f.NoWaitSocket = true
			f.Scheduler = v1alpha2.FluxScheduler{Simple: true, QueuePolicy: "easy"}
			f.Container.PythonPath = "/mnt/flux/view/lib/python3.11/site-packages"
			f.Container.MountPath = "/opt/flux"
			f.Environment = map[string]string{"ZED": "last", "A_VAR": "it's $literal", "MIDDLE": "two words"}
			return mc
		}},
	}
}

const customBrokerConfig = `[access]
allow-guest-user = true
allow-root-owner = true

[resource]
path = "/mnt/flux/view/etc/flux/system/R"

[bootstrap]
curve_cert = "/mnt/flux/view/curve/curve.cert"
default_port = 8050
default_bind = "tcp://eth0:%p"
default_connect = "tcp://%h.flux-service.default.svc.cluster.local:%p"
hosts = [{host="flux-sample-0", bind="tcp://eth0:8050",connect="tcp://flux-sample-0.flux-service.default.svc.cluster.local:8050"},
         {host="flux-sample-[1-3]"}]
[archive]
dbpath = "/mnt/flux/view/var/lib/flux/job-archive.sqlite"
period = "1m"
busytimeout = "50s"
`

// defaulted defaults and validates the case's MiniCluster.
func defaulted(t *testing.T, mc *v1alpha2.MiniCluster) *v1alpha2.MiniCluster {
	t.Helper()
	mc.Default()
	if errs := mc.Validate(optionsOf(t, mc)); len(errs) > 0 {
		t.Fatalf("test MiniCluster is invalid: %v", errs.ToAggregate())
	}
	return mc
}

// optionsOf are the options of a valid MiniCluster.
func optionsOf(t *testing.T, mc *v1alpha2.MiniCluster) v1alpha2.Options {
	t.Helper()
	opts, errs := mc.ParseOptions()
	if len(errs) > 0 {
		t.Fatalf("options: %v", errs)
	}
	return opts
}

func renderCase(t *testing.T, c entrypointCase) (map[string]string, *v1alpha2.MiniCluster, names) {
	t.Helper()
	mc := defaulted(t, c.mc())
	n := testNames(mc)
	data, err := entrypointData(mc, optionsOf(t, mc), n)
	if err != nil {
		t.Fatalf("entrypointData: %v", err)
	}
	return data, mc, n
}

func sortedDataKeys(data map[string]string) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestEntrypointGolden(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			data, _, _ := renderCase(t, c)
			want := slices.Clone(c.keys)
			slices.Sort(want)
			if got := sortedDataKeys(data); !slices.Equal(got, want) {
				t.Fatalf("keys = %v, want %v", got, want)
			}
			dir := filepath.Join("testdata", "entrypoint", c.name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for k, v := range data {
					if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatalf("%v (run go test ./generators -run Entrypoint -update)", err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			if !slices.Equal(files, want) {
				t.Errorf("golden files %v, want %v (run with -update)", files, want)
			}
			for k, v := range data {
				golden, err := os.ReadFile(filepath.Join(dir, k))
				if err != nil {
					t.Errorf("%v (run with -update)", err)
					continue
				}
				if string(golden) != v {
					t.Errorf("%s differs from %s (run with -update and review the diff)", k, filepath.Join(dir, k))
				}
			}
		})
	}
}

func isScript(key string) bool { return strings.HasSuffix(key, ".sh") }

// bash -n and shellcheck of every script: TestOutputChecks (outputcheck_test.go).

func TestEntrypointDeterministic(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			first, _, _ := renderCase(t, c)
			for range 10 {
				again, _, _ := renderCase(t, c)
				if !mapsEqual(first, again) {
					t.Fatal("two renders of the same MiniCluster differ")
				}
			}
		})
	}
	t.Run("map insertion order", func(t *testing.T) {
		keys := []string{"A", "B_2", "C", "D", "E", "F", "G", "H"}
		var outs []map[string]string
		for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 1, 7, 2, 5, 4}} {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "hostname", Environment: map[string]string{}})
			mc.Spec.Flux.Environment = map[string]string{}
			for _, i := range order {
				mc.Spec.Flux.Environment[keys[i]] = "value-" + keys[i]
				mc.Spec.Containers[0].Environment[keys[i]] = "value-" + keys[i]
			}
			mc = defaulted(t, mc)
			data, err := entrypointData(mc, v1alpha2.Options{}, testNames(mc))
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, data)
		}
		for _, o := range outs[1:] {
			if !mapsEqual(outs[0], o) {
				t.Fatal("maps given in a different insertion order render differently")
			}
		}
		wait := outs[0][WaitScriptKey(0)]
		var last int
		for _, k := range keys {
			i := strings.Index(wait, "printf 'export %s=%q\\n' "+k+" ")
			if i < last {
				t.Fatalf("flux.environment not exported in sorted order (%s)", k)
			}
			last = i
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// substitute does what flux-init.sh does to the generated broker.toml.
func substitute(s, job, suffix string) string {
	return strings.NewReplacer(placeholderJobName, job, placeholderDNSSuffix, suffix).Replace(s)
}

func parseBrokerConfig(t *testing.T, s string) map[string]any {
	t.Helper()
	var cfg map[string]any
	if err := toml.Unmarshal([]byte(s), &cfg); err != nil {
		t.Fatalf("broker.toml does not parse as TOML: %v\n%s", err, s)
	}
	return cfg
}

type tomlHost struct{ Host, Bind, Connect string }

// expandHosts is the host names of bootstrap.hosts entries in rank order.
func expandHosts(t *testing.T, hosts []tomlHost) []string {
	t.Helper()
	var out []string
	for _, h := range hosts {
		names, err := outputcheck.ExpandHostlist(h.Host)
		if err != nil {
			t.Fatalf("host entry %q: %v", h.Host, err)
		}
		out = append(out, names...)
	}
	return out
}

func bootstrapHosts(t *testing.T, cfg map[string]any) []tomlHost {
	t.Helper()
	boot, _ := cfg["bootstrap"].(map[string]any)
	list, ok := boot["hosts"].([]any)
	if !ok {
		t.Fatalf("bootstrap.hosts is not an array: %#v", boot["hosts"])
	}
	var hosts []tomlHost
	for _, h := range list {
		m, _ := h.(map[string]any)
		var th tomlHost
		th.Host, _ = m["host"].(string)
		th.Bind, _ = m["bind"].(string)
		th.Connect, _ = m["connect"].(string)
		hosts = append(hosts, th)
	}
	return hosts
}

func TestEntrypointBrokerConfigTOML(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			data, mc, n := renderCase(t, c)
			raw := data[BrokerConfigKey]
			if mc.Spec.Flux.BrokerConfig != "" {
				if raw != mc.Spec.Flux.BrokerConfig {
					t.Fatal("flux.brokerConfig is not written verbatim")
				}
				parseBrokerConfig(t, raw)
				return
			}
			for _, p := range []string{placeholderJobName, placeholderDNSSuffix} {
				if !strings.Contains(raw, p) && !(p == placeholderJobName && mc.Spec.Flux.Bursting.LeadBroker != nil) {
					t.Errorf("broker.toml has no %s placeholder", p)
				}
			}
			// The template itself is valid TOML: placeholders only inside strings.
			parseBrokerConfig(t, raw)
			suffix := "svc-x.some-ns.svc.example.org"
			cfg := parseBrokerConfig(t, substitute(raw, n.Job, suffix))
			boot, ok := cfg["bootstrap"].(map[string]any)
			if !ok {
				t.Fatal("no [bootstrap] table")
			}
			mp := mc.Spec.Flux.Container.MountPath
			checks := map[string]any{
				"curve_cert":      mp + "/config/curve/curve.cert",
				"default_port":    int64(8050),
				"default_bind":    "tcp://eth0:%p",
				"default_connect": "tcp://%h." + suffix + ":%p",
			}
			for k, want := range checks {
				if got := boot[k]; got != want {
					t.Errorf("bootstrap.%s = %#v, want %#v", k, got, want)
				}
			}
			if len(bootstrapHosts(t, cfg)) == 0 {
				t.Error("bootstrap.hosts is empty")
			}
			if got := cfg["resource"].(map[string]any)["path"]; got != mp+"/config/etc/flux/system/R" {
				t.Errorf("resource.path = %v", got)
			}
			if got := cfg["sched-fluxion-qmanager"].(map[string]any)["queue-policy"]; got != mc.Spec.Flux.Scheduler.QueuePolicy {
				t.Errorf("queue-policy = %v", got)
			}
			// scheduler.simple: flux modprobe must choose sched-simple although Fluxion is installed.
			var alternatives any
			if modules, ok := cfg["modules"].(map[string]any); ok {
				alternatives = modules["alternatives"]
			}
			if mc.Spec.Flux.Scheduler.Simple {
				want := map[string]any{"sched": "sched-simple", "feasibility": "sched-simple"}
				if !reflect.DeepEqual(alternatives, want) {
					t.Errorf("scheduler.simple: modules.alternatives = %v, want %v", alternatives, want)
				}
			} else if alternatives != nil {
				t.Errorf("Fluxion is the scheduler, yet broker.toml sets modules.alternatives = %v", alternatives)
			}
		})
	}
}

// initHostlist is the hostlist flux-init.sh writes (its hosts=... line, unquoted).
func initHostlist(t *testing.T, init string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^hosts=(.*)$`).FindStringSubmatch(init)
	if m == nil {
		t.Fatal("flux-init.sh has no hosts= line")
	}
	out, err := exec.Command("/bin/bash", "-c", "printf %s "+m[1]).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestEntrypointHostlist(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int32{{1, 1}, {2, 2}, {4, 4}, {2, 5}, {3, 10}, {11, 11}, {1, 12}} {
		t.Run(fmt.Sprintf("size%d-max%d", sz[0], sz[1]), func(t *testing.T) {
			mc := testMiniCluster(sz[0], v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "hostname"})
			mc.Spec.MaxSize = sz[1]
			mc = defaulted(t, mc)
			n := testNames(mc)
			data, err := entrypointData(mc, v1alpha2.Options{}, n)
			if err != nil {
				t.Fatal(err)
			}
			var pods []string
			for i := range sz[1] {
				pods = append(pods, fmt.Sprintf("%s-%d", n.Job, i))
			}
			hosts := bootstrapHosts(t, parseBrokerConfig(t, substitute(data[BrokerConfigKey], n.Job, "x")))
			if got := expandHosts(t, hosts); !slices.Equal(got, pods) {
				t.Errorf("broker.toml hosts expand to %v, want the pod hostnames %v", got, pods)
			}
			list := substitute(initHostlist(t, data[InitScriptKey]), n.Job, "x")
			if got, err := outputcheck.ExpandHostlist(list); err != nil || !slices.Equal(got, pods) {
				t.Errorf("hostlist file %q expands to %v (%v), want the pod hostnames %v", list, got, err, pods)
			}
			// The main broker has an entry of its own, which names the address workers connect to.
			want := tomlHost{Host: n.Job + "-0", Connect: "tcp://" + n.Job + "-0.x:8050"} // substitute: the DNS domain "x"
			if hosts[0] != want || len(hosts) != min(2, int(sz[1])) {
				t.Errorf("hosts = %v, want %v first, then the rest in one entry", hosts, want)
			}
		})
	}
	t.Run("bursting clusters", func(t *testing.T) {
		data, _, n := renderCase(t, caseNamed(t, "bursting"))
		want := fmt.Sprintf("%s-[0-4],burst-0-[0-2],burst-1-0", placeholderJobName)
		if got := initHostlist(t, data[InitScriptKey]); got != want {
			t.Errorf("hostlist = %q, want %q", got, want)
		}
		hosts := bootstrapHosts(t, parseBrokerConfig(t, substitute(data[BrokerConfigKey], n.Job, "x")))
		wantHosts, err := outputcheck.ExpandHostlist(substitute(want, n.Job, ""))
		if err != nil {
			t.Fatal(err)
		}
		if got := expandHosts(t, hosts); len(hosts) != 2 || !slices.Equal(got, wantHosts) {
			t.Errorf("hosts = %v, want the entries of %s", hosts, want)
		}
	})
	t.Run("bursting hostlist verbatim", func(t *testing.T) {
		mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "hostname"})
		mc.Spec.Flux.Bursting.Hostlist = "flux-sample-[0-1],remote-[0-7]"
		mc = defaulted(t, mc)
		data, err := entrypointData(mc, v1alpha2.Options{}, testNames(mc))
		if err != nil {
			t.Fatal(err)
		}
		if got := initHostlist(t, data[InitScriptKey]); got != mc.Spec.Flux.Bursting.Hostlist {
			t.Errorf("hostlist = %q", got)
		}
		if hosts := bootstrapHosts(t, parseBrokerConfig(t, data[BrokerConfigKey])); len(hosts) != 1 || hosts[0].Host != mc.Spec.Flux.Bursting.Hostlist {
			t.Errorf("hosts = %v", hosts)
		}
	})
}

func caseNamed(t *testing.T, name string) entrypointCase {
	for _, c := range entrypointCases() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return entrypointCase{}
}

// Operator bug 5: the leadBroker host block printed %!s(int32=8050) and %!s(MISSING).
func TestEntrypointLeadBrokerBlock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		size     int32
		clusters []v1alpha2.BurstedCluster
		rest     string
	}{
		{name: "size4", size: 4, rest: "flux-sample-[1-3]"},
		{name: "size1", size: 1},
		{name: "size2-clusters", size: 2, clusters: []v1alpha2.BurstedCluster{{Name: "burst", Size: 2}}, rest: "flux-sample-1,burst-[0-1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := testMiniCluster(tc.size, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "hostname"})
			mc.Spec.Flux.Bursting.LeadBroker = &v1alpha2.FluxBroker{Address: "24.123.50.21", Name: "flux-sample", Size: tc.size, Port: 30093}
			mc.Spec.Flux.Bursting.Clusters = tc.clusters
			mc = defaulted(t, mc)
			data, err := entrypointData(mc, v1alpha2.Options{}, testNames(mc))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range data {
				if strings.Contains(v, "%!") || strings.Contains(v, "MISSING") {
					t.Errorf("%s has a fmt error verb: %s", k, v)
				}
			}
			hosts := bootstrapHosts(t, parseBrokerConfig(t, data[BrokerConfigKey]))
			want := []tomlHost{{Host: "24.123.50.21", Bind: "tcp://eth0:30093", Connect: "tcp://24.123.50.21:30093"}}
			if tc.rest != "" {
				want = append(want, tomlHost{Host: tc.rest})
			}
			if !slices.Equal(hosts, want) {
				t.Errorf("hosts = %+v, want %+v", hosts, want)
			}
			wantList := "24.123.50.21"
			if tc.rest != "" {
				wantList += "," + tc.rest
			}
			if got := initHostlist(t, data[InitScriptKey]); got != wantList {
				t.Errorf("hostlist file = %q, want %q", got, wantList)
			}
		})
	}
}

// Operator bug 6: /mnt/flux/config was hard-coded in the init script.
func TestEntrypointMountPathNotHardcoded(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			mc := c.mc()
			mc.Spec.Flux.Container.MountPath = "/opt/flux"
			mc.Spec.Flux.Container.PythonPath = ""
			mc = defaulted(t, mc)
			data, err := entrypointData(mc, v1alpha2.Options{}, testNames(mc))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range data {
				if k == BrokerConfigKey && mc.Spec.Flux.BrokerConfig != "" {
					continue // the user's own text
				}
				if strings.Contains(v, "/mnt/flux") {
					t.Errorf("%s mentions /mnt/flux although mountPath is /opt/flux", k)
				}
				if (strings.HasPrefix(k, "wait-") || strings.HasPrefix(k, "start-")) && !strings.Contains(v, "viewbase=/opt/flux\n") ||
					k == InitScriptKey && !strings.Contains(v, "cp -R \"${view}/.\" /opt/flux/view/\n") && !strings.Contains(v, "cp -R /opt/view/. /opt/flux/view/\n") {
					t.Errorf("%s does not use mountPath /opt/flux", k)
				}
			}
		})
	}
}

// Operator bug 7: broker.toml was appended to (>>), duplicating tables on a re-run.
func TestEntrypointOverwriteNotAppend(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			data, mc, _ := renderCase(t, c)
			for k, v := range data {
				if isScript(k) && strings.Contains(v, ">>") {
					t.Errorf("%s appends to a file (>>)", k)
				}
			}
			init, pod := data[InitScriptKey], newPodLayout(mc.Spec.Flux.Container.MountPath)
			if !strings.Contains(init, `printf '%s\n' "${brokerconfig}" > `+pod.BrokerConfig+"\n") &&
				!strings.Contains(init, `cp -f /flux_operator/broker.toml `+pod.BrokerConfig+"\n") {
				t.Error("flux-init.sh does not overwrite broker.toml")
			}
			if !strings.Contains(init, `printf '%s\n' "${hosts}" > `+pod.Hostlist+"\n") {
				t.Error("flux-init.sh does not overwrite the hostlist")
			}
		})
	}
	// Run for real: the second run leaves the same files.
	for _, name := range []string{"hello-world", "custom-config"} {
		t.Run("run twice/"+name, func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, name))
			sb.run(t, InitScriptKey, 1)
			first := sb.readConfig(t)
			sb.run(t, InitScriptKey, 1)
			if second := sb.readConfig(t); second != first {
				t.Errorf("a second init run changed the config:\n%s\n---\n%s", first, second)
			}
		})
	}
}

// Operator bug 12: the certificate (a secret key) was printed by the scripts.
func TestEntrypointCurveCertNotPrinted(t *testing.T) {
	t.Parallel()
	printing := regexp.MustCompile(`\b(cat|echo|printf|head|tail|less|more|xxd|od)\b[^\n]*(curve\.cert|curvepath|flux_operator_curve)`)
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			data, _, _ := renderCase(t, c)
			if _, ok := data[CurveCertKey]; ok {
				t.Error("the ConfigMap must not hold curve.cert")
			}
			for k, v := range data {
				if !isScript(k) {
					continue
				}
				if m := printing.FindString(v); m != "" {
					t.Errorf("%s prints the certificate: %s", k, m)
				}
			}
			var wait string
			for k, v := range data {
				if strings.HasPrefix(k, "wait-") {
					wait = v
				}
			}
			for _, want := range []string{
				`(umask 077 && cp ` + CurveMountPath + `/` + CurveCertKey + ` "${curvepath}")`,
				`chmod 0600 "${curvepath}"`,
			} {
				if !strings.Contains(wait, want) {
					t.Errorf("the broker script lacks %q", want)
				}
			}
		})
	}
}

// Nothing depends on the render-time namespace or Job name; the Service name is only the
// documented fallback of flux-init.sh.
func TestEntrypointNamespaceAgnostic(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			mc := c.mc()
			mc.Spec.Network.HeadlessName = "svc-only-fallback"
			mc = defaulted(t, mc)
			n := testNames(mc)
			data, err := entrypointData(mc, v1alpha2.Options{}, n)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range data {
				if k == BrokerConfigKey && mc.Spec.Flux.BrokerConfig != "" {
					continue // the user's own text
				}
				for _, bad := range []string{testNamespace, "cluster.local", n.Job, testJobHash, "svc.cluster"} {
					if strings.Contains(v, bad) {
						t.Errorf("%s contains %q", k, bad)
					}
				}
				lines := regexp.MustCompile(`(?m)^.*`+regexp.QuoteMeta(n.Service)+`.*$`).FindAllString(v, -1)
				switch {
				case k == InitScriptKey && mc.Spec.Flux.BrokerConfig == "":
					if len(lines) != 1 || strings.TrimSpace(lines[0]) != "dnssuffix="+n.Service {
						t.Errorf("the Service name appears in flux-init.sh other than as the fallback: %q", lines)
					}
				case len(lines) > 0:
					t.Errorf("%s contains the Service name: %q", k, lines)
				}
			}
		})
	}
}

func TestEntrypointShellQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "two words", "it's", `"double"`, "$HOME", "`id`", "a\nb", `back\slash`, "*", "~x", "%p:@=+,-./"} {
		out, err := exec.Command("/bin/bash", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("shellQuote(%q) = %s gives %q, %v", s, shellQuote(s), out, err)
		}
	}
	for _, s := range []string{"plain", `a"b\c`, "tab\there", "nl\nx", "\x01"} {
		var v map[string]string
		if err := toml.Unmarshal([]byte("k = "+tomlString(s)), &v); err != nil || v["k"] != s {
			t.Errorf("tomlString(%q) = %s parses to %q, %v", s, tomlString(s), v["k"], err)
		}
	}
}

// sandbox runs the generated scripts for real, with a fake flux: every absolute path they use
// is moved under a temporary directory.
type sandbox struct {
	dir   string
	mc    *v1alpha2.MiniCluster
	n     names
	data  map[string]string
	hosts string // content of the fake /etc/hosts
}

func newSandbox(t *testing.T, c entrypointCase) *sandbox {
	t.Helper()
	dir := t.TempDir()
	mc := c.mc()
	mc.Spec.Flux.Container.MountPath = filepath.Join(dir, "mnt")
	mc = defaulted(t, mc)
	n := testNames(mc)
	data, err := entrypointData(mc, optionsOf(t, mc), n)
	if err != nil {
		t.Fatal(err)
	}
	sb := &sandbox{dir: dir, mc: mc, n: n, data: data,
		hosts: "127.0.0.1\tlocalhost\n# Kubernetes-managed hosts file.\n10.0.0.7\t" + n.Job + "-1." + n.Service + ".team-a.svc.cluster.example\t" + n.Job + "-1\n"}
	for _, d := range []string{"cm", "curve", "view/bin", "views/._view/h4sh/bin", "software-copy/pkg", "home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range data {
		if k == InitScriptKey {
			// The broker script runs it from there when the pod has no init container
			// (initInBroker): with the sandbox's paths, as sb.run runs it.
			v = sb.script(k)
		}
		write(filepath.Join("cm", k), v, 0o644)
	}
	write("curve/curve.cert", "metadata\n    name = \"test\"\ncurve\n    public-key = \"x\"\n    secret-key = \"SECRET\"\n", 0o440)
	// The fake flux records its arguments one per line, between "--- flux" lines, and start and
	// broker write their FLUX_DISABLE_JOB_CLEANUP to FAKE_FLUX_LOG.cleanup-env.
	// python (not logged: the join watchdog runs it) answers from FAKE_FLUX_STATE: the
	// state-machine.wait one-liner exits 0 for run, 1 for none (no broker), 2 (not yet) otherwise,
	// and the state-machine.get one-liner prints it;
	// start and broker run, as flux's rc1 does, the rc1.d scripts of FLUX_RC_EXTRA when the
	// broker joins (FAKE_FLUX_STATE run, the default), then run FAKE_FLUX_RUN seconds (a start
	// after the first: FAKE_FLUX_RUN_AGAIN seconds, if set), or until SIGTERM, which they log (and,
	// with FAKE_FLUX_TERM_HANGS set, go on running, as a broker waiting for a goodbye); the first of them to end touches FAKE_FLUX_LEAD_RETURNS, if set
	// (the main broker's message, in flux exec, that it comes back); getattr tbon.parent-endpoint
	// (not logged) prints FAKE_FLUX_PARENT, after FAKE_FLUX_GETATTR_DELAY seconds.
	// With FAKE_FLUX_INITIAL set, start runs its initial program (what follows its options) and
	// exits with its status, as flux start does; submit ... --watch runs the command and exits
	// with its status; batch runs the batch script, keeps its status and prints a job ID, which
	// job status exits with; job wait exits with the next of the statuses in FAKE_FLUX_WAITS
	// (2, "no more waitable jobs", when none is left).
	write("views/._view/h4sh/bin/flux", `#!/bin/bash
if [[ "$1" == python ]]; then
  state="${FAKE_FLUX_STATE:-run}"
  if [[ "$*" == *state-machine.wait* ]]; then
    case "${state}" in run) exit 0 ;; none) exit 1 ;; *) exit 2 ;; esac
  fi
  if [[ "${state}" == none ]]; then echo "ConnectionRefusedError: [Errno 111] Connection refused" >&2; exit 1; fi
  echo "${state}"
  exit 0
fi
if [[ "$1" == getattr && "$2" == tbon.parent-endpoint ]]; then
  if [[ -n "${FAKE_FLUX_GETATTR_DELAY:-}" ]]; then read -r -t "${FAKE_FLUX_GETATTR_DELAY}" <> <(:) || :; fi
  echo "${FAKE_FLUX_PARENT:-}"
  exit 0
fi
{ echo "--- flux"; printf '%s\n' "$@"; } >> "$FAKE_FLUX_LOG"
if [[ -n "${FAKE_FLUX_INITIAL:-}" ]]; then
  case "$1 $2" in
    "start "*)
      shift
      while [[ "$1" == -o || "$1" == -S* || "$1" == --wrap=* || "$1" == --config ]]; do
        if [[ "$1" == --config ]]; then shift; fi
        shift
      done
      "$@"
      exit
      ;;
    "submit "*)
      if [[ " $* " == *" --watch "* ]]; then
        while [[ "$1" != --watch ]]; do shift; done
        shift
        "$@"
        exit
      fi
      ;;
    "batch "*)
      status=0
      /bin/bash "${@: -1}" > /dev/null || status=$?
      echo "${status}" > "${FAKE_FLUX_LOG}.batch-status"
      echo "fBatch1"
      exit 0
      ;;
    "job status") exit "$(< "${FAKE_FLUX_LOG}.batch-status")" ;;
    "job wait")
      read -r -a waits < "${FAKE_FLUX_WAITS}" || :
      if ((${#waits[@]} == 0)); then exit 2; fi
      echo "${waits[*]:1}" > "${FAKE_FLUX_WAITS}"
      exit "${waits[0]}"
      ;;
  esac
fi
if [[ "$1" == R ]]; then echo '{"version": 1}'; fi
if [[ "$1" == start || "$1" == broker ]]; then
  printf '%s' "${FLUX_DISABLE_JOB_CLEANUP-}" > "${FAKE_FLUX_LOG}.cleanup-env"
  if [[ "${FAKE_FLUX_STATE:-run}" == run ]]; then
    IFS=: read -r -a rcdirs <<< "${FLUX_RC_EXTRA:-}"
    for rcdir in "${rcdirs[@]}"; do
      for rcfile in "${rcdir}"/rc1.d/*; do
        if [[ -x "${rcfile}" ]]; then "${rcfile}"; fi
      done
    done
  fi
  if [[ -n "${FAKE_FLUX_RUN:-}" ]]; then
    run="${FAKE_FLUX_RUN}"
    if [[ -e "$FAKE_FLUX_LOG.ran" && -n "${FAKE_FLUX_RUN_AGAIN:-}" ]]; then
      run="${FAKE_FLUX_RUN_AGAIN}"
    fi
    touch "$FAKE_FLUX_LOG.ran"
    trap 'echo "SIGTERM $$" >> "$FAKE_FLUX_LOG.signals"; [[ -n "${FAKE_FLUX_TERM_HANGS:-}" ]] || exit "${FAKE_FLUX_EXIT:-0}"; termed=1' TERM
    /bin/sleep "${run}" &
    wait
    # The SIGTERM went to the process group, the sleep too: hang on until killed.
    while [[ -n "${termed:-}" ]]; do /bin/sleep 1; done
  fi
  if [[ -n "${FAKE_FLUX_LEAD_RETURNS:-}" && ! -e "$FAKE_FLUX_LOG.lead-returned" ]]; then
    touch "${FAKE_FLUX_LEAD_RETURNS}" "$FAKE_FLUX_LOG.lead-returned"
  fi
  exit "${FAKE_FLUX_EXIT:-0}"
fi
`, 0o755)
	write("software-copy/pkg/file", "x", 0o644) // /opt/software of the view image
	return sb
}

func (sb *sandbox) script(key string) string {
	d := sb.dir
	return strings.NewReplacer(
		d, d, // the sandbox itself (under /tmp) stays
		EntrypointMountPath+"/", d+"/cm/",
		CurveMountPath+"/", d+"/curve/",
		"/etc/hosts", d+"/hosts",
		terminationLogPath, d+"/termination-log",
		"/opt/views/", d+"/views/",
		"/opt/view", d+"/view",
		"/opt/software", d+"/software-copy",
		"/tmp/", d+"/tmp/",
		"/home/flux-operator", d+"/home",
	).Replace(sb.data[key])
}

func (sb *sandbox) run(t *testing.T, key string, index int, env ...string) (stdout, stderr string) {
	t.Helper()
	res := sb.runStatus(t, key, index, env...)
	if res.code != 0 {
		t.Fatalf("%s: exit status %d\nstdout:\n%s\nstderr:\n%s", key, res.code, res.stdout, res.stderr)
	}
	return res.stdout, res.stderr
}

// command is the generated script key, prepared to run as pod index (env: extra variables).
func (sb *sandbox) command(t *testing.T, key string, index int, env ...string) *exec.Cmd {
	t.Helper()
	if err := os.WriteFile(filepath.Join(sb.dir, "hosts"), []byte(sb.hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sb.dir, "run-"+key)
	if err := os.WriteFile(p, []byte(sb.script(key)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", p)
	cmd.Dir = filepath.Join(sb.dir, "tmp")
	cmd.Env = append([]string{
		"PATH=/usr/bin:/bin",
		"HOME=" + filepath.Join(sb.dir, "home"),
		fmt.Sprintf("HOSTNAME=%s-%d", sb.n.Job, index),
		fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index),
		"FAKE_FLUX_LOG=" + filepath.Join(sb.dir, "flux.log"),
	}, env...)
	return cmd
}

func (sb *sandbox) readConfig(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{"config/etc/flux/config/broker.toml", "config/etc/flux/system/hostlist"} {
		c, err := os.ReadFile(filepath.Join(sb.mc.Spec.Flux.Container.MountPath, f))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(c)
	}
	return b.String()
}

// brokerCleanupEnv is FLUX_DISABLE_JOB_CLEANUP in the environment of the last flux start or flux
// broker ("" when unset).
func (sb *sandbox) brokerCleanupEnv(t *testing.T) string {
	t.Helper()
	v, err := os.ReadFile(filepath.Join(sb.dir, "flux.log.cleanup-env"))
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// fluxCalls are the argument lists the fake flux was called with.
func (sb *sandbox) fluxCalls(t *testing.T) [][]string {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(sb.dir, "flux.log"))
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for _, c := range strings.Split(string(log), "--- flux\n")[1:] {
		calls = append(calls, strings.Split(strings.TrimSuffix(c, "\n"), "\n"))
	}
	return calls
}

func TestEntrypointRunInit(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "hello-world"))
	_, stderr := sb.run(t, InitScriptKey, 1)
	if stderr != "" {
		t.Errorf("unexpected stderr: %s", stderr)
	}
	mp := sb.mc.Spec.Flux.Container.MountPath
	brokerToml, err := os.ReadFile(filepath.Join(mp, "config/etc/flux/config/broker.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := parseBrokerConfig(t, string(brokerToml))
	boot := cfg["bootstrap"].(map[string]any)
	if want := "tcp://%h." + sb.n.Service + ".team-a.svc.cluster.example:%p"; boot["default_connect"] != want {
		t.Errorf("default_connect = %v, want %s (from /etc/hosts)", boot["default_connect"], want)
	}
	mainURI := "tcp://" + sb.n.Job + "-0." + sb.n.Service + ".team-a.svc.cluster.example:8050"
	if hosts := bootstrapHosts(t, cfg); len(hosts) != 2 || hosts[0] != (tomlHost{Host: sb.n.Job + "-0", Connect: mainURI}) || hosts[1].Host != sb.n.Job+"-[1-3]" {
		t.Errorf("hosts = %v, want %s-0 (connect %s) and %s-[1-3]", hosts, sb.n.Job, mainURI, sb.n.Job)
	}
	hostlist, _ := os.ReadFile(filepath.Join(mp, "config/etc/flux/system/hostlist"))
	if string(hostlist) != sb.n.Job+"-[0-3]\n" {
		t.Errorf("hostlist file = %q", hostlist)
	}
	for _, f := range []string{"view/bin/flux", "software/pkg/file", "flux-operator-done.txt", "config/run/flux", "config/etc/flux/system/cron.d", "config/var/lib/flux"} {
		if _, err := os.Stat(filepath.Join(mp, f)); err != nil {
			t.Errorf("init did not create %s: %v", f, err)
		}
	}

	t.Run("no /etc/hosts entry", func(t *testing.T) {
		sb.hosts = "127.0.0.1 localhost\n"
		_, stderr := sb.run(t, InitScriptKey, 2)
		if !strings.Contains(stderr, "warning:") {
			t.Errorf("no warning on stderr: %q", stderr)
		}
		c, _ := os.ReadFile(filepath.Join(mp, "config/etc/flux/config/broker.toml"))
		if boot := parseBrokerConfig(t, string(c))["bootstrap"].(map[string]any); boot["default_connect"] != "tcp://%h."+sb.n.Service+":%p" {
			t.Errorf("default_connect = %v, want the Service name fallback", boot["default_connect"])
		}
	})
}

// TestEntrypointRunInitImageVolume: with view-source ImageVolume, flux-init.sh copies nothing; it
// links the view in the view image's volume. The pod of a lone broker has no init container: its
// broker script runs flux-init.sh first, then flux through that link. A volume without a view, or
// without /opt/software, fails it, saying so.
func TestEntrypointRunInitImageVolume(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "view-image-volume"))
	if !initInBroker(sb.mc, optionsOf(t, sb.mc)) {
		t.Fatal("the case's pod has an init container; this test runs the broker script alone")
	}
	mp := sb.mc.Spec.Flux.Container.MountPath
	// The image volume as the kubelet mounts it: the view image at <mount path>/view-image. The
	// sandbox moves the image's /opt/views/ and /opt/software under the sandbox (sandbox.script),
	// so in the volume they are at view-image/<sandbox>/views and view-image/<sandbox>/software-copy.
	image := filepath.Join(mp, viewImageDir) + sb.dir
	for _, d := range []string{"views/._view", "software-copy"} {
		if err := os.MkdirAll(filepath.Join(image, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	view := filepath.Join(image, "views/._view/h4sh")
	if err := os.Symlink(filepath.Join(sb.dir, "views/._view/h4sh"), view); err != nil {
		t.Fatal(err)
	}
	sb.run(t, WaitScriptKey(0), 0)
	if link, err := os.Readlink(filepath.Join(mp, "view")); err != nil || link != view {
		t.Errorf("view links to %q (%v), want %s", link, err, view)
	}
	for _, f := range []string{"software", "config/run/flux", "config/etc/flux/config/broker.toml", "flux-operator-done.txt"} {
		_, err := os.Stat(filepath.Join(mp, f))
		if want := f != "software"; (err == nil) != want {
			t.Errorf("%s exists: %v, want %v (nothing is copied)", f, err == nil, want)
		}
	}
	if calls := sb.fluxCalls(t); len(calls) == 0 || calls[len(calls)-1][0] != "start" {
		t.Errorf("the broker script did not run flux start through the linked view: %v", calls)
	}

	for _, tc := range []struct{ name, remove, want string }{
		{"no /opt/software in the view image", filepath.Join(image, "software-copy"), "which the broker containers mount from its volume"},
		{"no view in the view image", view, "has no flux view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.RemoveAll(tc.remove); err != nil {
				t.Fatal(err)
			}
			res := sb.runStatus(t, WaitScriptKey(0), 2)
			if res.code == 0 || !strings.Contains(res.stderr, tc.want) || !strings.Contains(res.stderr, "failed (see above)") {
				t.Errorf("exit %d, stderr %q; want a failure saying it %s", res.code, res.stderr, tc.want)
			}
		})
	}
}

func TestEntrypointRunBroker(t *testing.T) {
	t.Parallel()
	// noCleanup: the main broker runs with FLUX_DISABLE_JOB_CLEANUP=t (its initial program waits
	// for every job, and nothing is archived), and its job without it (@NOCLEANUP@).
	for _, tc := range []struct {
		name      string
		index     int
		want      []string // the flux start call
		noCleanup bool
	}{
		{name: "hello-world", want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@", "@NOCLEANUP@", "flux", "submit", "-n1", "--quiet", "--watch", "echo", "hello", "world"}, noCleanup: true},
		{name: "hello-world", index: 3, want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@"}},
		{name: "interactive", want: []string{"broker", "--config-path", "@CFG@", "@OPTS@"}},
		{name: "launcher", want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@", "snakemake", "--cores", "1", "--flux", "--jobs", "1"}},
		{name: "batch", want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@", "@NOCLEANUP@", "sh", "-c", `id=$(flux batch "$@" ./flux-job.batch) || exit 255; flux job status -e 255 "${id}"`, "sh", "-n1"}, noCleanup: true},
		{name: "batch-raw", want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@", "@NOCLEANUP@", "sh", "-c", `id=$(flux batch "$@" ./flux-job.batch) || exit 255; flux job status -e 255 "${id}"`, "sh", "-n1"}, noCleanup: true},
		{name: "options", index: 1, want: []string{"start", "-o", "--config", "@CFG@", "@OPTS@"}},
		{name: "options", want: []string{"start", "--wrap=strace,-e,network", "-o", "--config", "@CFG@", "@OPTS@", "singularity", "exec", "--bind", "/data", "app.sif", "flux", "run", "-N", "4", "-n8", "--exclusive", "-o", "cpu-affinity=per-task", "--quiet", "--watch",
			"python3", "-c", `import os; print('it\'s', os.environ['HOME'])`, "@HOME@", "$NOT_EXPANDED"}},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.name, tc.index), func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, tc.name))
			sb.run(t, InitScriptKey, tc.index)
			key := WaitScriptKey(0)
			stdout, _ := sb.run(t, key, tc.index)
			mp := sb.mc.Spec.Flux.Container.MountPath
			calls := sb.fluxCalls(t)
			if len(calls) != 2 {
				t.Fatalf("flux calls = %q, want R encode and the broker", calls)
			}
			if want := []string{"R", "encode", "--hosts=" + sb.n.Job + "-[0-" + strconv.Itoa(int(sb.mc.Spec.MaxSize-1)) + "]", "--local"}; !slices.Equal(calls[0], want) {
				t.Errorf("first flux call = %q, want %q", calls[0], want)
			}
			var want []string
			for _, w := range tc.want {
				switch w {
				case "@CFG@":
					want = append(want, mp+"/config/etc/flux/config")
				case "@HOME@":
					want = append(want, filepath.Join(sb.dir, "home"))
				case "@NOCLEANUP@":
					want = append(want, "env", "-u", fluxDisableJobCleanupEnv)
				case "@OPTS@":
					for _, o := range calls[1] {
						if strings.HasPrefix(o, "-S") {
							want = append(want, o)
						}
					}
				default:
					want = append(want, w)
				}
			}
			if !slices.Equal(calls[1], want) {
				t.Errorf("broker call =\n%q\nwant\n%q", calls[1], want)
			}
			brokerEnv := []string{"flux"}
			if tc.noCleanup {
				brokerEnv = []string{"env", fluxDisableJobCleanupEnv + "=t", "flux"}
			}
			if got, want := sb.brokerCleanupEnv(t), map[bool]string{true: "t"}[tc.noCleanup]; got != want {
				t.Errorf("the broker ran with %s=%q, want %q", fluxDisableJobCleanupEnv, got, want)
			}
			if !sb.mc.Spec.Logging.Quiet {
				if echoed := echoedBrokerCall(t, stdout); !slices.Equal(echoed, append(brokerEnv, calls[1]...)) {
					t.Errorf("the echoed broker call, read as a shell reads it, is\n%q\nthe broker call is %s\n%q", echoed, strings.Join(brokerEnv, " "), calls[1])
				}
			}
			if !slices.Contains(calls[1], "-Slog-stderr-mode=local") {
				t.Error("no -Slog-stderr-mode=local")
			}
			st, err := os.Stat(filepath.Join(mp, "config/curve/curve.cert"))
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("curve.cert copy: %v, mode %v, want 0600", err, st.Mode().Perm())
			}
			if _, err := os.Stat(filepath.Join(mp, "config/etc/flux/system/R")); err != nil {
				t.Errorf("no R: %v", err)
			}
			if tc.name == "batch" {
				batch, err := os.ReadFile(filepath.Join(sb.dir, "tmp", "flux-job.batch"))
				if err != nil {
					t.Fatal(err)
				}
				for _, line := range []string{
					"flux submit --flags waitable --error=" + sb.dir + "/tmp/fluxout/job-0.err --output=" + sb.dir + "/tmp/fluxout/job-0.out echo hello world 1",
					"flux submit --flags waitable --error=" + sb.dir + "/tmp/fluxout/job-3.err --output=" + sb.dir + "/tmp/fluxout/job-3.out echo 'hello  3'", // $world expands when written, as in the operator's echo "..."
					"MINICLUSTER_FN_EOF",
				} {
					if !strings.Contains(string(batch), line) {
						t.Errorf("flux-job.batch lacks %q:\n%s", line, batch)
					}
				}
			}
		})
	}
}

// echoedBrokerCall is the flux command line a broker script printed (after its mode, if any), split
// into words by bash.
func echoedBrokerCall(t *testing.T, stdout string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:(?:Batch|Launcher|Submit) mode: )?((?:env \S+ )?flux (?:start|broker) .*)$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no flux command line in the output:\n%s", stdout)
	}
	out, err := exec.Command("/bin/bash", "-c", `eval "words=($1)" && printf '%s\0' "${words[@]}"`, "bash", m[1]).Output()
	if err != nil {
		t.Fatalf("bash cannot read the echoed line %q: %v", m[1], err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// A worker whose flux start fails exits with its status at once (kubelet restarts the container;
// flux itself retries the connection to the main broker), or, with completeWorkers, completes.
// There is no retry loop in the script: flux 0.88 resolves the main broker's name again by itself.
// A worker whose broker fails: its container fails, and kubelet (restartPolicy OnFailure) or the
// Job (a new pod) starts it again; with completeWorkers it completes. With failed-command Fail its
// status is exitPodRetry, which the Job's pod failure policy counts rather than failing the Job.
func TestEntrypointRunWorkerExit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		complete bool
		failed   v1alpha2.FailedCommand
		want     int
	}{
		{failed: v1alpha2.FailedCommandFail, want: exitPodRetry},
		{failed: v1alpha2.FailedCommandComplete, want: 3},
		{complete: true, failed: v1alpha2.FailedCommandFail},
		{complete: true, failed: v1alpha2.FailedCommandComplete},
	} {
		complete := tc.complete
		t.Run(fmt.Sprintf("completeWorkers=%v/failed-command=%s", complete, tc.failed), func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, "hello-world"))
			sb.mc.Spec.Flux.CompleteWorkers = complete
			data, err := entrypointData(sb.mc, v1alpha2.Options{FailedCommand: tc.failed}, sb.n)
			if err != nil {
				t.Fatal(err)
			}
			sb.data = data
			if strings.Contains(data[WaitScriptKey(0)], "sleep 15") {
				t.Error("the broker script still has the 15 s retry loop")
			}
			sb.run(t, InitScriptKey, 1)
			res := sb.runStatus(t, WaitScriptKey(0), 1, "FAKE_FLUX_EXIT=3")
			want := tc.want
			if res.code != want {
				t.Errorf("exit status %d, want %d\n%s", res.code, want, res.output)
			}
			if n := len(sb.fluxCalls(t)); n != 2 {
				t.Errorf("flux was called %d times, want 2 (R encode, one start)", n)
			}
			_, err = os.Stat(filepath.Join(sb.mc.Spec.Flux.Container.MountPath, "flux-operator-complete.txt"))
			if complete != (err == nil) {
				t.Errorf("completion marker written: %v, want %v", err == nil, complete)
			}
		})
	}
}

func TestEntrypointRunSidecar(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "sidecar"))
	sb.run(t, InitScriptKey, 0)
	// The broker's socket exists: the sidecar must not wait (no goshare-wait-fs here, so it
	// polls with [[ -S ]]).
	sock := filepath.Join(sb.mc.Spec.Flux.Container.MountPath, "config/run/flux/local")
	ln := exec.Command("python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])", sock)
	if out, err := ln.CombinedOutput(); err != nil {
		t.Skipf("cannot create a unix socket with python3: %v %s", err, out)
	}
	stdout, _ := sb.run(t, StartScriptKey(3), 0)
	if !strings.Contains(stdout, "socket is local://"+sock) {
		t.Errorf("commands.script did not run with fluxsocket set: %q", stdout)
	}
	if calls := sb.fluxCalls(t); len(calls) != 1 || !slices.Equal(calls[0], []string{"proxy", "local://" + sock, "flux", "resource", "list"}) {
		t.Errorf("flux calls = %q", calls)
	}
}

// TestScriptEscapesAsTheOperator: the operator writes commands.script and the batch lines through
// shell quoting that expands, so its documentation has users write \$VAR for what must expand when
// the script runs. One of its examples picks the leader with "\${FLUX_TASK_RANK}"; written
// verbatim, that test is never true and no rank runs the leader part.
func TestScriptEscapesAsTheOperator(t *testing.T) {
	t.Parallel()
	script := "#!/bin/bash\n" +
		`if [[ "\${FLUX_TASK_RANK}" == "0" ]]; then echo "leader of \$(hostname)"; else echo follower; fi` + "\n" +
		`echo 'written on ${index}, \\ stays one backslash'` + "\n"
	sb := newSandbox(t, entrypointCase{name: "script", mc: func() *v1alpha2.MiniCluster {
		mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Commands: v1alpha2.Commands{Script: script}})
		mc.Spec.Logging.Quiet = true
		return mc
	}})
	sb.run(t, InitScriptKey, 0)
	sb.run(t, WaitScriptKey(0), 0)
	written, err := os.ReadFile(filepath.Join(sb.dir, "tmp", "custom-entrypoint.sh"))
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/bash\n" +
		`if [[ "${FLUX_TASK_RANK}" == "0" ]]; then echo "leader of $(hostname)"; else echo follower; fi` + "\n" +
		`echo 'written on 0, \ stays one backslash'` + "\n"
	if string(written) != want {
		t.Fatalf("commands.script written as\n%s\nwant (as the operator's unquoted here-document writes it)\n%s", written, want)
	}
	out, err := exec.Command("/bin/bash", "-c", string(written)).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "follower\n") {
		t.Errorf("without FLUX_TASK_RANK the script printed %q", out)
	}
	cmd := exec.Command("/bin/bash", "-c", string(written))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "FLUX_TASK_RANK=0"}
	if out, err := cmd.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "leader of ") {
		t.Errorf("rank 0 did not run the leader part: %q, %v", out, err)
	}
}

// TestBatchLinesEscapeAsTheOperator: batch lines were echo "..."'d by the operator; \$ defers.
func TestBatchLinesEscapeAsTheOperator(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, entrypointCase{name: "batch", mc: func() *v1alpha2.MiniCluster {
		mc := testMiniCluster(1, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Batch: true, BatchRaw: true,
			Command: `echo now=${index} later=\${FLUX_JOB_ID}`})
		mc.Spec.Logging.Quiet = true
		return mc
	}})
	sb.run(t, InitScriptKey, 0)
	sb.run(t, WaitScriptKey(0), 0)
	written, err := os.ReadFile(filepath.Join(sb.dir, "tmp", "flux-job.batch"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "#!/bin/bash\necho now=0 later=${FLUX_JOB_ID}\n"; string(written) != want {
		t.Errorf("flux-job.batch = %q, want %q", written, want)
	}
}
