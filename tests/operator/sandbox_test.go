package operator

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// testSecretKey is the secret key of the certificate both sides get in the sandbox (the operator's
// stub keygen writes an empty curve.cert); no log of ours may contain it.
const testSecretKey = "SANDBOX-SECRET-KEY-0123456789abcdefghijklmno"

const testCert = "#   ZeroMQ CURVE **Secret** Certificate\nmetadata\n    name = \"sandbox\"\ncurve\n    public-key = \"SANDBOX-PUBLIC-KEY-0123456789abcdefghijklm\"\n    secret-key = \"" + testSecretKey + "\"\n"

// hooks are replaced by markers, so the comparison sees where each runs, not what it does.
var hookNames = []string{"init", "pre", "post", "brokerPre", "workerPre", "servicePre"}

// sandboxRun is what one script did: exit code, the flux calls (argv), the environment at
// flux start, its output and the files it created, changed or removed.
type sandboxRun struct {
	code     int
	calls    [][]string
	startEnv map[string]string
	output   string
	files    map[string]*fileState // nil: removed
}

// runSandboxed runs the init script and then the broker script of one pod in private mount, PID,
// network and UTS namespaces (unshare), with tmpfs over /mnt, /tmp and /opt: the view image's flux
// is a stub that logs its argv (and its environment at flux start), the ConfigMap is under
// /opt/flux_operator (both sides' scripts are rewritten the same way, as /flux_operator cannot be
// created without touching the host's root). The host's root is remounted read-only inside the
// sandbox, so /mnt, /tmp and /opt are where the scripts can write: they are recorded (tar)
// before the init script and after the broker script.
func runSandboxed(t *testing.T, scripts map[string]string, initKey, brokerKey, hostname string, env []string) sandboxRun {
	t.Helper()
	dir := t.TempDir()
	for k, v := range scripts {
		v = strings.ReplaceAll(v, "/flux_operator_curve/", "/opt/flux_operator_curve/")
		v = strings.ReplaceAll(v, "/flux_operator/", "/opt/flux_operator/")
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup := `set -e
mount -t tmpfs tmpfs /mnt; mount -t tmpfs tmpfs /opt
mkdir -p /opt/sandbox && mount --bind "$SANDBOX_DIR" /opt/sandbox
mount -t tmpfs tmpfs /tmp
mkdir -p /mnt/flux /opt/flux_operator /opt/flux_operator_curve /opt/views/._view/h4sh/bin /opt/log /tmp/home
# The shared volume is an emptyDir: kubelet creates it mode 0777.
chmod 0777 /mnt/flux
# The view image's python (both scripts look for lib/python3*; set -e stops on its absence).
mkdir -p /opt/views/._view/h4sh/lib/python3.11/site-packages && touch /opt/views/._view/h4sh/bin/python3.11 /opt/views/._view/h4sh/lib/libpython3.11.so.1.0
cp -R /opt/sandbox/. /opt/flux_operator/ && rm -rf /opt/flux_operator/log
printf '%s' "$SANDBOX_CERT" > /opt/flux_operator/curve.cert
printf '%s' "$SANDBOX_CERT" > /opt/flux_operator_curve/curve.cert
chmod 0400 /opt/flux_operator_curve/curve.cert
# The broker container's runAsUser:runAsGroup, and the pod's fsGroup: kubelet gives that group
# read access to the certificate's volume and adds it to the container's groups.
broker_as=()
if [[ -n "${SANDBOX_BROKER_USER:-}" ]]; then
  groups="${SANDBOX_BROKER_USER#*:}"
  if [[ -n "${SANDBOX_FSGROUP:-}" ]]; then
    chgrp "$SANDBOX_FSGROUP" /opt/flux_operator_curve/curve.cert && chmod 0440 /opt/flux_operator_curve/curve.cert
    groups="${groups},${SANDBOX_FSGROUP}"
  fi
  chmod 0777 /opt/log /tmp/home
  broker_as=(setpriv --reuid="${SANDBOX_BROKER_USER%:*}" --regid="${SANDBOX_BROKER_USER#*:}" --groups="${groups}")
fi
printf '127.0.0.1 localhost\n10.0.0.7 %s.%s %s\n' "$SANDBOX_HOST" "$SANDBOX_DOMAIN" "$SANDBOX_HOST" > /tmp/hosts
mount --bind /tmp/hosts /etc/hosts
hostname "$SANDBOX_HOST"
cat > /opt/views/._view/h4sh/bin/flux <<'STUB'
#!/bin/bash
# python: not logged. Our broker script's join watchdog runs it in the background, at the same
# time as flux start, and both appending here would interleave; it answers "the broker runs".
if [[ "$1" == python ]]; then exit 0; fi
{ echo "--- flux"; printf '%s\n' "$@"; } >> /opt/log/flux.log
if [[ "$1" == start ]]; then env > /opt/log/start.env; fi
if [[ "$1" == R ]]; then echo '{"version": 1}'; fi
exit 0
STUB
chmod +x /opt/views/._view/h4sh/bin/flux
# With flux.container.disable the application image brings flux: the stub is on PATH too.
mkdir -p /opt/bin && cp /opt/views/._view/h4sh/bin/flux /opt/bin/flux
# The view image: /opt/view links to the view, /opt/software holds what it brings along.
ln -s /opt/views/._view/h4sh /opt/view
mkdir -p /opt/software/share && echo sandbox > /opt/software/share/README
tar --numeric-owner -C / --exclude=opt/sandbox --exclude=opt/log -cf /opt/sandbox/before.tar mnt tmp opt
mount -o remount,bind,ro /
set +e
cd /tmp
/bin/bash /opt/flux_operator/"$SANDBOX_INIT" > /opt/log/init.out 2>&1 || { echo "init exit $?" >> /opt/log/init.out; }
timeout 60 "${broker_as[@]}" /bin/bash /opt/flux_operator/"$SANDBOX_BROKER" > /opt/log/broker.out 2>&1
echo $? > /opt/log/code
cd /
tar --numeric-owner -C / --exclude=opt/sandbox --exclude=opt/log -cf /opt/sandbox/after.tar mnt tmp opt
cp -R /opt/log/. /opt/sandbox/log/
`
	if err := os.Mkdir(filepath.Join(dir, "log"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--mount", "--pid", "--net", "--uts", "--fork", "--kill-child", "--mount-proc", "--propagation", "private", "/bin/bash", "-c", setup)
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/bin", "HOME=/tmp/home",
		"SANDBOX_DIR=" + dir, "SANDBOX_CERT=" + testCert, "SANDBOX_HOST=" + hostname,
		"SANDBOX_DOMAIN=sandbox-svc.default.svc.cluster.local", "SANDBOX_INIT=" + initKey, "SANDBOX_BROKER=" + brokerKey,
	}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("sandbox: %v\n%s", err, out.String())
	}
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(dir, "log", f)); return string(b) }
	var res sandboxRun
	fmt.Sscan(read("code"), &res.code)
	for _, c := range strings.Split(read("flux.log"), "--- flux\n")[1:] {
		res.calls = append(res.calls, strings.Split(strings.TrimSuffix(c, "\n"), "\n"))
	}
	res.startEnv = map[string]string{}
	for _, l := range strings.Split(read("start.env"), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			res.startEnv[k] = v
		}
	}
	res.output = read("init.out") + read("broker.out")
	before, err := readTree(filepath.Join(dir, "before.tar"))
	if err != nil {
		t.Fatalf("sandbox: %v\n%s", err, out.String())
	}
	after, err := readTree(filepath.Join(dir, "after.tar"))
	if err != nil {
		t.Fatalf("sandbox: %v\n%s", err, out.String())
	}
	res.files = writtenFiles(before, after)
	return res
}

// markHooks writes a copy of a MiniCluster file with every commands.* hook replaced by a marker.
func markHooks(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mc map[string]any
	if err := yaml.Unmarshal(data, &mc); err != nil {
		t.Fatal(err)
	}
	spec, _ := mc["spec"].(map[string]any)
	for _, list := range []string{"containers", "services"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			cmds, _ := cm["commands"].(map[string]any)
			for _, h := range hookNames {
				if s, ok := cmds[h].(string); ok && strings.TrimSpace(s) != "" {
					cmds[h] = "echo HOOK-" + h
				}
			}
		}
	}
	out, err := yaml.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// entrypointData returns the scripts of the entrypoint ConfigMap, keyed by file name.
func entrypointScripts(objs []object, operator bool) (map[string]string, string) {
	for _, o := range objs {
		role := ourRole(o)
		if operator {
			role = operatorRole(o)
		}
		if role != roleEntrypoint {
			continue
		}
		data, _ := o["data"].(map[string]any)
		out := map[string]string{}
		for k, v := range data {
			name := k
			if operator {
				switch {
				case strings.HasPrefix(k, "wait-") || strings.HasPrefix(k, "start-"):
					name = k + ".sh"
				case k == "curve.cert":
				default:
					name = "flux-init.sh"
				}
			}
			out[name] = fmt.Sprint(v)
		}
		return out, o.name()
	}
	return nil, ""
}

// TestScriptsBehave runs both sides' init and broker scripts of rank 0 and rank 1 and compares
// what they do.
func TestScriptsBehave(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("TestScriptsBehave needs root for unshare --mount/--pid/--net: skipped")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) not found: skipped")
	}
	docs := differencesText(t)
	for _, id := range []string{"D-connect-timeout", "D-failed-command", "D-log-level-0", "D-no-job-cleanup", "F-pythonpath-cwd", "F-secret-in-log"} {
		if !strings.Contains(docs, "`"+id+"`") {
			t.Errorf("%s is not listed in the differences from the operator", id)
		}
	}
	for _, ru := range fileRules {
		if ru.kind != equivalent && !strings.Contains(docs, "`"+ru.id+"`") {
			t.Errorf("rule %s (%s) of the files written is not listed in the differences from the operator", ru.id, ru.kind)
		}
	}
	counts := map[string]int{}
	files := fileTally{byKind: map[kind]int{}, byRule: map[string]int{}}
	for _, in := range inputs(t) {
		if _, refused := refusedByUs[in.label]; refused {
			continue
		}
		t.Run(in.label, func(t *testing.T) {
			marked := markHooks(t, in.path)
			op := runOracle(t, marked)
			ours := runOurs(t, marked)
			if ours.code != 0 || len(op.objects) == 0 {
				t.Skip("refused by both (TestOperatorDiff checks that)")
			}
			opScripts, _ := entrypointScripts(op.objects, true)
			ourScripts, _ := entrypointScripts(ours.objects, false)
			var name, job string
			for _, o := range op.objects {
				if operatorRole(o) == roleBroker {
					name = o.name()
				}
			}
			for _, o := range ours.objects {
				if ourRole(o) == roleBroker {
					job = o.name()
				}
			}
			user := brokerUser(t, marked)
			for _, index := range []int{0, 1} {
				opRun := runSandboxed(t, opScripts, "flux-init.sh", "wait-0.sh", fmt.Sprintf("%s-%d", name, index), user)
				ourRun := runSandboxed(t, ourScripts, "flux-init.sh", brokerKey(ourScripts), fmt.Sprintf("%s-%d", job, index),
					append([]string{fmt.Sprintf("JOB_COMPLETION_INDEX=%d", index), fmt.Sprintf("HOSTNAME=%s-%d", job, index)}, user...))
				compareRuns(t, counts, index, name, job, opRun, ourRun)
				compareFiles(t, &files, index, name, job, opRun, ourRun)
			}
		})
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s: %d", k, counts[k])
	}
	t.Log(files)
	for _, id := range sortedKeys(files.byRule) {
		t.Logf("files written, %s: %d", id, files.byRule[id])
	}
}

// brokerUser is the sandbox's environment for a broker container (containers[0]) that runs as
// another user than root: SANDBOX_BROKER_USER=uid:gid and SANDBOX_FSGROUP (the pod's fsGroup).
func brokerUser(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var mc struct {
		Spec struct {
			Pod struct {
				SecurityContext struct {
					FSGroup *int64 `json:"fsGroup"`
				} `json:"securityContext"`
			} `json:"pod"`
			Containers []struct {
				SecurityContext struct {
					RunAsUser  *int64 `json:"runAsUser"`
					RunAsGroup *int64 `json:"runAsGroup"`
				} `json:"securityContext"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &mc); err != nil {
		t.Fatal(err)
	}
	if len(mc.Spec.Containers) == 0 {
		return nil
	}
	sc := mc.Spec.Containers[0].SecurityContext
	if sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		return nil
	}
	gid := *sc.RunAsUser
	if sc.RunAsGroup != nil {
		gid = *sc.RunAsGroup
	}
	env := []string{fmt.Sprintf("SANDBOX_BROKER_USER=%d:%d", *sc.RunAsUser, gid)}
	if fs := mc.Spec.Pod.SecurityContext.FSGroup; fs != nil {
		env = append(env, fmt.Sprintf("SANDBOX_FSGROUP=%d", *fs))
	}
	return env
}

func brokerKey(scripts map[string]string) string {
	for k := range scripts {
		if strings.HasPrefix(k, "wait-") {
			return k
		}
	}
	return "wait-0.sh"
}

// startCall is the flux start call (the last one: workers retry until one succeeds).
func startCall(calls [][]string) []string {
	for i := len(calls) - 1; i >= 0; i-- {
		if len(calls[i]) > 0 && (calls[i][0] == "start" || calls[i][0] == "broker") {
			return calls[i]
		}
	}
	return nil
}

var hookMarker = regexp.MustCompile(`HOOK-[A-Za-z]+`)

// joinHookEntry is the FLUX_RC_EXTRA entry of a worker's join hook (generators' podLayout.JoinHook).
var joinHookEntry = regexp.MustCompile(`^/\S*/config/run/rc$`)

func compareRuns(t *testing.T, counts map[string]int, index int, name, job string, op, ours sandboxRun) {
	t.Helper()
	if strings.Contains(ours.output, testSecretKey) {
		t.Errorf("rank %d: our scripts print the secret key", index)
	}
	if strings.Contains(op.output, testSecretKey) {
		counts["F-secret-in-log"]++
	}
	if op.code != ours.code {
		t.Errorf("rank %d: exit code operator %d, ours %d\noperator:\n%s\nours:\n%s", index, op.code, ours.code, op.output, ours.output)
	}
	if a, b := hookMarker.FindAllString(op.output, -1), hookMarker.FindAllString(ours.output, -1); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("rank %d: hooks ran as %v (operator) and %v (ours)", index, a, b)
	}
	a, b := normalizeStart(startCall(op.calls), name, job), normalizeStart(startCall(ours.calls), name, job)
	// D-connect-timeout: the CRD default 5s reaches the operator only when the file has a flux:
	// block (structural defaulting does not create parents); ours applies it always.
	if !slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "-Stbon.connect_timeout=") }) {
		if i := slices.Index(b, "-Stbon.connect_timeout=5s"); i >= 0 {
			b = slices.Delete(b, i, i+1)
			counts["D-connect-timeout"]++
		}
	}
	// D-log-level-0: the operator's {{or .Spec.Flux.LogLevel 6}} turns an explicit logLevel 0 into 6.
	if i, j := slices.Index(a, "-Slog-stderr-level=6"), slices.Index(b, "-Slog-stderr-level=0"); i >= 0 && j >= 0 && !slices.Contains(a, "-Slog-stderr-level=0") {
		b[j] = a[i]
		counts["D-log-level-0"]++
	}
	// D-no-job-cleanup: our main broker runs with FLUX_DISABLE_JOB_CLEANUP=t when its job waits
	// for every job it starts, and that job runs without it (env -u before the operator's job).
	if i := slices.Index(b, "env"); index == 0 && i >= 0 && i+3 <= len(b) && b[i+1] == "-u" && b[i+2] == noJobCleanupEnv &&
		ours.startEnv[noJobCleanupEnv] == "t" && op.startEnv[noJobCleanupEnv] == "" {
		b = slices.Delete(slices.Clone(b), i, i+3)
		counts["D-no-job-cleanup"]++
	} else if ours.startEnv[noJobCleanupEnv] != op.startEnv[noJobCleanupEnv] {
		t.Errorf("rank %d: %s at flux start: operator %q, ours %q", index, noJobCleanupEnv, op.startEnv[noJobCleanupEnv], ours.startEnv[noJobCleanupEnv])
	}
	// D-failed-command: our batch mode's initial program exits with the batch job's status (the
	// number of its jobs that failed) where the operator's waits for it with flux job wait --all.
	if i := slices.Index(b, failedCommandBatch); index == 0 && i >= 0 {
		b = slices.Clone(b)
		b[i] = operatorBatch
		counts["D-failed-command"]++
	}
	// E-batch-args: our sh -c 'flux batch "$@" ...' sh FLAGS is the operator's
	// sh -c "flux batch FLAGS ..." with the flags passed as arguments instead of pasted in.
	if a2, b2 := inlineShArgs(a), inlineShArgs(b); strings.Join(a2, "\x00") == strings.Join(b2, "\x00") && strings.Join(a, "\x00") != strings.Join(b, "\x00") {
		a, b = a2, b2
		counts["E-batch-args"]++
	}
	if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
		t.Errorf("rank %d: flux start differs\noperator: %q\nours:     %q", index, a, b)
	} else {
		counts["flux start argv equal"]++
	}
	for _, k := range []string{"STATE_DIR", "FLUX_OUTPUT_DIR", "FLUX_RC_EXTRA", "PYTHONPATH"} {
		opValue := op.startEnv[k]
		if k == "PYTHONPATH" && strings.HasPrefix(opValue, ":") && !strings.HasPrefix(ours.startEnv[k], ":") {
			// F-pythonpath-cwd: "${PYTHONPATH:-""}:..." starts with an empty entry, which puts
			// the working directory on Python's path.
			opValue = strings.TrimPrefix(opValue, ":")
			counts["F-pythonpath-cwd"]++
		}
		if k == "FLUX_RC_EXTRA" && index != 0 {
			// D-readiness: a worker's broker also runs the hook that marks it joined, the last
			// entry, after the operator's value and a colon (if it has one).
			before := opValue
			if before != "" {
				before += ":"
			}
			if hook, ok := strings.CutPrefix(ours.startEnv[k], before); ok && joinHookEntry.MatchString(hook) {
				opValue = ours.startEnv[k]
				counts["D-readiness"]++
			}
		}
		if opValue != ours.startEnv[k] {
			t.Errorf("rank %d: %s at flux start: operator %q, ours %q", index, k, op.startEnv[k], ours.startEnv[k])
		}
	}
}

// The sh -c script of batch mode's initial program: ours (D-failed-command), and the operator's,
// spelled as ours is with the flags passed as arguments (E-batch-args).
const (
	failedCommandBatch = `id=$(flux batch "$@" ./flux-job.batch) || exit 255; flux job status -e 255 "${id}"`
	operatorBatch      = `flux batch "$@" --flags waitable ./flux-job.batch && flux job wait --all`
)

// noJobCleanupEnv keeps flux-core's rc1 from pushing its cleanup commands (D-no-job-cleanup).
const noJobCleanupEnv = "FLUX_DISABLE_JOB_CLEANUP"

// normalizeStart: the broker options are a set (order of -S options does not matter to flux).
func normalizeStart(argv []string, name, job string) []string {
	var opts, rest []string
	for _, a := range argv {
		a = strings.ReplaceAll(a, job, "<job>")
		a = strings.ReplaceAll(a, name, "<job>")
		if strings.HasPrefix(a, "-S") {
			opts = append(opts, a)
		} else {
			rest = append(rest, a)
		}
	}
	sort.Strings(opts)
	return append(opts, rest...)
}

// inlineShArgs rewrites sh -c SCRIPT sh ARGS... into sh -c SCRIPT with "$@" replaced by the
// arguments, and runs of blanks in SCRIPT collapsed.
func inlineShArgs(argv []string) []string {
	i := slices.Index(argv, "-c")
	if i < 1 || argv[i-1] != "sh" || i+1 >= len(argv) {
		return argv
	}
	script := argv[i+1]
	if i+2 < len(argv) && argv[i+2] == "sh" {
		script = strings.ReplaceAll(script, `"$@"`, strings.Join(argv[i+3:], " "))
		argv = argv[:i+2]
	}
	out := slices.Clone(argv)
	out[i+1] = strings.Join(strings.Fields(script), " ")
	return out
}
