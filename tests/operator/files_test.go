package operator

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// fileState is one entry of a tree the scripts write, as tar records it.
type fileState struct {
	typ      byte // tar.TypeReg, tar.TypeDir, tar.TypeSymlink
	mode     int64
	uid, gid int
	link     string
	content  []byte
}

func (f *fileState) String() string {
	if f == nil {
		return absent
	}
	typ := map[byte]string{tar.TypeReg: "file", tar.TypeDir: "directory", tar.TypeSymlink: "symlink"}[f.typ]
	if typ == "" {
		typ = fmt.Sprintf("tar type %q", f.typ)
	}
	return fmt.Sprintf("%s, mode %04o, owner %d:%d", typ, f.mode, f.uid, f.gid)
}

// readTree reads a tar of the sandbox's writable trees (mnt, tmp, opt) into absolute paths.
func readTree(path string) (map[string]*fileState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tree := map[string]*fileState{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tree, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		st := &fileState{typ: h.Typeflag, mode: h.Mode & 0o7777, uid: h.Uid, gid: h.Gid, link: h.Linkname}
		if h.Typeflag == tar.TypeReg {
			if st.content, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
		tree["/"+strings.TrimSuffix(h.Name, "/")] = st
	}
}

// writtenFiles is what changed between two snapshots: entries created or changed (type, mode,
// owner, link target or content), and removed ones (nil). Times are not compared.
func writtenFiles(before, after map[string]*fileState) map[string]*fileState {
	out := map[string]*fileState{}
	for p, a := range after {
		b, ok := before[p]
		if !ok || b.typ != a.typ || b.mode != a.mode || b.uid != a.uid || b.gid != a.gid || b.link != a.link || !bytes.Equal(b.content, a.content) {
			out[p] = a
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out[p] = nil
		}
	}
	return out
}

// fileDiff is one difference between the files both sides wrote, at a path with the names
// normalized (<job>) and an aspect: exists, type, mode, owner, content or content <detail>.
type fileDiff struct {
	path, aspect   string
	operator, ours string
}

func (d fileDiff) String() string {
	return fmt.Sprintf("%s (%s): operator %s, ours %s", d.path, d.aspect, showText(d.operator), showText(d.ours))
}

// absent is a fileDiff's value of a path that one side did not write.
const absent = "(absent)"

func showText(s string) string {
	if s == absent {
		return s
	}
	return show(s)
}

// fileRule classifies differences of written files, as rules classifies objects' differences.
type fileRule struct {
	id     string
	kind   kind
	path   *regexp.Regexp
	aspect *regexp.Regexp
	value  func(d fileDiff) bool // optional extra condition
}

func fr(id string, k kind, path, aspect string, value func(d fileDiff) bool) fileRule {
	return fileRule{id: id, kind: k, path: regexp.MustCompile("^(?:" + path + ")$"), aspect: regexp.MustCompile("^(?:" + aspect + ")$"), value: value}
}

func onlyOperator(d fileDiff) bool { return d.ours == absent }
func onlyOurs(d fileDiff) bool     { return d.operator == absent }

// ownedByNonRoot: an entry (fileState.String) that a user other than root owns.
func ownedByNonRoot(entry string) bool {
	return entry != absent && !strings.HasSuffix(entry, "owner 0:0")
}

// emptyEntryFirst: the operator's search path is ours with an empty first entry (":...").
func emptyEntryFirst(d fileDiff) bool { return d.operator == ":"+d.ours }

var fileRules = []fileRule{
	// broker.toml, by the rules of its comparison as part of the entrypoint ConfigMap.
	fr("D-dns-runtime", deliberate, `.*/etc/flux/config/broker\.toml`, `content toml D-dns-runtime`, nil),
	fr("D-main-broker-entry", deliberate, `.*/etc/flux/config/broker\.toml`, `content toml D-main-broker-entry`, nil),
	// The main broker's name, written by the init script for the workers' broker script.
	fr("D-main-broker-entry", deliberate, `.*/config/run/main-broker`, `.*`, onlyOurs),
	fr("D-simple-scheduler", deliberate, `.*/etc/flux/config/broker\.toml`, `content toml D-simple-scheduler`, nil),
	fr("E-hostlist-spelling", equivalent, `.*/etc/flux/config/broker\.toml`, `content toml E-hostlist-spelling`, nil),
	fr("F-leadbroker-hosts", bugFixed, `.*/etc/flux/config/broker\.toml`, `content toml F-leadbroker-hosts`, nil),
	fr("F-burst-names", bugFixed, `.*/etc/flux/config/broker\.toml`, `content toml F-burst-names`, nil),
	// The host list file (flux R encode --hosts): unnamed bursting clusters, as in broker.toml;
	// with a lead broker and flux.bursting.hostlist, ours lists the lead broker first, as
	// broker.toml does (the operator's omits it, so R's ranks would not match the brokers').
	fr("E-hostlist-spelling", equivalent, `.*/etc/flux/system/hostlist`, `content hostlist spelling`, nil),
	fr("F-burst-names", bugFixed, `.*/etc/flux/system/hostlist`, `content`, func(d fileDiff) bool { return strings.Contains(d.operator, ",-[") }),
	fr("F-leadbroker-hosts", bugFixed, `.*/etc/flux/system/hostlist`, `content`, func(d fileDiff) bool {
		lead, rest, ok := strings.Cut(d.ours, ",")
		return ok && !strings.Contains(lead, "[") && rest == d.operator
	}),
	fr("E-blank-lines", equivalent, `/tmp/flux-job\.batch`, `content blank lines`, nil),
	// A failed command fails the Job: the batch script ends by counting its failed jobs.
	fr("D-failed-command", deliberate, `/tmp/flux-job\.batch`, `content failed jobs counted`, nil),
	// The marker the broker script writes once its broker runs, for the startupProbe.
	fr("D-readiness", deliberate, `.*/config/run/joined`, `exists`, onlyOurs),
	// A worker's broker writes that marker itself: the hook its rc1 runs (FLUX_RC_EXTRA).
	fr("D-readiness", deliberate, `.*/config/run/rc(?:/rc1\.d(?:/minicluster-fn-joined)?)?`, `exists`, onlyOurs),
	// A broker container with runAsUser: the operator's broker script cannot write the
	// certificate and R into the config tree its (root) init container made; ours' init
	// container hands those directories to the broker's user.
	fr("F-non-root-broker", bugFixed, `.*/config/(?:curve|run|run/flux|var/lib/flux|etc/flux/system(?:/.*)?)`, `owner`, func(d fileDiff) bool {
		return d.operator == "0:0" && d.ours != "0:0"
	}),
	fr("F-non-root-broker", bugFixed, `.*/config/(?:curve|curve/curve\.cert|etc/flux/system/R)`, `exists`, func(d fileDiff) bool {
		return onlyOurs(d) && ownedByNonRoot(d.ours)
	}),
	fr("F-non-root-broker", bugFixed, `/tmp/R`, `exists`, func(d fileDiff) bool { return onlyOperator(d) && ownedByNonRoot(d.operator) }),
	// The operator's init script creates config/etc/curve, which nothing uses (the certificate
	// is copied to config/curve).
	fr("F-unused-curve-dir", bugFixed, `.*/config/etc/curve`, `exists`, onlyOperator),
	// flux-view.sh: the search paths without an empty first entry (the working directory).
	fr("F-pythonpath-cwd", bugFixed, `.*/flux-view\.sh`, `content PYTHONPATH`, emptyEntryFirst),
	fr("F-library-path-cwd", bugFixed, `.*/flux-view\.sh`, `content LD_LIBRARY_PATH`, emptyEntryFirst),
	// flux-connect.sh: the operator's sources "${viewbase}/flux-view.sh", a variable that is
	// unset wherever a user runs it; ours names the file.
	fr("F-flux-connect-viewbase", bugFixed, `.*/flux-connect\.sh`, `content`, func(d fileDiff) bool {
		viewbase := filepath.Dir(d.path)
		return strings.Contains(d.operator, ". ${viewbase}/") &&
			strings.ReplaceAll(d.operator, "${viewbase}", viewbase) == strings.ReplaceAll(d.ours, `"`, "")
	}),
}

// classifyFile returns the rule that explains d, or nil.
func classifyFile(d fileDiff) *fileRule {
	for i := range fileRules {
		ru := &fileRules[i]
		if ru.path.MatchString(d.path) && ru.aspect.MatchString(d.aspect) && (ru.value == nil || ru.value(d)) {
			return ru
		}
	}
	return nil
}

// fileTally counts the files both sides wrote, for the summary line and the report's table.
type fileTally struct {
	compared, equal int
	byKind          map[kind]int // files by the strongest kind of their differences
	byRule          map[string]int
}

func (ft fileTally) String() string {
	return fmt.Sprintf("files written: %d compared, %d equal, %d equivalent, %d deliberate, %d operator bug fixed",
		ft.compared, ft.equal, ft.byKind[equivalent], ft.byKind[deliberate], ft.byKind[bugFixed])
}

// compareFiles compares what both runs of one rank wrote, path by path.
func compareFiles(t *testing.T, ft *fileTally, index int, name, job string, op, ours sandboxRun) {
	t.Helper()
	names := strings.NewReplacer(job, "<job>", name, "<job>")
	norm := func(files map[string]*fileState) map[string]*fileState {
		out := map[string]*fileState{}
		for p, f := range files {
			if f != nil && f.content != nil {
				c := *f
				c.content = []byte(names.Replace(string(f.content)))
				f = &c
			}
			out[names.Replace(p)] = f
		}
		return out
	}
	a, b := norm(op.files), norm(ours.files)
	paths := slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string]*fileState{a, b} {
			for p := range m {
				if !seen[p] {
					seen[p] = true
					if !yield(p) {
						return
					}
				}
			}
		}
	})
	if f := ours.files["/mnt/flux/config/curve/curve.cert"]; f == nil {
		t.Errorf("rank %d: our broker script did not write /mnt/flux/config/curve/curve.cert", index)
	} else if f.mode&0o077 != 0 {
		t.Errorf("rank %d: our /mnt/flux/config/curve/curve.cert is mode %04o: group or other can read the secret key", index, f.mode)
	}
	for _, p := range paths {
		ft.compared++
		diffs := diffFile(t, p, a[p], b[p])
		if len(diffs) == 0 {
			ft.equal++
			continue
		}
		strongest := equivalent
		for _, d := range diffs {
			ru := classifyFile(d)
			if ru == nil {
				t.Errorf("rank %d: unclassified difference of the files written: %s", index, d)
				strongest = "unclassified"
				continue
			}
			ft.byRule[ru.id]++
			if strongest != "unclassified" && (ru.kind == bugFixed || (ru.kind == deliberate && strongest == equivalent)) {
				strongest = ru.kind
			}
			if verbose {
				t.Logf("rank %d: %s %s: %s", index, ru.kind, ru.id, d)
			}
		}
		ft.byKind[strongest]++
	}
}

// diffFile compares one path's entry of both sides: existence, type, mode, owner, and content
// by what it means for the files whose spelling may differ.
func diffFile(t *testing.T, p string, op, ours *fileState) []fileDiff {
	t.Helper()
	if op == nil || ours == nil {
		if op == nil && ours == nil {
			return nil
		}
		return []fileDiff{{path: p, aspect: "exists", operator: op.String(), ours: ours.String()}}
	}
	if op.typ != ours.typ {
		return []fileDiff{{path: p, aspect: "type", operator: op.String(), ours: ours.String()}}
	}
	var diffs []fileDiff
	if op.mode != ours.mode {
		diffs = append(diffs, fileDiff{path: p, aspect: "mode", operator: fmt.Sprintf("%04o", op.mode), ours: fmt.Sprintf("%04o", ours.mode)})
	}
	if op.uid != ours.uid || op.gid != ours.gid {
		diffs = append(diffs, fileDiff{path: p, aspect: "owner", operator: fmt.Sprintf("%d:%d", op.uid, op.gid), ours: fmt.Sprintf("%d:%d", ours.uid, ours.gid)})
	}
	if op.link != ours.link {
		diffs = append(diffs, fileDiff{path: p, aspect: "link", operator: op.link, ours: ours.link})
	}
	if op.typ == tar.TypeReg {
		diffs = append(diffs, diffContent(t, p, op.content, ours.content)...)
	}
	return diffs
}

// diffContent compares file contents: broker.toml as TOML, the hostlist as the hosts it lists,
// flux-view.sh as the environment it exports, anything else byte for byte.
func diffContent(t *testing.T, p string, op, ours []byte) []fileDiff {
	t.Helper()
	if bytes.Equal(op, ours) {
		return nil
	}
	switch filepath.Base(p) {
	case "broker.toml":
		var a, b map[string]any
		errA, errB := toml.Unmarshal(op, &a), toml.Unmarshal(ours, &b)
		if errA != nil || errB != nil {
			return []fileDiff{{path: p, aspect: "content toml", operator: fmt.Sprint(errA), ours: fmt.Sprint(errB)}}
		}
		var diffs []fileDiff
		if joinMainBrokerEntry(b) {
			diffs = append(diffs, fileDiff{path: p, aspect: "content toml D-main-broker-entry", operator: "one entry", ours: "the main broker's entry of its own"})
		}
		for _, d := range diffObjects("broker.toml", a, b) {
			aspect := "content toml " + d.path
			if id := classifyTOML(d); id != "" {
				aspect = "content toml " + id
			}
			diffs = append(diffs, fileDiff{path: p, aspect: aspect, operator: fmt.Sprint(d.operator), ours: fmt.Sprint(d.ours)})
		}
		return diffs
	case "hostlist":
		a, b := strings.TrimSpace(string(op)), strings.TrimSpace(string(ours))
		if slices.Equal(expandHostlist(a), expandHostlist(b)) {
			return []fileDiff{{path: p, aspect: "content hostlist spelling", operator: a, ours: b}}
		}
	case "flux-job.batch":
		// Blank lines mean nothing to bash (the operator's template leaves some).
		if slices.Equal(nonBlankLines(op), nonBlankLines(ours)) {
			return []fileDiff{{path: p, aspect: "content blank lines", operator: string(op), ours: string(ours)}}
		}
		// D-failed-command: ours goes on where the operator's ends, counting the jobs that failed
		// (flux job wait) into its exit status.
		a, b := nonBlankLines(op), nonBlankLines(ours)
		if len(b) > len(a) && slices.Equal(a, b[:len(a)]) && b[len(a)] == "failed=0" && strings.HasPrefix(b[len(b)-1], "exit $((failed") {
			return []fileDiff{{path: p, aspect: "content failed jobs counted", operator: string(op), ours: string(ours)}}
		}
	case "flux-view.sh":
		a, b := sourcedEnv(t, op), sourcedEnv(t, ours)
		var diffs []fileDiff
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range a {
				yield(k)
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					yield(k)
				}
			}
		}) {
			av, aok := a[k]
			bv, bok := b[k]
			if !aok {
				av = absent
			}
			if !bok {
				bv = absent
			}
			if av != bv {
				diffs = append(diffs, fileDiff{path: p, aspect: "content " + k, operator: av, ours: bv})
			}
		}
		return diffs
	}
	return []fileDiff{{path: p, aspect: "content", operator: string(op), ours: string(ours)}}
}

func nonBlankLines(text []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(text), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// sourcedEnv is the environment that a shell has after sourcing script in an empty environment.
func sourcedEnv(t *testing.T, script []byte) map[string]string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "env.sh")
	if err := os.WriteFile(f, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", "--norc", "--noprofile", "-c", `. "$1" > /dev/null 2>&1; env -0`, "bash", f)
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sourcing %s: %v", f, err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "PWD" && k != "SHLVL" && k != "_" {
			env[k] = v
		}
	}
	return env
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
