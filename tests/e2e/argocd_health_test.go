package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestArgoCDJobHealth runs the health check of examples/argocd/argocd-cm-health-patch.yaml, as
// Argo CD runs it (the script is the body of a function of obj that returns a table of status and
// message), on the Jobs a MiniCluster's broker Job goes through, with Debian's Lua 5.3 (make deps).
// Argo CD runs it with gopher-lua, a Lua 5.1: the script uses nothing that differs between them.
func TestArgoCDJobHealth(t *testing.T) {
	lua, err := exec.LookPath("lua5.3")
	if err != nil {
		t.Skip("SKIPPED: lua5.3 is not installed (Debian package lua5.3; make deps installs it)")
	}
	var cm corev1.ConfigMap
	decodeStrict(t, "argocd-cm-health-patch.yaml", argoExample(t, "argocd-cm-health-patch.yaml"), &cm)
	script := cm.Data["resource.customizations.health.batch_Job"]
	if script == "" {
		t.Fatal("argocd-cm-health-patch.yaml has no resource.customizations.health.batch_Job")
	}
	for _, tc := range []struct {
		name, obj, want string
	}{
		{"queued by Kueue", `{metadata = {labels = {["kueue.x-k8s.io/queue-name"] = "team-a"}}, spec = {suspend = true},
			status = {conditions = {{type = "Suspended", status = "True", message = "Job suspended"}}}}`,
			"Progressing: queued by Kueue in LocalQueue team-a"},
		{"admitted by Kueue, running", `{metadata = {labels = {["kueue.x-k8s.io/queue-name"] = "team-a", ["minicluster-fn.dev/lifetime"] = "completes"}},
			spec = {suspend = false}, status = {active = 2, conditions = {{type = "Suspended", status = "False", message = "Job resumed"}}}}`,
			"Progressing: "},
		{"admitted by Kueue, until deleted, 1 of 2 joined", `{metadata = {labels = {["kueue.x-k8s.io/queue-name"] = "team-a", ["minicluster-fn.dev/lifetime"] = "until-deleted"}},
			spec = {suspend = false, parallelism = 2}, status = {ready = 1, conditions = {{type = "Suspended", status = "False"}}}}`,
			"Progressing: 1 of 2 brokers joined (pods Ready)"},
		{"until deleted, all joined", `{metadata = {labels = {["minicluster-fn.dev/lifetime"] = "until-deleted"}}, spec = {parallelism = 2}, status = {ready = 2}}`,
			"Healthy: 2 of 2 brokers joined (pods Ready)"},
		{"suspended by someone", `{metadata = {labels = {}}, spec = {suspend = true},
			status = {conditions = {{type = "Suspended", status = "True", message = "Job suspended"}}}}`,
			"Suspended: Job suspended"},
		{"complete", `{metadata = {}, spec = {}, status = {conditions = {{type = "Complete", status = "True", message = "Reached expected number of succeeded pods"}}}}`,
			"Healthy: Reached expected number of succeeded pods"},
		{"failed", `{metadata = {}, spec = {}, status = {conditions = {{type = "Failed", status = "True", message = "the command failed"}}}}`,
			"Degraded: the command failed"},
		{"created", `{metadata = {}, spec = {}}`, "Progressing: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			program := "local function health(obj)\n" + script + "\nend\n" +
				"local h = health(" + tc.obj + ")\nio.write(h.status .. \": \" .. (h.message or \"\"))\n"
			file := filepath.Join(t.TempDir(), "health.lua")
			if err := os.WriteFile(file, []byte(program), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(lua, file).CombinedOutput()
			if err != nil {
				t.Fatalf("lua5.3: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(tc.want) {
				t.Errorf("health %q, want %q", got, tc.want)
			}
		})
	}
}
