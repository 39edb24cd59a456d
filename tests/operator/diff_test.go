package operator

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// refusedByUs are inputs the operator accepts (the API server prunes or ignores the problem) and
// we refuse, each with the field our message must name. They are listed in the differences.
var refusedByUs = map[string]string{
	"corpus/elasticity/horizontal-autoscaler/v2-custom-metric/minicluster.yaml": "spec.containers[0].existingVolumes",
	"fields/refused-unknown-field.yaml":                                         "spec.flux.sizee",
	"fields/refused-duplicate-burst.yaml":                                       "spec.flux.bursting.clusters[1].name",
}

// verbose logs every classified difference (OPERATOR_DIFF_VERBOSE=1).
var verbose = os.Getenv("OPERATOR_DIFF_VERBOSE") != ""

// tally counts what the comparison found, for the table in the report.
type tally struct {
	files, refusedBoth, refusedByUs int
	objects, objectsEqual           int
	byKind                          map[kind]int
	byRule                          map[string]int
	tomlEqual, tomlFiles            int
}

func TestOperatorDiff(t *testing.T) {
	docs := differencesText(t)
	for _, ru := range rules {
		if ru.kind != equivalent && !strings.Contains(docs, "`"+ru.id+"`") {
			t.Errorf("rule %s (%s) is not listed in the differences from the operator", ru.id, ru.kind)
		}
	}
	tl := tally{byKind: map[kind]int{}, byRule: map[string]int{}}
	for _, in := range inputs(t) {
		t.Run(in.label, func(t *testing.T) {
			tl.files++
			op := runOracle(t, in.path)
			ours := runOurs(t, in.path)
			field, listed := refusedByUs[in.label]
			switch {
			case ours.code != 0 && len(op.objects) == 0:
				tl.refusedBoth++
				t.Logf("refused by both; ours: %s", ours.stderr)
				return
			case ours.code != 0:
				if !listed {
					t.Fatalf("we refuse what the operator accepts (not listed in refusedByUs):\n%s", ours.stderr)
				}
				if !strings.Contains(ours.stderr, field) {
					t.Fatalf("our message does not name %s:\n%s", field, ours.stderr)
				}
				tl.refusedByUs++
				t.Logf("refused by us only (listed), naming %s; operator pruned %v", field, op.pruned)
				return
			case listed:
				t.Fatalf("listed as refused by us, but rendered")
			case len(op.objects) == 0:
				t.Fatalf("the operator created nothing, we rendered:\n%s", op.stderr)
			}
			if len(op.pruned) > 0 {
				t.Fatalf("the API server prunes %v but we accepted the file", op.pruned)
			}
			name := op.objects[0].meta("ownerReferences").([]any)[0].(map[string]any)["name"].(string)
			compareFile(t, &tl, name, op.objects, ours.objects)
		})
	}
	report := tl.table()
	t.Log("\n" + report)
	if p := os.Getenv("OPERATOR_DIFF_REPORT"); p != "" {
		if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
}

func compareFile(t *testing.T, tl *tally, name string, opObjs, ourObjs []object) {
	t.Helper()
	opBy, ourBy := map[string]object{}, map[string]object{}
	for _, o := range opObjs {
		opBy[operatorRole(o)] = o
	}
	for _, o := range ourObjs {
		role := ourRole(o)
		// The keygen Job and its account are the design's one-off pod that makes the certificate
		// in the cluster (D-keygen); the operator's controller makes it in-process, so they have
		// no counterpart to compare with.
		if strings.HasPrefix(role, roleKeygen) || role == roleCurve {
			tl.byKind[deliberate]++
			if role == roleCurve && o.kind() == "Secret" {
				tl.byRule["D-curve-secret"]++
			} else {
				tl.byRule["D-keygen"]++
			}
			continue
		}
		ourBy[role] = o
	}
	roles := mapsKeys(opBy)
	sort.Strings(roles)
	for _, role := range roles {
		u, ok := ourBy[role]
		if !ok {
			t.Errorf("the operator creates a %s %s, we do not", role, opBy[role].name())
			continue
		}
		tl.objects++
		diffs := diffObjects(role, opBy[role], u)
		if len(diffs) == 0 {
			tl.objectsEqual++
		}
		for _, d := range diffs {
			ru := classify(d, name)
			if ru == nil {
				t.Errorf("unclassified difference: %s", d)
				continue
			}
			tl.byKind[ru.kind]++
			tl.byRule[ru.id]++
			if verbose {
				t.Logf("%s %s: %s", ru.kind, ru.id, d)
			}
		}
		if role == roleEntrypoint {
			compareBrokerConfig(t, tl, name, opBy[role], u, opBy[roleHeadless])
		}
	}
	for role := range ourBy {
		if _, ok := opBy[role]; !ok {
			t.Errorf("we create a %s %s, the operator does not", role, ourBy[role].name())
		}
	}
}

func mapsKeys(m map[string]object) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

var operatorBrokerConfig = regexp.MustCompile(`(?s)cat <<EOT >> \$\{installRoot\}/etc/flux/config/broker\.toml\n(.*?)\nEOT\n`)

// compareBrokerConfig compares broker.toml as TOML: the operator's from its init script, ours with
// the names flux-init.sh substitutes at run time set to what the operator bakes in.
func compareBrokerConfig(t *testing.T, tl *tally, name string, opCM, ourCM, opService object) {
	t.Helper()
	opData, _ := opCM["data"].(map[string]any)
	ourData, _ := ourCM["data"].(map[string]any)
	m := operatorBrokerConfig.FindStringSubmatch(fmt.Sprint(opData["flux-view"]))
	if m == nil {
		t.Errorf("no broker.toml in the operator's init script")
		return
	}
	svc := opService.name()
	ours := strings.NewReplacer("@JOB_NAME@", name, "@DNS_SUFFIX@", svc+".default.svc.cluster.local").Replace(fmt.Sprint(ourData["broker.toml"]))
	var a, b map[string]any
	tl.tomlFiles++
	if err := toml.Unmarshal([]byte(m[1]), &a); err != nil {
		// The operator's lead-broker host block does not parse (int32 port formatted with %s).
		if strings.Contains(m[1], "%!s(") {
			tl.byKind[bugFixed]++
			tl.byRule["F-leadbroker-hosts"]++
			return
		}
		t.Errorf("the operator's broker.toml does not parse: %v\n%s", err, m[1])
		return
	}
	if err := toml.Unmarshal([]byte(ours), &b); err != nil {
		t.Errorf("our broker.toml does not parse: %v\n%s", err, ours)
		return
	}
	mainEntry := joinMainBrokerEntry(b)
	diffs := diffObjects("broker.toml", a, b)
	if len(diffs) == 0 && !mainEntry {
		tl.tomlEqual++
	}
	if mainEntry {
		tl.byKind[deliberate]++
		tl.byRule["D-main-broker-entry"]++
	}
	for _, d := range diffs {
		ru := classifyTOML(d)
		if ru == "" {
			t.Errorf("unclassified broker.toml difference: %s", d)
			continue
		}
		tl.byKind[kindOf(ru)]++
		tl.byRule[ru]++
	}
}

// kindOf is the kind of a broker.toml rule, by its prefix (E-, D-, F-).
func kindOf(id string) kind {
	switch id[0] {
	case 'E':
		return equivalent
	case 'F':
		return bugFixed
	}
	return deliberate
}

// classifyTOML: broker.toml differences that are deliberate.
func classifyTOML(d leafDiff) string {
	switch {
	case d.path == ".bootstrap.default_connect":
		return "D-dns-runtime"
	case d.operator == nil && (d.path == ".modules.alternatives.sched" || d.path == ".modules.alternatives.feasibility"):
		// flux.scheduler.simple: flux modprobe is told to choose sched-simple, also where Fluxion
		// is installed in flux-core's prefix (the operator only leaves FLUX_RC_EXTRA unset).
		return "D-simple-scheduler"
	case strings.HasPrefix(d.path, ".bootstrap.hosts[") && strings.Contains(fmt.Sprint(d.operator), "%!s("):
		// The lead-broker block: an int32 port formatted with %s, an argument missing.
		return "F-leadbroker-hosts"
	case regexp.MustCompile(`^\.bootstrap\.hosts\[\d+\]\.host$`).MatchString(d.path):
		op, ours := fmt.Sprint(d.operator), fmt.Sprint(d.ours)
		if slices.Equal(expandHostlist(op), expandHostlist(ours)) {
			return "E-hostlist-spelling"
		}
		// Unnamed bursting clusters: the operator's defaulting never applied (",-[0-1]").
		if strings.Contains(op, ",-[") {
			return "F-burst-names"
		}
	}
	return ""
}

// joinMainBrokerEntry undoes, in our parsed broker.toml, the main broker's entry of its own: a
// first bootstrap.hosts entry "<job>-0" whose connect is the default one spelled out
// ("tcp://<job>-0.<domain>:<port>", default_connect's "tcp://%h.<domain>:%p" for that host),
// joined to the next entry's hosts, as the operator writes one entry. It reports whether it did;
// what is left is then compared as before (E-hostlist-spelling).
func joinMainBrokerEntry(cfg map[string]any) bool {
	boot, _ := cfg["bootstrap"].(map[string]any)
	hosts, _ := boot["hosts"].([]any)
	if len(hosts) == 0 {
		return false
	}
	first, _ := hosts[0].(map[string]any)
	host, _ := first["host"].(string)
	connect, _ := first["connect"].(string)
	def, _ := boot["default_connect"].(string)
	port := fmt.Sprint(boot["default_port"])
	if host == "" || !strings.HasSuffix(host, "-0") || len(first) != 2 ||
		connect != strings.NewReplacer("%h", host, "%p", port).Replace(def) {
		return false
	}
	joined := map[string]any{"host": host}
	rest := hosts[1:]
	if len(rest) > 0 {
		if next, ok := rest[0].(map[string]any); ok && len(next) == 1 {
			joined["host"] = host + "," + fmt.Sprint(next["host"])
			rest = rest[1:]
		}
	}
	boot["hosts"] = append([]any{joined}, rest...)
	return true
}

// expandHostlist expands the host list forms both sides write: prefix-[a-b], prefix-[a] and
// plain names, comma-separated at the top level.
func expandHostlist(list string) []string {
	var hosts []string
	for _, part := range regexp.MustCompile(`[^,\[]+(?:\[[^\]]*\])?`).FindAllString(list, -1) {
		m := regexp.MustCompile(`^(.*)\[(\d+)(?:-(\d+))?\]$`).FindStringSubmatch(part)
		if m == nil {
			hosts = append(hosts, part)
			continue
		}
		lo, hi := atoi(m[2]), atoi(m[2])
		if m[3] != "" {
			hi = atoi(m[3])
		}
		for i := lo; i <= hi; i++ {
			hosts = append(hosts, fmt.Sprintf("%s%d", m[1], i))
		}
	}
	slices.Sort(hosts)
	return hosts
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func (tl tally) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| files compared | refused by both | refused by us only | objects compared | objects equal | broker.toml equal |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d of %d |\n\n", tl.files, tl.refusedBoth, tl.refusedByUs, tl.objects, tl.objectsEqual, tl.tomlEqual, tl.tomlFiles)
	fmt.Fprintf(&b, "| kind | differences |\n|---|---|\n")
	for _, k := range []kind{equivalent, deliberate, bugFixed} {
		fmt.Fprintf(&b, "| %s | %d |\n", k, tl.byKind[k])
	}
	ids := make([]string, 0, len(tl.byRule))
	for id := range tl.byRule {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(&b, "\n| rule | differences |\n|---|---|\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "| %s | %d |\n", id, tl.byRule[id])
	}
	return b.String()
}

// differencesText is the documented list of differences from the operator: the delimited section
// of docs/differences-from-operator.md, or of README.md before the docs split.
func differencesText(t *testing.T) string {
	t.Helper()
	for _, f := range []string{"docs/differences-from-operator.md", "README.md"} {
		data, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			continue
		}
		s := string(data)
		begin, end := strings.Index(s, "<!-- operator-diff:begin -->"), strings.Index(s, "<!-- operator-diff:end -->")
		if begin >= 0 && end > begin {
			return s[begin:end]
		}
	}
	t.Fatal("no <!-- operator-diff:begin --> ... end section in docs/differences-from-operator.md or README.md")
	return ""
}
