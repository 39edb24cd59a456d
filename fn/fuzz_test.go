package fn

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// FuzzRender runs the whole render (what `minicluster-fn render` does with one document) on
// fuzzed MiniClusters. It never panics; invalid input fails with error results that name a field;
// valid input gives manifests that decode strictly into their k8s.io/api types and pass the
// checks of tests/outputcheck with bash -n (trusting what the user wrote in a broker config or
// bursting host list: see outputcheck.Options). Shellcheck is left to the generators' tests: at
// about a second per run it would leave the fuzzer a handful of inputs in CI's time budget.
// Seeds: the examples, the corpus when present, and testdata/fuzz/FuzzRender (crashers stay there).
func FuzzRender(f *testing.F) {
	outputcheck.AddSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(doc)}).Read()
		if err != nil || len(nodes) != 1 || !IsMiniCluster(nodes[0]) {
			return // not one MiniCluster: FuzzDecode covers what the decoder says
		}
		text := nodes[0].MustString()
		rl := &framework.ResourceList{Items: nodes}
		var out bytes.Buffer
		err = Processor{Standalone: true}.WriteManifests(rl, &out)
		if err != nil {
			if !isResults(err) {
				t.Fatalf("render failed without results: %v", err)
			}
			for _, r := range rl.Results {
				if r.Severity == framework.Error && (r.Field == nil || r.Field.Path == "") && r.Message == "" {
					t.Errorf("error result without a field or message: %+v", r)
				}
			}
			return
		}
		mc, _, errs := outputcheck.Prepare([]byte(text))
		if len(errs) > 0 {
			t.Fatalf("render succeeded, but the MiniCluster is invalid: %v", errs)
		}
		objs, err := outputcheck.DecodeStrict(out.Bytes())
		if err != nil {
			t.Fatalf("output does not decode strictly: %v\n%s", err, out.Bytes())
		}
		// The scripts hold the user's shell code verbatim: they can only parse when it does.
		bash := userShellCodeParses(t, mc)
		for _, e := range outputcheck.Check(outputcheck.Manifests{MC: mc, Objects: objs}, outputcheck.Options{Bash: bash, TrustUserConfig: true}) {
			t.Error(e)
		}
	})
}

// userShellCodeParses tells whether every piece of shell code the user wrote, which the scripts
// insert as code (commands.* hooks, a sidecar's command, flux.submitCommand and optionFlags),
// passes bash -n on its own. (Render does not check them: see the hardening report.)
func userShellCodeParses(t *testing.T, mc *v1alpha2.MiniCluster) bool {
	t.Helper()
	code := []string{mc.Spec.Flux.SubmitCommand, mc.Spec.Flux.OptionFlags}
	for _, c := range mc.Spec.Containers {
		h := c.Commands
		code = append(code, h.Init, h.Pre, h.BrokerPre, h.WorkerPre, h.Post, h.ServicePre, h.Prefix)
		if !c.RunFlux {
			code = append(code, c.Command)
		}
	}
	for _, s := range code {
		cmd := exec.Command("/bin/bash", "-n")
		cmd.Stdin = strings.NewReader(s + "\n")
		if cmd.Run() != nil {
			return false
		}
	}
	return true
}
