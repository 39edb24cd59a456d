package generators

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// Runtime behaviour of the generated scripts that flux-core showed on real brokers:
// a non-root broker's config tree, SIGTERM reaching the broker, the readiness script and the
// warning of a broker that does not join. The sandbox's flux is a fake (sandbox in
// entrypoint_test.go); tests/images/emulate-pods.py runs the same scripts with real brokers.

type scriptResult struct {
	code           int
	stdout, stderr string
	output         string // both, for messages
}

// runStatus runs a generated script and returns its exit status instead of failing on it.
func (sb *sandbox) runStatus(t *testing.T, key string, index int, env ...string) scriptResult {
	t.Helper()
	return runCommand(t, sb.command(t, key, index, env...))
}

// runCommand runs cmd in a process group of its own, with its output in files, and then kills
// what is left of that group. A broker script's join watchdog, killed when the broker ends, leaves
// its sleep behind (harmless in a pod, whose processes end with the container): with pipes, Wait
// would wait for that sleep to close them, up to 30 s a run.
func runCommand(t *testing.T, cmd *exec.Cmd) scriptResult {
	t.Helper()
	dir := t.TempDir()
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	o, e := create("stdout"), create("stderr")
	cmd.Stdout, cmd.Stderr = o, e
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	err := cmd.Start()
	if err == nil {
		err = cmd.Wait()
		killGroup(cmd.Process.Pid)
	}
	o.Close()
	e.Close()
	res := scriptResult{stdout: readFile(t, o.Name()), stderr: readFile(t, e.Name())}
	res.output = res.stdout + res.stderr
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return res
}

// killGroup kills what is left of process group pgid and waits, at most 10 s, until none of it is
// left. A process killed in the middle of a system call finishes that call first: one that was
// making a file in the sandbox could do it after the test's cleanup had emptied the directory (seen
// on a loaded machine: "TempDir RemoveAll cleanup: unlinkat .../mnt/config/run: directory not
// empty").
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return
		}
	}
}

func TestBrokerOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		pod, container corev1.SecurityContext
		podFSGroup     bool
		want           string
	}{
		{name: "unset", want: ""},
		{name: "fsGroup only", podFSGroup: true, want: ""},
		{name: "container user and group", container: corev1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1001))}, want: "1000:1001"},
		{name: "container user only", container: corev1.SecurityContext{RunAsUser: ptr.To(int64(1000))}, want: "1000"},
		{name: "pod user and group", pod: corev1.SecurityContext{RunAsUser: ptr.To(int64(2000)), RunAsGroup: ptr.To(int64(2000))}, want: "2000:2000"},
		{name: "container overrides pod", pod: corev1.SecurityContext{RunAsUser: ptr.To(int64(2000)), RunAsGroup: ptr.To(int64(2001))},
			container: corev1.SecurityContext{RunAsUser: ptr.To(int64(1000))}, want: "1000:2001"},
		{name: "container root", pod: corev1.SecurityContext{RunAsUser: ptr.To(int64(2000))}, container: corev1.SecurityContext{RunAsUser: ptr.To(int64(0))}, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: "hostname", SecurityContext: tc.container})
			mc.Spec.Pod.SecurityContext.RunAsUser = tc.pod.RunAsUser
			mc.Spec.Pod.SecurityContext.RunAsGroup = tc.pod.RunAsGroup
			if tc.podFSGroup {
				mc.Spec.Pod.SecurityContext.FSGroup = ptr.To(int64(1000))
			}
			mc = defaulted(t, mc)
			if got := brokerOwner(mc); got != tc.want {
				t.Errorf("brokerOwner = %q, want %q", got, tc.want)
			}
			init, err := render("init.sh", initData{scriptCommon: newScriptCommon(mc, v1alpha2.Options{}), BrokerOwner: brokerOwner(mc), Hostlist: "h-0"})
			if err != nil {
				t.Fatal(err)
			}
			if chowns := strings.Contains(init, "chown -R"); chowns != (tc.want != "") {
				t.Errorf("flux-init.sh chowns: %v, want %v", chowns, tc.want != "")
			}
		})
	}
}

// nonRootSandbox is hello-world with a non-root pod (a config tree the broker could not write broke
// real brokers there): fsGroup 1000 and, when
// runAsUser, the broker container as 1000:1000. Its directories are as kubelet makes a pod's:
// the emptyDir volumes mode 0777, the certificate 0440 and group fsGroup.
func nonRootSandbox(t *testing.T, runAsUser bool) *sandbox {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the init script runs as root and the broker as uid 1000, as in the pod")
	}
	c := caseNamed(t, "hello-world")
	mc := c.mc
	c.mc = func() *v1alpha2.MiniCluster {
		m := mc()
		m.Spec.Pod.SecurityContext.FSGroup = ptr.To(int64(1000))
		if runAsUser {
			m.Spec.Containers[0].SecurityContext = corev1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))}
		}
		return m
	}
	sb := newSandbox(t, c)
	for _, d := range []string{filepath.Dir(sb.dir), sb.dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"mnt", "tmp", "home", "software-copy"} {
		p := filepath.Join(sb.dir, d)
		if err := os.MkdirAll(p, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
	}
	cert := filepath.Join(sb.dir, "curve/curve.cert")
	if err := os.Chown(cert, 0, 1000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cert, 0o440); err != nil {
		t.Fatal(err)
	}
	return sb
}

func asUser1000(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000, Groups: []uint32{1000}}}
	return cmd
}

// A bug seen on real brokers: with fsGroup and a runFlux container running as 1000, the init
// container (root) created the config tree as root and the broker could not write it.
func TestEntrypointRunNonRootBroker(t *testing.T) {
	t.Parallel()
	t.Run("runAsUser set: the init container hands over the tree", func(t *testing.T) {
		sb := nonRootSandbox(t, true)
		sb.run(t, InitScriptKey, 1)
		mp := sb.mc.Spec.Flux.Container.MountPath
		for _, d := range []string{"config/curve", "config/run/flux", "config/var/lib/flux", "config/etc/flux/system", "config/etc/flux/system/hostlist"} {
			st, err := os.Stat(filepath.Join(mp, d))
			if err != nil {
				t.Fatal(err)
			}
			if s := st.Sys().(*syscall.Stat_t); s.Uid != 1000 || s.Gid != 1000 {
				t.Errorf("%s is owned by %d:%d, want 1000:1000", d, s.Uid, s.Gid)
			}
		}
		res := runCommand(t, asUser1000(sb.command(t, WaitScriptKey(0), 1)))
		if res.code != 0 {
			t.Fatalf("the broker script failed as uid 1000: %d\n%s", res.code, res.output)
		}
		st, err := os.Stat(filepath.Join(mp, "config/curve/curve.cert"))
		if err != nil {
			t.Fatal(err)
		}
		if s := st.Sys().(*syscall.Stat_t); s.Uid != 1000 || st.Mode().Perm() != 0o600 {
			t.Errorf("certificate copy: owner %d, mode %v; want 1000, 0600", s.Uid, st.Mode().Perm())
		}
	})
	t.Run("runAsUser unknown: the broker says what to set", func(t *testing.T) {
		sb := nonRootSandbox(t, false) // e.g. the image's USER: the init container cannot know it
		sb.run(t, InitScriptKey, 1)
		res := runCommand(t, asUser1000(sb.command(t, WaitScriptKey(0), 1)))
		if res.code == 0 {
			t.Fatalf("the broker script succeeded as uid 1000 on a root-owned tree:\n%s", res.output)
		}
		for _, want := range []string{"is not owned and writable by user 1000", "set runAsUser"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
			}
		}
		if strings.Contains(res.stderr, "fsGroup") {
			t.Errorf("the message blames fsGroup, which is set:\n%s", res.stderr)
		}
	})
	t.Run("no fsGroup: the certificate is unreadable", func(t *testing.T) {
		sb := nonRootSandbox(t, true)
		cert := filepath.Join(sb.dir, "curve/curve.cert")
		if err := os.Chown(cert, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(cert, 0o400); err != nil {
			t.Fatal(err)
		}
		sb.run(t, InitScriptKey, 1)
		res := runCommand(t, asUser1000(sb.command(t, WaitScriptKey(0), 1)))
		if res.code == 0 || !strings.Contains(res.stderr, "cannot read the mounted CURVE certificate as user 1000") ||
			!strings.Contains(res.stderr, "fsGroup") {
			t.Errorf("exit %d, want a failure naming fsGroup:\n%s", res.code, res.output)
		}
	})
}

// A bug seen on real brokers: bash as a container's PID 1 did not pass SIGTERM on, so brokers
// died by SIGKILL at the end of the grace period. The script must forward it to the broker and exit when it has.
func TestEntrypointRunForwardsSIGTERM(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		index int
	}{
		{"interactive", 0}, // flux broker
		{"hello-world", 0}, // flux start ... flux submit
		{"hello-world", 2}, // a worker
		{"logging", 0},     // logging.timed: the broker runs under /usr/bin/time, strict mode
	} {
		t.Run(tc.name+"/"+strconv.Itoa(tc.index), func(t *testing.T) {
			if tc.name == "logging" {
				if _, err := os.Stat("/usr/bin/time"); err != nil {
					t.Skip("/usr/bin/time is missing (Debian package time)")
				}
			}
			sb := newSandbox(t, caseNamed(t, tc.name))
			sb.run(t, InitScriptKey, tc.index)
			cmd := sb.command(t, WaitScriptKey(0), tc.index, "FAKE_FLUX_RUN=60")
			output := startToFile(t, cmd)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Wait until the (fake) broker runs, then signal only the script, as kubelet does.
			deadline := time.Now().Add(30 * time.Second)
			for {
				log, _ := os.ReadFile(filepath.Join(sb.dir, "flux.log"))
				calls := strings.Count(string(log), "--- flux\n")
				if calls >= 2 {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("the broker did not start:\n%s", readFile(t, output))
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // the fake broker sets its trap
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				// 143 whatever the broker's status (0 here): a pod that ends with 0 would
				// count as a completed index, and the Job would never replace a deleted pod.
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 143 {
					t.Errorf("the script exited with %v after SIGTERM, want exit status 143:\n%s", err, readFile(t, output))
				}
				t.Logf("exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the script did not exit within 10 s of SIGTERM:\n%s", readFile(t, output))
			}
			signals, err := os.ReadFile(filepath.Join(sb.dir, "flux.log.signals"))
			if err != nil || !strings.Contains(string(signals), "SIGTERM") {
				t.Errorf("the broker did not get SIGTERM (%v): %q", err, signals)
			}
			// The main broker of a persistent cluster tells the followers, before its broker
			// stops, that it comes back (TestEntrypointRunFollowerRejoins).
			told := "--- flux\nexec\n-r\nall\n-x\n0\n--noinput\ntouch\n" + newPodLayout(sb.mc.Spec.Flux.Container.MountPath).LeadReturns + "\n"
			if got, want := strings.Contains(readFile(t, filepath.Join(sb.dir, "flux.log")), told), tc.name == "interactive" && tc.index == 0; got != want {
				t.Errorf("flux exec ... touch <lead-returns marker> ran: %v, want %v:\n%s", got, want, readFile(t, filepath.Join(sb.dir, "flux.log")))
			}
		})
	}
	t.Run("before the broker starts", func(t *testing.T) {
		sb := newSandbox(t, caseNamed(t, "hello-world"))
		sb.run(t, InitScriptKey, 0)
		script := sb.script(WaitScriptKey(0))
		// Stop the script before flux R encode: the signal must end it (no broker to pass it to).
		script = strings.Replace(script, "\n# Resources of this node", "\nkill -TERM $$\n# Resources of this node", 1)
		p := filepath.Join(sb.dir, "early.sh")
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := sb.command(t, WaitScriptKey(0), 0)
		cmd.Args = []string{"/bin/bash", p}
		cmd.Path = "/bin/bash"
		res := runCommand(t, cmd)
		if res.code != 143 {
			t.Errorf("exit status %d, want 143\n%s", res.code, res.output)
		}
		if log, _ := os.ReadFile(filepath.Join(sb.dir, "flux.log")); len(log) != 0 {
			t.Errorf("flux ran after SIGTERM: %s", log)
		}
	})
}

// broker-ready.sh: Ready exactly when the broker script has marked its broker joined (the
// marker TestEntrypointRunJoinWarning shows it writes once the broker runs). One check waits for
// the marker up to readyCheckWait, and succeeds as soon as it appears.
func TestEntrypointReadyScript(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "hello-world"))
	sb.run(t, InitScriptKey, 1)
	joined := newPodLayout(sb.mc.Spec.Flux.Container.MountPath).Joined
	start := time.Now()
	res := sb.runStatus(t, ReadyScriptKey, 1)
	waited := time.Since(start)
	if want := "not joined yet: the broker has not joined the instance in the 10 s this check waited (after 30 s, its log says why)"; res.code != 1 || strings.TrimSpace(res.output) != want {
		t.Errorf("without the marker: exit %d, output %q; want 1, %q", res.code, res.output, want)
	}
	if waited < readyCheckWait-time.Second {
		t.Errorf("without the marker the check failed after %s; want it to wait about %s", waited, readyCheckWait)
	}

	// The marker appears while a check waits: the check succeeds then, not at its end.
	check := sb.command(t, ReadyScriptKey, 1)
	var out bytes.Buffer
	check.Stdout, check.Stderr = &out, &out
	if err := check.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	marked := time.Now()
	if err := os.WriteFile(joined, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := check.Wait(); err != nil || out.Len() != 0 {
		t.Errorf("marker written during the check: %v, output %q; want success and no output", err, out.String())
	}
	if after := time.Since(marked); after > readyCheckWait/2 {
		t.Errorf("the check ended %s after the marker appeared; want it to end as soon as it sees it", after)
	}

	if res := sb.runStatus(t, ReadyScriptKey, 1); res.code != 0 || res.output != "" {
		t.Errorf("with the marker: exit %d, output %q; want 0 and no output", res.code, res.output)
	}
	job := brokerJob(sb.mc, v1alpha2.Options{}, sb.n)
	for _, c := range job.Spec.Template.Spec.Containers {
		if p := c.StartupProbe; p == nil || p.Exec == nil || strings.Join(p.Exec.Command, " ") != "/bin/bash "+EntrypointMountPath+"/"+ReadyScriptKey {
			t.Errorf("container %s: startupProbe %+v does not run %s", c.Name, p, ReadyScriptKey)
		}
		// Ready as soon as the startupProbe succeeds: a readinessProbe would delay it to its own
		// first tick.
		if c.ReadinessProbe != nil {
			t.Errorf("container %s has a readinessProbe %+v", c.Name, c.ReadinessProbe)
		}
		// A broker that cannot join must stay unready, not be restarted by its startupProbe.
		if p := c.StartupProbe; p != nil && p.FailureThreshold != math.MaxInt32 {
			t.Errorf("container %s: startupProbe gives up after %d failures", c.Name, p.FailureThreshold)
		}
		// The kubelet must not cut a check short, and starts the next one as soon as one ends.
		if p := c.StartupProbe; p != nil && (time.Duration(p.TimeoutSeconds)*time.Second <= readyCheckWait || time.Duration(p.PeriodSeconds)*time.Second >= readyCheckWait) {
			t.Errorf("container %s: startupProbe timeout %d s and period %d s; want the timeout longer and the period shorter than a check's wait (%s)", c.Name, p.TimeoutSeconds, p.PeriodSeconds, readyCheckWait)
		}
	}
}

// A follower of a persistent cluster whose broker exits 0 because the main broker's pod went
// alone (it left the marker, through flux exec, before it stopped) starts its broker again to
// rejoin the main broker's next pod; without the marker (the instance shut down), it ends.
func TestEntrypointRunFollowerRejoins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		leadReturns  bool
		brokerStarts int
	}{
		{"interactive", true, 2},
		{"interactive", false, 1},
		{"hello-world", true, 1}, // not persistent: the instance ends with its command
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.name, tc.leadReturns), func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, tc.name))
			sb.run(t, InitScriptKey, 1)
			env := []string{"FAKE_FLUX_RUN=0.2"}
			if tc.leadReturns {
				env = append(env, "FAKE_FLUX_LEAD_RETURNS="+newPodLayout(sb.mc.Spec.Flux.Container.MountPath).LeadReturns)
			}
			stdout, stderr := sb.run(t, WaitScriptKey(0), 1, env...)
			log := readFile(t, filepath.Join(sb.dir, "flux.log"))
			if got := strings.Count(log, "--- flux\nstart\n"); got != tc.brokerStarts {
				t.Errorf("the broker started %d times, want %d:\n%s%s", got, tc.brokerStarts, stdout, stderr)
			}
			if rejoined := strings.Contains(stdout, "starting this broker again to rejoin it"); rejoined != (tc.brokerStarts == 2) {
				t.Errorf("said it rejoins: %v:\n%s", rejoined, stdout)
			}
		})
	}
}

// flux logs nothing while a broker cannot join (e.g. different certificates): the broker script
// says so on stderr after 30 s, and keeps waiting. Once the broker has joined, it is marked joined
// (for the startupProbe), and only then: a worker's by the hook its rc1 runs, the main broker's
// by the watchdog once the instance runs.
func TestEntrypointRunJoinWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		index int
		state string
		want  string
		// parent is the worker's tbon.parent-endpoint (FAKE_FLUX_PARENT), and report what the
		// script then says of it: the name, its address, whether the port takes a connection.
		parent, report string
		// slowLookup: getent answers after 1.5 s, and reportEnd is the rest of the report after
		// the time the lookup took, which must be at least 1.5 s (a busy machine adds to it).
		slowLookup bool
		reportEnd  string
		// slowGetattr: flux getattr answers after 1.5 s, before the lookup: not DNS's time.
		slowGetattr bool
	}{
		{index: 1, state: "join", want: "has not joined the main broker after 30s (broker state: join); flux keeps trying"},
		{index: 1, state: "join", want: "has not joined the main broker after 30s (broker state: join); flux keeps trying",
			parent: "tcp://127.0.0.1:1", report: "its parent broker is tcp://127.0.0.1:1; 127.0.0.1 resolves to 127.0.0.1 in this pod, and 127.0.0.1:1 does not take a TCP connection within 2 s."},
		{index: 1, state: "join", want: "has not joined the main broker after 30s (broker state: join); flux keeps trying",
			parent: "tcp://127.0.0.1:1", slowGetattr: true,
			report: "its parent broker is tcp://127.0.0.1:1; 127.0.0.1 resolves to 127.0.0.1 in this pod, and 127.0.0.1:1 does not take a TCP connection within 2 s."},
		{index: 1, state: "join", want: "has not joined the main broker after 30s (broker state: join); flux keeps trying",
			parent: "tcp://no-such-broker.invalid:8050", report: "its parent broker is tcp://no-such-broker.invalid:8050; no-such-broker.invalid does not resolve in this pod."},
		{index: 1, state: "join", want: "has not joined the main broker after 30s (broker state: join); flux keeps trying",
			parent: "tcp://slow-dns.test:1", slowLookup: true,
			report:    "its parent broker is tcp://slow-dns.test:1; slow-dns.test resolves to 127.0.0.1 in this pod (the lookup took ",
			reportEnd: " s: DNS in this pod answers slowly or drops queries, and the broker looks the name up again on every retry), and 127.0.0.1:1 does not take a TCP connection within 2 s."},
		{index: 1, state: "none", want: "has not joined the main broker after 30s (broker state: not answering)"},
		{index: 0, state: "quorum", want: "the main broker: the instance has not started after 30s (broker state: quorum)"},
		{index: 1, state: "run"},
		{index: 0, state: "run"},
	} {
		name := tc.state + tc.parent
		if tc.slowGetattr {
			name += "/slow getattr"
		}
		t.Run(name, func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, "hello-world"))
			sb.run(t, InitScriptKey, tc.index)
			// A sleep that returns at once: the watchdog's one-second retries pass in moments.
			fakeBin := filepath.Join(sb.dir, "fakebin")
			if err := os.MkdirAll(fakeBin, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fakeBin, "sleep"), []byte("#!/bin/bash\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.slowLookup {
				// A resolver that answers late: bash's read -t waits, as the fake sleep does not.
				getent := "#!/bin/bash\nread -r -t 1.5 <> <(:) || :\necho \"127.0.0.1       $2\"\n"
				if err := os.WriteFile(filepath.Join(fakeBin, "getent"), []byte(getent), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			run := "120"
			if tc.want == "" {
				run = "3"
			}
			// The marker of a previous run of this container: gone once the script starts.
			joined := newPodLayout(sb.mc.Spec.Flux.Container.MountPath).Joined
			if err := os.WriteFile(joined, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			path := fakeBin + ":/usr/bin:/bin"
			if tc.want == "" {
				// The real sleep: a worker's watchdog checks the marker only when its wait ends.
				path = "/usr/bin:/bin"
			}
			env := []string{"FAKE_FLUX_RUN=" + run, "FAKE_FLUX_STATE=" + tc.state, "FAKE_FLUX_PARENT=" + tc.parent, "PATH=" + path}
			if tc.slowGetattr {
				env = append(env, "FAKE_FLUX_GETATTR_DELAY=1.5")
			}
			cmd := sb.command(t, WaitScriptKey(0), tc.index, env...)
			stderr := startToFile(t, cmd)
			// Until the warning appears (a busy machine starts processes slowly), then stop it.
			deadline := time.Now().Add(60 * time.Second)
			last := tc.want
			if tc.report != "" {
				last = tc.report
			}
			for last != "" && !strings.Contains(readFile(t, stderr), last) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			if tc.want != "" {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			// Stopped by SIGTERM, the script exits 143 (TestEntrypointRunForwardsSIGTERM).
			var exit *exec.ExitError
			if err := cmd.Wait(); err != nil && !(tc.want != "" && errors.As(err, &exit) && exit.ExitCode() == 143) {
				t.Fatalf("%v:\n%s", err, readFile(t, stderr))
			}
			out := readFile(t, stderr)
			_, err := os.Stat(joined)
			if marked := err == nil; marked != (tc.state == "run") {
				t.Errorf("broker state %s: joined marker present %v", tc.state, marked)
			}
			if tc.want == "" {
				if strings.Contains(out, "after 30s") {
					t.Errorf("warned although the broker runs:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "same CURVE certificate") {
				t.Errorf("stderr lacks %q:\n%s", tc.want, out)
			}
			if tc.report != "" && !strings.Contains(out, tc.report) {
				t.Errorf("stderr lacks the parent's report %q:\n%s", tc.report, out)
			}
			if tc.reportEnd != "" && !strings.Contains(out, tc.reportEnd) {
				t.Errorf("stderr lacks the end of the parent's report %q:\n%s", tc.reportEnd, out)
			}
			if tc.slowLookup {
				m := regexp.MustCompile(`the lookup took (\d+)\.(\d)` + regexp.QuoteMeta(tc.reportEnd)).FindStringSubmatch(out)
				if m == nil {
					t.Errorf("stderr lacks the lookup's time:\n%s", out)
				} else if tenths, _ := strconv.Atoi(m[1] + m[2]); tenths < 15 {
					t.Errorf("the lookup took %s.%s s by the report; getent took at least 1.5 s:\n%s", m[1], m[2], out)
				}
			}
			if strings.HasPrefix(tc.parent, "tcp://127.0.0.1:") && strings.Contains(out, "the lookup took") {
				t.Errorf("called the lookup of an address slow:\n%s", out)
			}
			if tc.parent == "" && strings.Contains(out, "its parent broker") {
				t.Errorf("reported a parent although flux gave none:\n%s", out)
			}
		})
	}
}

// startToFile starts cmd with stdout and stderr going to a file (not a pipe: a pipe would make
// Wait also wait for every process that inherited it) and returns the file's name.
func startToFile(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The view image's software is copied once per pod, by the init container, and mounted where the
// view's links point in every other container; copying it again in each container was most of a
// pod's time to ready on the live cluster. With view-source ImageVolume nothing is copied: every
// other container mounts the software from the view image's volume.
func TestSoftwareMountedNotCopied(t *testing.T) {
	t.Parallel()
	for _, c := range entrypointCases() {
		t.Run(c.name, func(t *testing.T) {
			data, mc, n := renderCase(t, c)
			if mc.Spec.Flux.Container.Disable {
				return
			}
			opts := optionsOf(t, mc)
			fromImage := opts.ViewSource == v1alpha2.ViewSourceImageVolume
			pod := newPodLayout(mc.Spec.Flux.Container.MountPath)
			switch copies := strings.Contains(data[InitScriptKey], "cp -R "+softwareMountPath+"/. "+pod.Base+"/"+viewSoftwareDir+"/\n"); {
			case fromImage && strings.Contains(data[InitScriptKey], "cp "):
				t.Errorf("flux-init.sh copies with view-source ImageVolume")
			case !fromImage && !copies:
				t.Errorf("flux-init.sh does not copy %s to %s/%s", softwareMountPath, pod.Base, viewSoftwareDir)
			}
			for k, v := range data {
				if strings.Contains(v, "/opt/software/.") && k != InitScriptKey {
					t.Errorf("%s copies the software again", k)
				}
			}
			want := corev1.VolumeMount{Name: mc.Spec.Flux.Container.Name, MountPath: softwareMountPath, SubPath: viewSoftwareDir}
			if fromImage {
				want = corev1.VolumeMount{Name: volumeViewImage, MountPath: softwareMountPath, SubPath: viewImageSoftwareSubPath, ReadOnly: true}
			}
			job := brokerJob(mc, opts, n)
			for _, ctr := range job.Spec.Template.Spec.Containers {
				found := false
				for _, m := range ctr.VolumeMounts {
					if m.MountPath == softwareMountPath {
						found = equality.Semantic.DeepEqual(m, want)
					}
				}
				if !found {
					t.Errorf("container %s does not mount %s's %s at %s", ctr.Name, want.Name, want.SubPath, softwareMountPath)
				}
			}
		})
	}
}

// brokerCommandCases are commands of the runFlux container: ok tells whether validation accepts
// them, which must be whether the broker script can split them into words.
var brokerCommandCases = []struct {
	command string
	ok      bool
}{
	{"hostname", true},
	{`bash -c "echo a && echo b"`, true},
	{`python3 -c "import os; print('it\'s', os.environ['HOME'])" "$HOME" '$NOT_EXPANDED' # a comment`, true},
	{"echo one\necho two", true}, // a newline separates words
	{"echo $(hostname) ${HOME} $((1 + 2)) `true` {a,b} *.none", true},
	{"echo a\\", true},
	{"echo \\(a\\) ')' \"(\" a=b ! }", true},
	{"echo a && echo b", false},
	{"echo a || echo b", false},
	{"echo a | wc -l", false},
	{"echo a; echo b", false},
	{"echo a &", false},
	{"echo a > out.txt", false},
	{"echo a 2>&1", false},
	{"cat <<EOF\nx\nEOF", false},
	{"echo 'a", false},
	{`echo "a`, false},
	{"echo $(hostname", false},
	{"echo a)", false},
	{"echo (a)", false},
	{"if true; then echo a; fi", false},
	{"echo @(a|b)", false}, // an extended glob: bash parses it only with extglob on
	{"echo one\necho two |", false},
}

// TestBrokerCommandSplitting renders each command into the broker script and runs it: the script
// splits the command into words where validation accepts it, and fails with its "cannot parse"
// message where validation refuses it (the script rendered all the same). Every broker command of
// the examples and of the corpus must be accepted and split.
func TestBrokerCommandSplitting(t *testing.T) {
	t.Parallel()
	type tc struct {
		name, command string
		launcher, ok  bool
	}
	var cases []tc
	for i, c := range brokerCommandCases {
		// (The sandbox's directory is named after the test, and its scripts do not quote it.)
		cases = append(cases, tc{name: fmt.Sprintf("table-%02d", i), command: c.command, ok: c.ok})
	}
	examples, err := outputcheck.Examples()
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := outputcheck.Corpus()
	if errors.Is(err, outputcheck.ErrNoCorpus) {
		t.Logf("the corpus's commands are not run: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	inputs := 0
	for _, in := range append(examples, corpus...) {
		mc, errs := v1alpha2.Decode(in.Doc)
		if mc == nil || len(errs) > 0 {
			continue // tests/e2e checks the messages of the corpus files that do not decode
		}
		mc.Default()
		for _, c := range mc.Spec.Containers {
			if c.RunFlux && c.Command != "" && !c.Batch && c.Commands.Script == "" {
				cases = append(cases, tc{name: in.Name, command: c.Command, launcher: c.Launcher, ok: true})
				inputs++
			}
		}
	}
	if inputs < 5 {
		t.Errorf("only %d broker commands found in the examples and the corpus", inputs)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Logf("command: %q", c.command)
			mc := testMiniCluster(2, v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: c.command, Launcher: c.launcher})
			mc.Default()
			var problems []string
			for _, e := range mc.Validate(v1alpha2.Options{JobNaming: v1alpha2.JobNamingHash}) {
				problems = append(problems, e.Error())
			}
			if ok := len(problems) == 0; ok != c.ok {
				t.Errorf("validation accepts it: %v, want %v; problems %q", ok, c.ok, problems)
			} else if !c.ok && (len(problems) != 1 || !strings.HasPrefix(problems[0], "spec.containers[0].command: ") ||
				!strings.Contains(problems[0], "commands.script")) {
				t.Errorf("problems %q, want one at spec.containers[0].command that points to commands.script", problems)
			}

			sb := newSandbox(t, caseNamed(t, "hello-world"))
			sb.mc.Spec.Containers[0].Command = c.command
			sb.mc.Spec.Containers[0].Launcher = c.launcher
			data, err := entrypointData(sb.mc, v1alpha2.Options{}, sb.n)
			if err != nil {
				t.Fatal(err)
			}
			sb.data = data
			sb.run(t, InitScriptKey, 0)
			cmd := sb.command(t, WaitScriptKey(0), 0)
			out := startToFile(t, cmd) // the broker's join watcher outlives the script by 5 s
			err = cmd.Wait()
			if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			output := readFile(t, out)
			if split := err == nil; split != c.ok {
				t.Errorf("the broker script splits it: %v, want %v (%v)\n%s", split, c.ok, err, output)
			} else if !split && !strings.Contains(output, "cannot parse containers[0].command as a command line") {
				t.Errorf("the script failed for another reason:\n%s", output)
			}
		})
	}
}

// TestEntrypointRunFailedCommand: the main broker's script, with a fake flux whose start runs its
// initial program, exits with the command's status and says why in its termination message; with
// failed-command Complete it exits 0, as the operator's does.
func TestEntrypointRunFailedCommand(t *testing.T) {
	t.Parallel()
	container := func(command string, set func(*v1alpha2.MiniClusterContainer)) func() *v1alpha2.MiniCluster {
		return func() *v1alpha2.MiniCluster {
			c := v1alpha2.MiniClusterContainer{Image: "ubuntu:noble", Command: command}
			if set != nil {
				set(&c)
			}
			mc := testMiniCluster(2, c)
			mc.Spec.Logging.Quiet = true
			return mc
		}
	}
	batch := func(c *v1alpha2.MiniClusterContainer) { c.Batch = true }
	for _, tc := range []struct {
		name    string
		mc      func() *v1alpha2.MiniCluster
		option  v1alpha2.FailedCommand
		waits   string // the statuses of the batch's flux job wait calls
		code    int
		message string // the termination message; "" when none is written
		runs    int    // flux submit --watch calls (a submitted command)
	}{
		{name: "command fails", mc: container("sh -c 'exit 3'", nil), code: 3, message: "the command failed with exit status 3", runs: 1},
		{name: "command succeeds", mc: container("true", nil), runs: 1},
		{name: "command fails, option Complete", mc: container("sh -c 'exit 3'", nil), option: v1alpha2.FailedCommandComplete, runs: 1},
		{name: "command ends as if stopped", mc: container("sh -c 'exit 143'", nil), code: 1,
			message: "the command failed with exit status 143; the container exits 1 instead, as 143 would start this pod again", runs: 1},
		{name: "launcher fails", mc: container("sh -c 'exit 4'", func(c *v1alpha2.MiniClusterContainer) { c.Launcher = true }), code: 4,
			message: "the command failed with exit status 4"},
		{name: "batch, one of three fails", mc: container("echo one\necho two\necho three", batch), waits: "0 1 0", code: 1,
			message: "1 of the 3 batch jobs failed"},
		{name: "batch, two of three fail", mc: container("echo one\necho two\necho three", batch), waits: "1 0 1", code: 2,
			message: "2 of the 3 batch jobs failed"},
		{name: "batch succeeds", mc: container("echo one\necho two\necho three", batch), waits: "0 0 0"},
		{name: "batch fails, option Complete", mc: container("echo one\necho two\necho three", batch), option: v1alpha2.FailedCommandComplete, waits: "0 1 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, entrypointCase{name: tc.name, mc: tc.mc})
			data, err := entrypointData(sb.mc, v1alpha2.Options{FailedCommand: tc.option}, sb.n)
			if err != nil {
				t.Fatal(err)
			}
			sb.data = data
			waits := filepath.Join(sb.dir, "waits")
			if err := os.WriteFile(waits, []byte(tc.waits+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			sb.run(t, InitScriptKey, 0)
			res := sb.runStatus(t, WaitScriptKey(0), 0, "FAKE_FLUX_INITIAL=1", "FAKE_FLUX_WAITS="+waits)
			if res.code != tc.code {
				t.Errorf("exit status %d, want %d\n%s", res.code, tc.code, res.output)
			}
			message, err := os.ReadFile(filepath.Join(sb.dir, "termination-log"))
			switch {
			case tc.message == "" && err == nil:
				t.Errorf("termination message %q written, want none", message)
			case tc.message != "" && strings.TrimSpace(string(message)) != tc.message:
				t.Errorf("termination message %q (%v), want %q", message, err, tc.message)
			case tc.message != "" && !strings.Contains(res.stderr, tc.message):
				t.Errorf("the log does not say %q:\n%s", tc.message, res.output)
			}
			runs := 0
			for _, call := range sb.fluxCalls(t) {
				if call[0] == "submit" && slices.Contains(call, "--watch") {
					runs++
				}
			}
			if runs != tc.runs {
				t.Errorf("the command was submitted %d times, want %d", runs, tc.runs)
			}
			// The post hook's place: the marker that this broker is done, failed command or not.
			if _, err := os.Stat(newPodLayout(sb.mc.Spec.Flux.Container.MountPath).BrokerDone); err != nil {
				t.Errorf("no broker-done marker: %v", err)
			}
		})
	}
}

// fakeTools writes executables (name -> bash body) to a directory of the sandbox and returns a
// PATH that finds them first.
func (sb *sandbox) fakeTools(t *testing.T, tools map[string]string) string {
	t.Helper()
	dir := filepath.Join(sb.dir, "fakebin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return "PATH=" + dir + ":/usr/bin:/bin"
}

// mainBrokerTools fakes the main broker's name resolving to addrs, or to its first address
// only for the first lookups (getent ahosts prints each address on three lines, as glibc does),
// and a TCP connection to port 8050 succeeding for the addresses in answering, on the first
// answers attempts only (timeout, as takes_connection runs it; every attempt is logged to
// <sandbox>/probes).
func (sb *sandbox) mainBrokerTools(t *testing.T, addrs []string, firstOnly int, answering string, answers int) string {
	t.Helper()
	var lines strings.Builder
	for _, a := range addrs {
		for _, kind := range []string{"STREAM", "DGRAM", "RAW"} {
			fmt.Fprintf(&lines, "%s %s\n", a, kind)
		}
	}
	lookups, probes := filepath.Join(sb.dir, "lookups"), filepath.Join(sb.dir, "probes")
	return sb.fakeTools(t, map[string]string{
		"getent": fmt.Sprintf("[[ \"$1\" == ahosts && \"$2\" == %s ]] || exit 2\necho >> %s\nn=$(wc -l < %s)\ncat <<'ADDRESSES' | if ((n <= %d)); then head -n 3; else cat; fi\n%sADDRESSES\n",
			shellQuote(sb.n.Job+"-0."+sb.n.Service+".team-a.svc.cluster.example"), lookups, lookups, firstOnly, lines.String()),
		// timeout 2 bash -c '...' bash ADDRESS PORT: the address is $6
		"timeout": fmt.Sprintf("echo \"$6:$7\" >> %s\nn=$(wc -l < %s)\n[[ \" %s \" == *\" $6 \"* && \"$7\" == 8050 && $n -le %d ]]\n", probes, probes, answering, answers),
	})
}

// A worker whose main broker's name resolves to two addresses (the main broker's pod replaced,
// the old one Terminating on a node that stopped answering) starts its broker with a config that
// names the address that answers; with one address it starts with the config as it is, and the
// name.
func TestEntrypointRunMainAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		addrs    []string
		pinnedTo string
	}{
		{"one address", []string{"10.244.1.10"}, ""},
		{"old and new pod", []string{"10.244.1.10", "10.244.2.11"}, "10.244.2.11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, caseNamed(t, "hello-world"))
			sb.run(t, InitScriptKey, 1)
			pod := newPodLayout(sb.mc.Spec.Flux.Container.MountPath)
			path := sb.mainBrokerTools(t, tc.addrs, 0, "10.244.2.11", 10)
			res := sb.runStatus(t, WaitScriptKey(0), 1, "FAKE_FLUX_RUN=0.1", path)
			if res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.output)
			}
			log := readFile(t, filepath.Join(sb.dir, "flux.log"))
			want := pod.ConfigDir
			if tc.pinnedTo != "" {
				want = pod.MainConfigDir
				if !strings.Contains(res.stderr, "resolves to "+strings.Join(tc.addrs, " ")+"; "+tc.pinnedTo+" answers: this broker connects there") {
					t.Errorf("the script does not say where it connects:\n%s", res.output)
				}
				cfg := parseBrokerConfig(t, readFile(t, filepath.Join(pod.MainConfigDir, "broker.toml")))
				if hosts := bootstrapHosts(t, cfg); hosts[0].Connect != "tcp://"+tc.pinnedTo+":8050" {
					t.Errorf("the main broker's entry in the worker's config: %+v, want connect tcp://%s:8050", hosts[0], tc.pinnedTo)
				}
			}
			if !strings.Contains(log, "--- flux\nstart\n-o\n--config\n"+want+"\n") {
				t.Errorf("the broker did not start with --config %s:\n%s", want, log)
			}
		})
	}
}

// A worker of a persistent cluster that has joined and then lost its connection to the main
// broker for 10 s, while an address of the main broker's name answers (a new pod of index 0),
// stops its broker and starts it again with that address; no connection is there in the test's
// network namespace, so the watchdog finds the connection gone.
func TestEntrypointRunMainReplaced(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "interactive"))
	sb.run(t, InitScriptKey, 1)
	pod := newPodLayout(sb.mc.Spec.Flux.Container.MountPath)
	// The first start finds the old pod's address alone. The new pod's is there from the second
	// lookup on (the watchdog's), and answers twice: to the watchdog, then to the second start's
	// choice (four attempts, each trying the old address first).
	path := sb.mainBrokerTools(t, []string{"10.244.1.10", "10.244.2.11"}, 1, "10.244.2.11", 4)
	// The first broker runs until the watchdog stops it (two looks, 5 s apart); the second ends
	// at once.
	res := sb.runStatus(t, WaitScriptKey(0), 1, "FAKE_FLUX_RUN=14", "FAKE_FLUX_RUN_AGAIN=0.1", path)
	log := readFile(t, filepath.Join(sb.dir, "flux.log"))
	if got := strings.Count(log, "--- flux\nstart\n"); got != 2 {
		t.Fatalf("the broker started %d times, want 2 (exit %d):\n%s\n%s", got, res.code, log, res.output)
	}
	if !strings.Contains(res.stderr, "and 10.244.2.11 ("+sb.n.Job+"-0."+sb.n.Service+".team-a.svc.cluster.example) answers: the main broker's pod was replaced; stopping this broker to join the new one") {
		t.Errorf("the watchdog did not say why it stops the broker:\n%s", res.output)
	}
	if signals := readFile(t, filepath.Join(sb.dir, "flux.log.signals")); strings.Count(signals, "SIGTERM") != 1 {
		t.Errorf("the broker got %q, want one SIGTERM", signals)
	}
	if strings.Count(log, "--config\n"+pod.MainConfigDir+"\n") != 1 {
		t.Errorf("the second start does not name the new pod's address:\n%s", log)
	}
	if res.code != 0 || !strings.Contains(res.stdout, "starting this broker again to rejoin it") {
		t.Errorf("exit %d:\n%s", res.code, res.output)
	}
}

// TestEntrypointRunMainReplacedBeforeJoin: a worker that has not joined yet (its broker never
// reaches rc1's end) when the main broker's pod is replaced, the old one left on a node that
// stopped answering, stops its broker once the name resolves to both pods and the new one answers,
// and starts it again with that address; with the one address of a main broker that answers
// while this broker has no connection to it, it waits, as for a main broker that starts.
func TestEntrypointRunMainReplacedBeforeJoin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		addrs    []string
		restarts bool
	}{
		{"old and new pod", []string{"10.244.1.10", "10.244.2.11"}, true},
		{"one address", []string{"10.244.2.11"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sb := newSandbox(t, caseNamed(t, "interactive"))
			sb.run(t, InitScriptKey, 1)
			pod := newPodLayout(sb.mc.Spec.Flux.Container.MountPath)
			path := sb.mainBrokerTools(t, tc.addrs, 1, "10.244.2.11", 4)
			res := sb.runStatus(t, WaitScriptKey(0), 1, "FAKE_FLUX_STATE=join", "FAKE_FLUX_RUN=14", "FAKE_FLUX_RUN_AGAIN=0.1", path)
			log := readFile(t, filepath.Join(sb.dir, "flux.log"))
			starts := strings.Count(log, "--- flux\nstart\n")
			stopped := strings.Contains(res.stderr, "the main broker's pod was replaced; stopping this broker to join the new one")
			if _, err := os.Stat(pod.Joined); err == nil {
				t.Fatalf("the broker was marked joined: the test needs one that is not")
			}
			switch {
			case tc.restarts && (starts != 2 || !stopped || strings.Count(log, "--config\n"+pod.MainConfigDir+"\n") != 1):
				t.Errorf("started %d times (want 2, the second with the new pod's address), said it stops: %v:\n%s\n%s", starts, stopped, log, res.output)
			case !tc.restarts && (starts != 1 || stopped):
				t.Errorf("started %d times (want 1), said it stops: %v:\n%s", starts, stopped, res.output)
			}
			if res.code != 0 {
				t.Errorf("exit %d:\n%s", res.code, res.output)
			}
		})
	}
}

// TestEntrypointRunMainReplacedKilled: a broker that the main-broker watchdog stopped and that
// does not exit (flux waits 60 s for its goodbye to the main broker that is gone) is killed 5 s
// after the SIGTERM, and the worker starts its broker again to join the new main broker.
func TestEntrypointRunMainReplacedKilled(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "interactive"))
	sb.run(t, InitScriptKey, 1)
	path := sb.mainBrokerTools(t, []string{"10.244.1.10", "10.244.2.11"}, 1, "10.244.2.11", 4)
	start := time.Now()
	res := sb.runStatus(t, WaitScriptKey(0), 1, "FAKE_FLUX_RUN=40", "FAKE_FLUX_RUN_AGAIN=0.1", "FAKE_FLUX_TERM_HANGS=1", path)
	log := readFile(t, filepath.Join(sb.dir, "flux.log"))
	if got := strings.Count(log, "--- flux\nstart\n"); got != 2 {
		t.Fatalf("the broker started %d times, want 2 (exit %d):\n%s\n%s", got, res.code, log, res.output)
	}
	if !strings.Contains(res.stderr, "the broker has not exited 5s after SIGTERM (it waits for its old main broker's goodbye); killing it") {
		t.Errorf("the watchdog did not say it kills the broker:\n%s", res.output)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: the stopped broker was not killed before its own end (40 s)", took)
	}
	if res.code != 0 {
		t.Errorf("exit %d:\n%s", res.code, res.output)
	}
}
