package generators

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// optionHeader starts every MiniCluster of the option table.
const optionHeader = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
`

// optionCases are combinations of options whose output the checks of tests/outputcheck must
// pass: each a MiniCluster after optionHeader (metadata continues there).
var optionCases = map[string]string{
	"interactive": `spec:
  size: 3
  maxSize: 6
  interactive: true
  containers: [{image: ubuntu:noble, workingDir: /home/flux}]`,
	"no-command": `spec:
  containers: [{image: ubuntu:noble}]`,
	"batch": `spec:
  size: 2
  logging: {quiet: true}
  containers:
    - image: ubuntu:noble
      batch: true
      logs: /tmp/out dir
      command: |
        echo "hello $USER"
        echo 'it''s' && hostname
        MINICLUSTER_FN_EOF
      commands: {post: "ls /tmp/out\\ dir"}`,
	"batch-raw": `spec:
  size: 2
  containers:
    - {image: ubuntu:noble, batch: true, batchRaw: true, command: "flux submit -N 2 hostname\nflux queue idle\n"}`,
	"launcher": `spec:
  size: 2
  containers: [{image: ubuntu:noble, launcher: true, workingDir: /workflow, command: "snakemake --cores 1 --flux"}]`,
	"logging": `spec:
  size: 2
  logging: {strict: true, timed: true, debug: true, zeromq: true}
  flux: {logLevel: 7}
  containers: [{image: ubuntu:noble, command: "echo hello world"}]`,
	"quiet": `spec:
  logging: {quiet: true}
  containers: [{image: ubuntu:noble, command: "echo hello world", commands: {init: echo init, pre: echo pre}}]`,
	"bursting-clusters": `spec:
  size: 2
  maxSize: 5
  flux: {bursting: {clusters: [{name: burst-0, size: 3}, {name: burst-1, size: 1}]}}
  containers: [{image: ubuntu:noble, command: flux resource list}]`,
	"bursting-lead-broker": `  annotations: {minicluster-fn.dev/job-naming: stable}
spec:
  size: 2
  flux:
    bursting:
      leadBroker: {address: 24.123.50.21, name: lead, size: 4, port: 30093}
      clusters: [{name: flux-sample, size: 2}]
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"bursting-hostlist": `  annotations: {minicluster-fn.dev/job-naming: stable}
spec:
  size: 2
  flux: {bursting: {hostlist: "flux-sample-[0-1],remote-[0-7]"}}
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"size-one": `spec:
  size: 1
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"archive": `spec:
  archive: {path: "/state/my archive.tar.gz"}
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"hooks": `spec:
  size: 4
  minSize: 2
  maxSize: 6
  tasks: 8
  containers:
    - image: ubuntu:noble
      command: python3 -c "import os; print('it\'s', os.environ['HOME'])" "$HOME" '$NOT_EXPANDED'
      commands:
        prefix: singularity exec --bind /data app.sif
        init: |
          echo init one
          export A="two words"
        pre: mkdir -p /tmp/app-data
        brokerPre: echo only the main broker
        workerPre: echo only workers
        post: echo "finished on $(hostname)"`,
	"sidecars": `spec:
  size: 2
  flux: {noWaitSocket: true}
  containers:
    - {image: ubuntu:noble, runFlux: true, command: sleep 200}
    - image: ubuntu:noble
      name: queue
      command: flux proxy ${fluxsocket} flux jobs -a
      commands: {servicePre: echo preparing, init: export QUEUE=1, post: echo finished}
    - {image: nginx, name: nginx, noWrapEntrypoint: true, ports: [80, 443]}
    - image: ubuntu:noble
      name: scripted
      commands:
        script: |
          #!/bin/bash
          echo "socket is $fluxsocket"
          flux proxy "$fluxsocket" flux resource list`,
	"services": `spec:
  services:
    - {name: registry, image: registry, ports: [5000], volumes: {data: {emptyDir: true, path: /data}}}
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"pod-options": `spec:
  size: 2
  pod:
    serviceAccountName: my-app
    automountServiceAccountToken: true
    labels: {team: a}
    annotations: {note: x}
    nodeSelector: {disk: ssd}
    nodeAffinity: {zone: [a, b]}
    runtimeClassName: kata
    resources: {cpu: "1"}
    restartPolicy: Never
    schedulerName: fluence
    securityContext: {fsGroup: 1000, runAsUser: 1000, runAsNonRoot: true}
    tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]
  jobLabels: {kueue.x-k8s.io/queue-name: q}
  network: {disableAffinity: true, headlessName: flux-net}
  containers:
    - image: ubuntu:noble
      command: hostname
      environment: {B: "two words", A: "it's $literal"}
      secrets: {TOKEN: {name: s, key: k}}
      imagePullSecret: regcred
      securityContext: {privileged: true}
      lifeCycle: {postStartExec: "echo started > /tmp/x", preStopExec: sleep 5}
      volumes:
        data: {claimName: data, path: /data}
        cfg: {configMapName: cfg, path: /etc/cfg, items: {a: a.conf}}
        scratch: {emptyDir: true, emptyDirMedium: memory, emptyDirSizeLimit: 1Gi}
        host: {hostPath: /mnt, path: /mnt/host, readOnly: true}`,
	"flux-options": `spec:
  size: 3
  flux:
    topology: kary:2
    connectTimeout: 10s
    optionFlags: --exclusive -o cpu-affinity=per-task
    submitCommand: flux run
    wrap: strace,-e,network
    completeWorkers: true
    disableSocket: true
    scheduler: {simple: true, queuePolicy: easy}
    environment: {ZED: last, A_VAR: "it's $literal", MIDDLE: two words}
    container: {mountPath: /opt/flux, pythonPath: /opt/flux/view/lib/python3.11/site-packages, workingDir: /tmp}
    minimalService: true
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"view-disabled": `spec:
  flux: {container: {disable: true, image: ubuntu:focal}}
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"stable-naming": `  annotations: {minicluster-fn.dev/job-naming: stable, minicluster-fn.dev/keygen-image: registry.example/keygen:v1}
spec:
  size: 2
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"inline-curve-cert": `spec:
  flux:
    curveCert: |
      metadata
          name = "flux-sample"
      curve
          public-key = "c}NG4WENO2G^QC(hmSa^X{2e@*[:Jsy-?4E+0hm&"
          secret-key = "2>z28r<BA2.pj0i)fwwlZvr}a!@d0dLl>ycW$eWI"
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"curve-secret": `  annotations: {minicluster-fn.dev/curve-secret: my-cert}
spec:
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"curve-kind-configmap": `  annotations: {minicluster-fn.dev/curve-kind: ConfigMap}
spec:
  size: 2
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"inline-curve-cert-configmap": `  annotations: {minicluster-fn.dev/curve-kind: ConfigMap}
spec:
  flux:
    curveCert: |
      metadata
          name = "flux-sample"
      curve
          public-key = "c}NG4WENO2G^QC(hmSa^X{2e@*[:Jsy-?4E+0hm&"
          secret-key = "2>z28r<BA2.pj0i)fwwlZvr}a!@d0dLl>ycW$eWI"
  containers: [{image: ubuntu:noble, command: hostname}]`,
	"custom-broker-config": `  annotations: {minicluster-fn.dev/job-naming: stable}
spec:
  size: 2
  flux:
    brokerConfig: |
      [bootstrap]
      curve_cert = "/mnt/flux/config/curve/curve.cert"
      default_port = 8050
      default_bind = "tcp://eth0:%p"
      default_connect = "tcp://%h.flux-sample:%p"
      hosts = [{ host = "flux-sample-[0-1]" }]
  containers: [{image: ubuntu:noble, command: hostname}]`,
}

// brokenInputs are inputs that are wrong in themselves (with the operator too), with the one
// finding the checks must report for each; render warns about them.
var brokenInputs = map[string]string{
	// Its brokerConfig points curve_cert at /mnt/flux/view/curve/curve.cert, where neither the
	// operator nor we put the certificate (both mount it under /flux_operator_curve).
	"corpus/tests/custom-config/minicluster.yaml": "bootstrap.curve_cert is",
	"entrypoint/custom-config":                    "bootstrap.curve_cert is", // the same brokerConfig
	// With a lead broker, the host list is the operator's (its generateHostlist): rank 0
	// is the lead broker's address and the lead's pods 1… follow, so this cluster's pod 0, which
	// takes the lead broker's name, is not in it.
	"entrypoint/leadbroker": "hostname flux-sample-0 of pod 0 of Job/flux-sample is not in bootstrap.hosts",
}

func init() {
	optionCases["bursting-lead-broker-hash-naming"] = strings.Replace(optionCases["bursting-lead-broker"],
		"  annotations: {minicluster-fn.dev/job-naming: stable}\n", "", 1)
}

// checkedSet is the output of one MiniCluster, ready for outputcheck.
type checkedSet struct {
	name string
	m    outputcheck.Manifests
}

func generateSet(t *testing.T, name string, doc []byte) (checkedSet, bool) {
	t.Helper()
	mc, opts, errs := outputcheck.Prepare(doc)
	if len(errs) > 0 {
		return checkedSet{}, false
	}
	objs, _, err := Generate(mc, opts)
	if err != nil {
		t.Errorf("%s: Generate: %v", name, err)
		return checkedSet{}, false
	}
	var robjs []runtime.Object
	for _, o := range objs {
		robjs = append(robjs, o)
	}
	return checkedSet{name: name, m: outputcheck.Manifests{MC: mc, Objects: robjs}}, true
}

// checkedSets are the outputs of every example, every corpus file (when present), every
// entrypoint test case and every option combination.
func checkedSets(t *testing.T) []checkedSet {
	t.Helper()
	var sets []checkedSet
	examples, err := outputcheck.Examples()
	if err != nil || len(examples) == 0 {
		t.Fatalf("examples: %v (found %d)", err, len(examples))
	}
	for _, in := range examples {
		s, ok := generateSet(t, "examples/"+in.Name, in.Doc)
		if !ok {
			t.Errorf("examples/%s does not render", in.Name)
			continue
		}
		sets = append(sets, s)
	}
	corpus, err := outputcheck.Corpus()
	switch {
	case errors.Is(err, outputcheck.ErrNoCorpus):
		t.Logf("corpus files not checked: %v", err)
	case err != nil:
		t.Fatal(err)
	}
	for _, in := range corpus {
		// Corpus files that do not validate are tested for their messages in tests/e2e.
		if s, ok := generateSet(t, "corpus/"+in.Name, in.Doc); ok {
			sets = append(sets, s)
		}
	}
	if corpus != nil && len(sets)-len(examples) < 30 {
		t.Errorf("only %d of %d corpus files render", len(sets)-len(examples), len(corpus))
	}
	for _, name := range slices.Sorted(maps.Keys(optionCases)) {
		s, ok := generateSet(t, "options/"+name, []byte(optionHeader+optionCases[name]+"\n"))
		if !ok {
			_, _, errs := outputcheck.Prepare([]byte(optionHeader + optionCases[name] + "\n"))
			t.Fatalf("option case %s is invalid: %v", name, errs)
		}
		sets = append(sets, s)
	}
	for _, c := range entrypointCases() {
		mc := defaulted(t, c.mc())
		mc.Namespace = "" // testNamespace is only for the namespace-agnostic test
		opts, errs := mc.ParseOptions()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		objs, _, err := Generate(mc, opts)
		if err != nil {
			t.Fatal(err)
		}
		var robjs []runtime.Object
		for _, o := range objs {
			robjs = append(robjs, o)
		}
		sets = append(sets, checkedSet{name: "entrypoint/" + c.name, m: outputcheck.Manifests{MC: mc, Objects: robjs}})
	}
	return sets
}

// TestOutputChecks: the output for every input passes bash -n, the broker config and host list
// checks, least privilege and certificate hygiene; then shellcheck over every script at once.
func TestOutputChecks(t *testing.T) {
	t.Parallel()
	sets := checkedSets(t)
	scripts := map[string]string{}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			errs := outputcheck.Check(s.m, outputcheck.Options{Bash: true})
			if want, known := brokenInputs[s.name]; known {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
					t.Errorf("want exactly the finding %q, got %v", want, errs)
				}
				return
			}
			for _, e := range errs {
				t.Error(e)
			}
		})
		for k, v := range outputcheck.Scripts(s.m.Objects) {
			scripts[s.name+": "+k] = v
		}
	}
	t.Run("shellcheck", func(t *testing.T) {
		findings, err := outputcheck.Shellcheck(scripts)
		if err != nil {
			t.Skipf("skipping shellcheck of %d generated scripts: %v", len(scripts), err)
		}
		for _, f := range findings {
			t.Error(f)
		}
	})
}

// TestRBACRulesAcrossInputs enumerates every RBAC rule any input's output grants: exactly the
// keygen pre-step's rights for the kind of certificate object it creates, and those only where the
// keygen Job is generated. No input grants any right to read a Secret.
func TestRBACRulesAcrossInputs(t *testing.T) {
	t.Parallel()
	granted := map[string][]string{} // rule -> inputs
	kinds := map[v1alpha2.CurveKind]int{}
	for _, s := range checkedSets(t) {
		rules := outputcheck.RBACRules(s.m.Objects)
		for _, r := range rules {
			granted[r] = append(granted[r], s.name)
		}
		keygen := s.m.MC.Spec.Flux.CurveCert == "" && s.m.MC.Annotations[v1alpha2.CurveSecretAnnotation] == ""
		kind := v1alpha2.CurveKind(s.m.MC.Annotations[v1alpha2.CurveKindAnnotation])
		if kind == "" {
			kind = v1alpha2.CurveKindSecret
		}
		if keygen {
			kinds[kind]++
			if want := outputcheck.KeygenRules[kind]; !slices.Equal(rules, want) {
				t.Errorf("%s: keygen rules %v, want %v", s.name, rules, want)
			}
		}
		if !keygen && len(rules) > 0 {
			t.Errorf("%s: no keygen Job, but RBAC rules %v", s.name, rules)
		}
	}
	if kinds[v1alpha2.CurveKindSecret] == 0 || kinds[v1alpha2.CurveKindConfigMap] == 0 {
		t.Errorf("inputs with a keygen Job by certificate kind: %v, want both kinds", kinds)
	}
	allowed := slices.Concat(outputcheck.KeygenRules[v1alpha2.CurveKindSecret], outputcheck.KeygenRules[v1alpha2.CurveKindConfigMap])
	var report []string
	for _, r := range slices.Sorted(maps.Keys(granted)) {
		report = append(report, fmt.Sprintf("%s (%d inputs)", r, len(granted[r])))
		if !slices.Contains(allowed, r) {
			t.Errorf("rule %q is wider than allowed; granted for %v", r, granted[r])
		}
	}
	t.Logf("every rule emitted: %s", strings.Join(report, "; "))
}
