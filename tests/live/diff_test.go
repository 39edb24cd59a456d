package live

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFluxCDLiveDiffAgrees holds `minicluster-fn diff` to what Flux CD does. Edits of running
// MiniClusters are committed one after another in the Flux CD flow of TestFluxCDLiveGit (render.sh,
// a push to the loopback Git server, source-controller and kustomize-controller). Before each
// push the test records what `minicluster-fn diff --base HEAD hpc/` predicts; after the
// reconcile, what happened: the broker Job's UID (kept or new), the certificate's (kept or new,
// read as the test's admin), the broker pods (restarted or not) and a `flux submit sleep 600`
// submitted before the push (still running or gone). Any prediction that does not match what
// was observed fails the test; the table it logs is the one in docs/fluxcd.md.
//
// make test runs one edit of each impact (labels only, a resize within maxSize, the command,
// curve-kind, the name); make test-all the whole table (exhaustive).
func TestFluxCDLiveDiffAgrees(t *testing.T) {
	t.Parallel()
	repo, _ := newFluxCDTest(t, "diff")
	system, target := repo.system, repo.target
	// An edit that gives a MiniCluster a new certificate changes its Kustomization's health checks
	// (the certificate object), and the bootstrap source can apply that Kustomization before the
	// MiniClusters' source has the revision: it then checks for a certificate the applied revision
	// does not make, until its timeout (docs/fluxcd.md). Short here, so that such a step lands in
	// about a minute.
	repo.timeout = 45 * time.Second

	agree := &agreeMiniCluster{file: "hpc/agree.yaml", name: "agree", size: 2, maxSize: 4, env: "a", image: suite.images.app, quiet: true}
	other := &agreeMiniCluster{file: "hpc/other.yaml", name: "other", size: 2, maxSize: 4, env: "other", image: suite.images.app, quiet: true}
	for _, mc := range []*agreeMiniCluster{agree, other} {
		repo.write(t, mc.file, mc.yaml())
	}
	rev := repo.commit(t, "Two persistent MiniClusters")
	repo.bootstrap(t)
	for _, mc := range []*agreeMiniCluster{agree, other} {
		kustomizationReady(t, system, "miniclusters-"+mc.name, rev, fluxcdStepLimit)
		brokersReady(t, target, mc.name, mc.size, runningLimit)
	}

	// The second name of the application image, for the image edit: the same image, tagged
	// again in the node's containerd, so that its pods start.
	imageAlias := strings.Replace(suite.images.app, "/app:", "/app-alias:", 1)

	edits := []struct {
		name string
		// core edits run in make test: one of each impact.
		core bool
		// edit changes the MiniClusters (and their files); subjects are the MiniClusters whose
		// impact is observed, after the edit.
		edit     func(t *testing.T)
		subjects func() []string
	}{
		{name: "labels or annotations only", core: true, edit: func(t *testing.T) { agree.labels = "team: hpc" }},
		{name: "size within maxSize", core: true, edit: func(t *testing.T) { agree.size = 3 }},
		{name: "command", core: true, edit: func(t *testing.T) { agree.command = "sleep infinity" }},
		{name: "image", edit: func(t *testing.T) { tagImage(t, suite.images.app, imageAlias); agree.image = imageAlias }},
		{name: "environment variable", edit: func(t *testing.T) { agree.env = "b" }},
		{name: "size beyond maxSize", edit: func(t *testing.T) { agree.size, agree.maxSize = 5, 6 }},
		{name: "maxSize", edit: func(t *testing.T) { agree.maxSize = 8 }},
		{name: "maxSize removed", edit: func(t *testing.T) { agree.maxSize = 0 }},
		{name: "size without maxSize", edit: func(t *testing.T) { agree.size = 2 }},
		// interactive: false with the command of the edit above (sleep infinity) would be a Job
		// that completes when its command ends, which never comes: Flux CD's health check would wait
		// for it. Without a command the brokers still run until deleted, as interactive had them.
		{name: "interactive off, the command removed", edit: func(t *testing.T) { agree.notInteractive, agree.command = true, "" }},
		{name: "sidecar added", edit: func(t *testing.T) { agree.sidecar = true }},
		{name: "volume added", edit: func(t *testing.T) { agree.volume = true }},
		{name: "queue policy", edit: func(t *testing.T) { agree.queuePolicy = "easy" }},
		{name: "logging.quiet", edit: func(t *testing.T) { agree.quiet = false }},
		{name: "tasks", edit: func(t *testing.T) { agree.tasks = 2 }},
		{name: "view-source", edit: func(t *testing.T) {
			agree.annotations = append(agree.annotations, "minicluster-fn.dev/view-source: ImageVolume")
		}},
		{name: "curve-kind", core: true, edit: func(t *testing.T) {
			agree.annotations = append(agree.annotations, "minicluster-fn.dev/curve-kind: ConfigMap")
		}},
		{name: "moved to another file", edit: func(t *testing.T) {
			if err := os.Remove(filepath.Join(repo.dir, agree.file)); err != nil {
				t.Fatal(err)
			}
			agree.file = "hpc/moved/agree.yaml"
		}},
		{name: "two MiniClusters swap names", edit: func(t *testing.T) {
			agree.name, other.name = other.name, agree.name
		}, subjects: func() []string { return []string{"agree", "other"} }},
		{name: "name", core: true, edit: func(t *testing.T) { agree.name += "-renamed" },
			subjects: func() []string { return []string{strings.TrimSuffix(agree.name, "-renamed"), agree.name} }},
	}

	var rows []string
	for _, e := range edits {
		passed := t.Run(e.name, func(t *testing.T) {
			if !e.core {
				exhaustive(t, "the edit "+e.name+" of the diff agreement table")
			}
			// The edit changes the files only once they are written below: what runs is observed
			// first, a Flux job submitted into each subject that runs.
			e.edit(t)
			subjects := []string{agree.name}
			if e.subjects != nil {
				subjects = e.subjects()
			}
			before := map[string]observedState{}
			for _, name := range subjects {
				before[name] = observe(t, target, name, true)
			}
			for _, mc := range []*agreeMiniCluster{agree, other} {
				repo.write(t, mc.file, mc.yaml())
			}
			predicted := predictImpacts(t, repo.dir)
			rev := repo.commit(t, "Edit: "+e.name)
			kustomizationReady(t, system, "flux-system", rev, fluxcdStepLimit)
			for _, name := range subjects {
				want := predicted[name]
				got := observeAfter(t, system, target, name, byName(name, agree, other), before[name], rev)
				row := fmt.Sprintf("| %s | %s | %s | %s |", e.name, name, want, got)
				rows = append(rows, row)
				t.Log(row)
				if outcomeOf(want) != got.outcome {
					t.Errorf("%s: diff predicted %s for %s, Flux CD did: %s", e.name, want, name, got)
				}
			}
		})
		if !passed {
			break // the next edits would start from a cluster in an unknown state
		}
	}
	t.Logf("predicted and observed, for docs/fluxcd.md:\n| edit | MiniCluster | diff predicted | observed after the reconcile |\n|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// agreeMiniCluster is a persistent MiniCluster of TestFluxCDLiveDiffAgrees, written from its
// fields so that each edit changes one thing, whatever ran before it.
type agreeMiniCluster struct {
	file, name, image, env, command, queuePolicy, labels string
	size, maxSize, tasks                                 int
	quiet, sidecar, volume                               bool
	// notInteractive is set by the interactive edit: the cluster runs until deleted either way
	// (no command, or a command that never ends).
	notInteractive bool
	annotations    []string
}

func (m *agreeMiniCluster) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: %s\n", m.name)
	if m.labels != "" {
		fmt.Fprintf(&b, "  labels:\n    %s\n", m.labels)
	}
	if len(m.annotations) > 0 {
		b.WriteString("  annotations:\n")
		for _, a := range m.annotations {
			fmt.Fprintf(&b, "    %s\n", a)
		}
	}
	fmt.Fprintf(&b, "spec:\n  size: %d\n", m.size)
	if m.maxSize > 0 {
		fmt.Fprintf(&b, "  maxSize: %d\n", m.maxSize)
	}
	fmt.Fprintf(&b, "  interactive: %v\n", !m.notInteractive)
	if m.tasks > 0 {
		fmt.Fprintf(&b, "  tasks: %d\n", m.tasks)
	}
	fmt.Fprintf(&b, "  logging:\n    quiet: %v\n  flux:\n    container:\n      image: %s\n", m.quiet, suite.images.view)
	if m.queuePolicy != "" {
		fmt.Fprintf(&b, "    scheduler:\n      queuePolicy: %s\n", m.queuePolicy)
	}
	fmt.Fprintf(&b, "  containers:\n    - image: %s\n      environment:\n        MODE: %s\n", m.image, m.env)
	if m.sidecar {
		// With two containers the broker's must say so, and be named (as it is by default: the
		// MiniCluster's name, so that the name alone changes nothing).
		fmt.Fprintf(&b, "      name: %s\n      runFlux: true\n", m.name)
	}
	if m.command != "" {
		fmt.Fprintf(&b, "      command: %s\n", m.command)
	}
	if m.volume {
		b.WriteString("      volumes:\n        scratch:\n          path: /scratch\n          emptyDir: true\n")
	}
	if m.sidecar {
		fmt.Fprintf(&b, "    - name: side\n      image: %s\n      command: sleep infinity\n", m.image)
	}
	return b.String()
}

func byName(name string, mcs ...*agreeMiniCluster) *agreeMiniCluster {
	for _, mc := range mcs {
		if mc.name == name {
			return mc
		}
	}
	return nil
}

// tagImage gives an image of the node's containerd a second name (ctr images tag), as a registry
// would serve one image under two tags.
func tagImage(t *testing.T, from, to string) {
	t.Helper()
	script := `. "$1/env.sh" && "$(cat "$STATE/run/node-bin")/ctr" --address "$CONTAINERD_SOCK" -n k8s.io images tag --force "$2" "$3"`
	if out, err := exec.Command("bash", "-c", script, "bash", suite.clusterDir, from, to).CombinedOutput(); err != nil {
		t.Fatalf("tagging %s as %s: %v\n%s", from, to, err, out)
	}
}

// predictImpacts runs `minicluster-fn diff --base HEAD hpc/ --output json` in the repository, as
// CI would on the pull request, and returns each MiniCluster's impact.
func predictImpacts(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(suite.fn, "diff", "--base", "HEAD", "hpc/", "--output", "json")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("minicluster-fn diff --base HEAD hpc/: %v\n%s%s", err, out, stderr.String())
	}
	var report struct {
		MiniClusters []struct {
			Name   string `json:"name"`
			Impact string `json:"impact"`
		} `json:"miniClusters"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("diff --output json: %v\n%s", err, out)
	}
	impacts := map[string]string{}
	for _, mc := range report.MiniClusters {
		impacts[mc.Name] = mc.Impact
	}
	return impacts
}

// outcome is what an impact looks like on a running cluster: unchanged, metadata only and
// updated all keep the brokers and their work.
type outcome string

const (
	keepsRunning   outcome = "keeps running"
	resizedInPlace outcome = "resized in place"
	replacedJob    outcome = "replaced"
	newCertificate outcome = "new certificate"
	removedCluster outcome = "removed"
	addedCluster   outcome = "added"
)

// outcomeOf is the outcome diff's impact (its JSON slug) predicts.
func outcomeOf(impact string) outcome {
	switch impact {
	case "unchanged", "metadata-only", "updated":
		return keepsRunning
	case "resized-in-place":
		return resizedInPlace
	case "replaced":
		return replacedJob
	case "new-certificate":
		return newCertificate
	case "removed":
		return removedCluster
	case "added":
		return addedCluster
	}
	return outcome("unknown impact " + impact)
}

// observedState is what runs of one MiniCluster, and a Flux job submitted into it.
type observedState struct {
	exists             bool
	jobName, jobUID    string
	parallelism        int
	certUID            string
	podUIDs            map[string]string // index -> pod UID
	fluxJob            string
	certResource, cert string // the certificate the broker pods mount
}

// observe records the MiniCluster's broker Job, certificate and broker pods; with submit, it also
// submits a long Flux job on rank 0 first.
func observe(t *testing.T, ns, instance string, submit bool) observedState {
	t.Helper()
	var jobs jobList
	if err := listObjects(&jobs, ns, "jobs", selector(instance, "broker")); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) == 0 {
		return observedState{}
	}
	j := jobs.Items[0]
	s := observedState{exists: true, jobName: j.Metadata.Name, jobUID: j.Metadata.UID, podUIDs: map[string]string{}}
	if j.Spec.Parallelism != nil {
		s.parallelism = *j.Spec.Parallelism
	}
	s.certResource, s.cert = mountedCertificate(t, ns, j.Metadata.Name)
	var cert struct {
		Metadata objectMeta `json:"metadata"`
	}
	// Only the metadata is read: the Secret holds the secret key.
	if err := getObject(&cert, ns, s.certResource, s.cert); err == nil {
		s.certUID = cert.Metadata.UID
	}
	for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+j.Metadata.Name) {
		if p.Metadata.DeletionTimestamp == nil {
			s.podUIDs[p.index()] = p.Metadata.UID
		}
	}
	if submit {
		out, err := fluxOnRank0(t, ns, instance, "flux submit sleep 600")
		if err != nil {
			t.Fatalf("flux submit sleep 600 on rank 0 of %s: %v\n%s", instance, err, out)
		}
		s.fluxJob = strings.TrimSpace(out)
	}
	return s
}

// mountedCertificate is the resource and name of the certificate the broker Job's pods mount.
func mountedCertificate(t *testing.T, ns, jobName string) (string, string) {
	t.Helper()
	var j struct {
		Spec struct {
			Template struct {
				Spec struct {
					Volumes []struct {
						Name   string `json:"name"`
						Secret *struct {
							SecretName string `json:"secretName"`
						} `json:"secret"`
						ConfigMap *struct {
							Name string `json:"name"`
						} `json:"configMap"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := getObject(&j, ns, "jobs", jobName); err != nil {
		t.Fatal(err)
	}
	for _, v := range j.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret != nil && v.Name == "flux-curve":
			return "secrets", v.Secret.SecretName
		case v.ConfigMap != nil && v.Name == "flux-curve":
			return "configmaps", v.ConfigMap.Name
		}
	}
	t.Fatalf("broker Job %s mounts no certificate", jobName)
	return "", ""
}

// observed is what Flux CD did to one MiniCluster.
type observed struct {
	outcome                        outcome
	job, cert, pods, fluxJob, note string
}

func (o observed) String() string {
	return fmt.Sprintf("%s (broker Job %s, certificate %s, broker pods %s, the Flux job %s%s)", o.outcome, o.job, o.cert, o.pods, o.fluxJob, o.note)
}

// observeAfter waits until Flux CD applied revision for the MiniCluster (mc nil: it is gone
// from Git) and says what happened to what ran before.
func observeAfter(t *testing.T, system, ns, instance string, mc *agreeMiniCluster, before observedState, revision string) observed {
	t.Helper()
	if mc == nil {
		gone(t, system, "kustomizations", "miniclusters-"+instance, fluxcdStepLimit)
		gone(t, ns, "jobs", before.jobName, time.Minute)
		gone(t, ns, before.certResource, before.cert, time.Minute)
		return observed{outcome: removedCluster, job: "pruned", cert: "deleted", pods: "ended", fluxJob: "gone"}
	}
	kustomizationReady(t, system, "miniclusters-"+instance, revision, fluxcdStepLimit)
	waitFor(t, "one broker Job of "+instance, time.Minute, func() (bool, string, error) {
		var jobs jobList
		if err := listObjects(&jobs, ns, "jobs", selector(instance, "broker")); err != nil {
			return false, "", err
		}
		return len(jobs.Items) == 1, fmt.Sprintf("%d broker Jobs", len(jobs.Items)), nil
	})
	brokersReady(t, ns, instance, mc.size, runningLimit)
	after := observe(t, ns, instance, false)
	if !before.exists {
		return observed{outcome: addedCluster, job: "created", cert: "created", pods: "started", fluxJob: "none"}
	}
	o := observed{job: "kept", cert: "kept", pods: "kept", fluxJob: "running"}
	if after.jobUID != before.jobUID {
		o.job = "new"
	}
	if after.certResource != before.certResource || after.certUID != before.certUID {
		o.cert = "new"
	}
	for index, uid := range before.podUIDs {
		i, _ := strconv.Atoi(index)
		if now, ok := after.podUIDs[index]; ok && now != uid || !ok && i < mc.size {
			o.pods = "restarted"
		}
	}
	running, err := fluxOnRank0(t, ns, instance, "flux jobs --no-header --format '{id.f58}'")
	if err != nil || !slices.Contains(strings.Fields(running), before.fluxJob) {
		o.fluxJob = "gone"
	}
	switch {
	case o.job == "new" && o.cert == "new":
		o.outcome = newCertificate
	case o.job == "new":
		o.outcome = replacedJob
	case after.parallelism != before.parallelism:
		o.outcome = resizedInPlace
	default:
		o.outcome = keepsRunning
	}
	// The outcome must be whole: running work goes on exactly when the brokers stay.
	if keeps := o.outcome == keepsRunning || o.outcome == resizedInPlace; keeps != (o.pods == "kept" && o.fluxJob == "running") {
		o.note = "; NOT CONSISTENT: the Job and the brokers disagree"
		t.Errorf("%s: %s", instance, o)
	}
	return o
}
