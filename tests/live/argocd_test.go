package live

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Argo CD tests run the two setups of examples/argocd against a real application controller,
// repo server and plugin server (tests/cluster/argocd-up.sh) on the live cluster. A Git server on
// loopback serves a GitOps repository holding examples/argocd/app; the Application is the
// example's application.yaml, and argocd-cm is patched with the example's patches, as its README
// says. Only the repository URL (in the Application) and the images (in the MiniCluster, the
// stand-ins the cluster has) differ from the examples. Argo CD renders the MiniCluster itself: the
// repo server runs kustomize, which runs minicluster-fn from the repo server's PATH (setup a), or
// the plugin server does (setup b). Setup b runs under Argo CD's label tracking
// (application.resourceTrackingMethod: label), setup a under its default.

const (
	argocdNamespace = "argocd"
	// The examples' Application, named after its MiniCluster, and destination namespace.
	argocdApp    = "flux-argocd"
	argocdTarget = "hpc"
	// argocdAppDir is where examples/argocd/app sits in the GitOps repository, as in this one:
	// the examples' Applications name that path.
	argocdAppDir = "examples/argocd/app"
	// argocdStepLimit bounds one step: a manifest generation, the sync waves (keygen, scripts,
	// brokers) and the cluster's own time (the command, the brokers joining).
	argocdStepLimit = 150 * time.Second
)

// argocdApplication is what the tests read of an Argo CD Application.
type argocdApplication struct {
	Metadata objectMeta `json:"metadata"`
	Status   struct {
		Sync struct {
			Status   string `json:"status"`
			Revision string `json:"revision"`
		} `json:"sync"`
		Health struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"health"`
		Conditions []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"conditions"`
		// ReconciledAt is when the controller last compared the Application with Git.
		ReconciledAt   *time.Time `json:"reconciledAt"`
		OperationState *struct {
			Phase      string    `json:"phase"`
			Message    string    `json:"message"`
			StartedAt  time.Time `json:"startedAt"`
			SyncResult *struct {
				Revision  string `json:"revision"`
				Resources []struct {
					Kind    string `json:"kind"`
					Name    string `json:"name"`
					Status  string `json:"status"`
					Message string `json:"message"`
				} `json:"resources"`
			} `json:"syncResult"`
		} `json:"operationState"`
		Resources []argocdResource `json:"resources"`
	} `json:"status"`
}

// argocdResource is one managed resource in the Application's status.
type argocdResource struct {
	Kind            string `json:"kind"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	RequiresPruning bool   `json:"requiresPruning"`
	// Health is there only where Argo CD keeps resources' health in the Application.
	Health *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"health"`
}

func getApplication(t *testing.T) argocdApplication {
	t.Helper()
	var a argocdApplication
	if err := getObject(&a, argocdNamespace, "applications", argocdApp); err != nil {
		t.Fatal(err)
	}
	return a
}

// state is the Application as `argocd app get` sums it up.
func (a *argocdApplication) state() string {
	s := fmt.Sprintf("sync %s at %.7s, health %s %q", a.Status.Sync.Status, a.Status.Sync.Revision, a.Status.Health.Status, a.Status.Health.Message)
	if op := a.Status.OperationState; op != nil {
		s += fmt.Sprintf(", operation %s %q", op.Phase, op.Message)
		if op.SyncResult != nil {
			s += fmt.Sprintf(" at %.7s", op.SyncResult.Revision)
		}
	}
	for _, c := range a.Status.Conditions {
		s += fmt.Sprintf(", condition %s %q", c.Type, c.Message)
	}
	return s
}

// condition is the message of the Application's condition of that type, "" when absent.
func (a *argocdApplication) condition(kind string) string {
	for _, c := range a.Status.Conditions {
		if c.Type == kind {
			return c.Message
		}
	}
	return ""
}

// resource is the managed resource's entry in the Application's status.
func (a *argocdApplication) resource(kind, name string) (argocdResource, bool) {
	for _, r := range a.Status.Resources {
		if r.Kind == kind && r.Name == name {
			return r, true
		}
	}
	return argocdResource{}, false
}

// argocdTest is one Argo CD setup of examples/argocd on the live cluster, with its GitOps
// repository.
type argocdTest struct {
	setup string // the directory of examples/argocd: kustomize-exec or cmp
	repo  *gitopsRepo
	// appFile is examples/argocd/app/minicluster.yaml in the repository.
	appFile string
	// pluginLog is how long the plugin server's log was before the Application was applied.
	pluginLog int
}

// argocdState is the directory argocd-up.sh keeps Argo CD's files in.
func argocdState() string { return filepath.Join(suite.state, "argocd") }

// newArgoCDTest sets up one setup as examples/argocd/README.md says: argocd-cm patched, the
// binary on the PATH of the container that renders, the Application applied. The Application and
// its namespace are deleted when the test ends.
func newArgoCDTest(t *testing.T, setup string) *argocdTest {
	t.Helper()
	requireImages(t)
	needArgoCD(t)
	examples := filepath.Join(suite.repo, "examples", "argocd")

	// What an init container of the project image does in both setups: minicluster-fn in
	// /usr/local/bin of the container that renders. The binary under test, each time.
	for _, container := range []string{"repo-server", "cmp-server"} {
		installArgoCDTool(t, container)
	}
	deleteArgoCDApp(t)
	patchArgoCDSettings(t, filepath.Join(examples, "argocd-cm-health-patch.yaml"))
	switch setup {
	case "kustomize-exec":
		patchArgoCDSettings(t, filepath.Join(examples, "kustomize-exec", "argocd-cm-patch.yaml"))
		// Argo CD's default tracking, whatever an interrupted run of the cmp setup left.
		setTrackingMethod(t, "")
	case "cmp":
		// The plugin renders with its own flags; no --enable-exec for Argo CD's own kustomize,
		// so nothing but the plugin can run the generator.
		mustKube(t, nil, "-n", argocdNamespace, "patch", "configmap", "argocd-cm", "--type=merge",
			"-p", `{"data":{"kustomize.buildOptions":null}}`)
		// Label tracking, Argo CD's default before v3 and still a documented setting: Argo CD
		// writes the Application's name over app.kubernetes.io/instance on every object it
		// applies, so every MiniCluster of the Application claims the same instance
		// (argocdLabelTracking). This setup's whole life cycle runs under it; the kustomize-exec
		// setup's runs under the default. Registered before the Application's deletion, the
		// restore runs after it.
		setTrackingMethod(t, "label")
		t.Cleanup(func() { setTrackingMethod(t, "") })
	default:
		t.Fatalf("no Argo CD setup %q", setup)
	}

	srv := startGitServer(t)
	a := &argocdTest{setup: setup, repo: newGitOpsRepo(t, srv, argocdNamespace, argocdTarget),
		appFile: argocdAppDir + "/minicluster.yaml"}
	for _, name := range []string{"kustomization.yaml", "minicluster.yaml"} {
		text, err := os.ReadFile(filepath.Join(examples, "app", name))
		if err != nil {
			t.Fatal(err)
		}
		a.repo.write(t, argocdAppDir+"/"+name, string(text))
	}
	// The images: the stand-ins the cluster has, where a user names those of their registry.
	a.repo.replace(t, a.appFile, "    - image: ubuntu:noble\n",
		"    - image: "+suite.images.app+"\n")
	a.repo.replace(t, a.appFile, "spec:\n", "spec:\n  flux:\n    container:\n      image: "+suite.images.view+"\n")
	a.repo.push(t, "examples/argocd/app")

	t.Cleanup(func() {
		if t.Failed() {
			logArgoCD(t)
		}
		deleteArgoCDApp(t)
	})
	application, err := os.ReadFile(filepath.Join(examples, setup, "application.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const exampleURL = "repoURL: https://github.com/minicluster-fn/minicluster-fn.git"
	if !bytes.Contains(application, []byte(exampleURL)) {
		t.Fatalf("examples/argocd/%s/application.yaml has no %q", setup, exampleURL)
	}
	a.pluginLog = len(readLog(t, "argocd-cmp-server"))
	apply(t, bytes.Replace(application, []byte(exampleURL), []byte("repoURL: "+a.repo.url), 1))
	return a
}

// installArgoCDTool puts the binary under test on the PATH of an Argo CD container
// (argocd-up.sh's $STATE/argocd/<container>/bin), replacing the file at once.
func installArgoCDTool(t *testing.T, container string) {
	t.Helper()
	b, err := os.ReadFile(suite.fn)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(argocdState(), container, "bin", "minicluster-fn")
	if err := os.WriteFile(dest+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dest+".new", dest); err != nil {
		t.Fatal(err)
	}
}

// patchArgoCDSettings patches argocd-cm with an example's patch file, as the README says.
func patchArgoCDSettings(t *testing.T, file string) {
	t.Helper()
	mustKube(t, nil, "-n", argocdNamespace, "patch", "configmap", "argocd-cm", "--patch-file", file)
}

// setTrackingMethod sets argocd-cm's application.resourceTrackingMethod (method "": removed, Argo
// CD's default, annotation) and waits until the application controller has taken it. The
// controller reads the key from argocd-cm through its settings manager, which watches the
// ConfigMap, at every comparison and sync (util/settings GetTrackingMethod); a changed method also
// invalidates its cache of the cluster's objects, which it logs as "live state cache invalidated"
// (controller/cache/cache.go, watchSettings, v3.6.1). The repo server gets the method with each
// manifest request, and its manifest cache is keyed by it.
func setTrackingMethod(t *testing.T, method string) {
	t.Helper()
	const key = "application.resourceTrackingMethod"
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := getObject(&cm, argocdNamespace, "configmaps", "argocd-cm"); err != nil {
		t.Fatal(err)
	}
	effective := func(m string) string { return cmp.Or(m, "annotation") }
	if effective(cm.Data[key]) == effective(method) {
		return
	}
	const invalidated = "live state cache invalidated"
	before := strings.Count(readLog(t, "argocd-application-controller"), invalidated)
	value := "null"
	if method != "" {
		value = strconv.Quote(method)
	}
	mustKube(t, nil, "-n", argocdNamespace, "patch", "configmap", "argocd-cm", "--type=merge",
		"-p", `{"data":{"`+key+`":`+value+`}}`)
	waitFor(t, "the application controller to take resourceTrackingMethod "+effective(method), time.Minute, func() (bool, string, error) {
		n := strings.Count(readLog(t, "argocd-application-controller"), invalidated)
		return n > before, fmt.Sprintf("%q logged %d times, %d before the patch", invalidated, n, before), nil
	})
}

// deleteArgoCDApp deletes the Application and then the MiniCluster's namespace, and waits for
// both: the examples' Application has no finalizer, so deleting it leaves the objects it applied.
func deleteArgoCDApp(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"-n", argocdNamespace, "delete", "application", argocdApp},
		{"delete", "namespace", argocdTarget},
	} {
		if _, err := kube(nil, append(args, "--ignore-not-found", "--wait", "--timeout=120s")...); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}

// logArgoCD logs what a user would look at when a test failed: the Application, the objects in
// the target namespace, and the end of the components' logs.
func logArgoCD(t *testing.T) {
	t.Helper()
	var a argocdApplication
	if err := getObject(&a, argocdNamespace, "applications", argocdApp); err == nil {
		t.Logf("Application %s: %s", argocdApp, a.state())
		for _, r := range a.Status.Resources {
			t.Logf("  %s/%s: %s", r.Kind, r.Name, r.Status)
		}
	}
	logDiagnostics(t, argocdTarget)
	for _, c := range []string{"argocd-application-controller", "argocd-repo-server", "argocd-cmp-server"} {
		lines := strings.Split(strings.TrimSpace(readLog(t, c)), "\n")
		t.Logf("last lines of %s.log:\n%s", c, strings.Join(lines[max(0, len(lines)-12):], "\n"))
	}
}

// refresh asks Argo CD to generate the manifests again now, as a Git webhook or `argocd app get
// --hard-refresh` does, instead of waiting for its polling interval.
func refresh(t *testing.T) {
	t.Helper()
	mustKube(t, nil, "-n", argocdNamespace, "annotate", "--overwrite", "application", argocdApp,
		"argocd.argoproj.io/refresh=hard")
}

// synced waits until the Application is Synced to revision and Healthy, no sync runs, and it has
// no condition but of the types tolerated, and returns it with the time that took. A revision
// whose manifests equal what runs needs no sync operation (the last one may be of an earlier
// revision).
func synced(t *testing.T, revision string, tolerated ...string) (argocdApplication, time.Duration) {
	t.Helper()
	var a argocdApplication
	took := waitFor(t, "Application "+argocdApp+" Synced to "+revision[:7]+" and Healthy", argocdStepLimit, func() (bool, string, error) {
		if err := getObject(&a, argocdNamespace, "applications", argocdApp); err != nil {
			return false, "", err
		}
		op := a.Status.OperationState
		done := a.Status.Sync.Status == "Synced" && a.Status.Sync.Revision == revision && a.Status.Health.Status == "Healthy" &&
			op != nil && op.Phase != "Running"
		for _, c := range a.Status.Conditions {
			done = done && slices.Contains(tolerated, c.Type)
		}
		return done, a.state(), nil
	})
	return a, took
}

// applicationCondition waits until the Application has a condition of the type whose message
// contains want, and returns the message.
func applicationCondition(t *testing.T, kind, want string) string {
	t.Helper()
	var a argocdApplication
	waitFor(t, "Application condition "+kind+" with "+want, argocdStepLimit, func() (bool, string, error) {
		if err := getObject(&a, argocdNamespace, "applications", argocdApp); err != nil {
			return false, "", err
		}
		return strings.Contains(a.condition(kind), want), a.state(), nil
	})
	return a.condition(kind)
}

// checkWaves checks that the sync waves held for the MiniCluster: the keygen Job and the headless
// Service (wave -1) were there, and the keygen Job complete, before the scripts ConfigMap (wave
// 0) was created, and that before the broker Job (wave 1). API timestamps have whole seconds, and
// Argo CD waits 2 s between waves.
func checkWaves(t *testing.T, instance string) {
	t.Helper()
	var keygen jobList
	if err := listObjects(&keygen, argocdTarget, "jobs", selector(instance, "keygen")); err != nil || len(keygen.Items) != 1 {
		t.Fatalf("the keygen Job of %s: %v (%d found)", instance, err, len(keygen.Items))
	}
	var svc, cm struct {
		Metadata objectMeta `json:"metadata"`
	}
	broker := brokerJob(t, argocdTarget, instance)
	if err := getObject(&svc, argocdTarget, "services", instance); err != nil {
		t.Fatal(err)
	}
	if err := getObject(&cm, argocdTarget, "configmaps", broker.Metadata.Name+"-entrypoint"); err != nil {
		t.Fatal(err)
	}
	kg := keygen.Items[0]
	if kg.Status.CompletionTime == nil {
		t.Fatalf("keygen Job %s has not completed", kg.Metadata.Name)
	}
	order := []struct {
		what string
		at   time.Time
	}{
		{"keygen Job created", kg.Metadata.CreationTimestamp},
		{"headless Service created", svc.Metadata.CreationTimestamp},
		{"keygen Job complete", *kg.Status.CompletionTime},
		{"scripts ConfigMap created (wave 0)", cm.Metadata.CreationTimestamp},
		{"broker Job created (wave 1)", broker.Metadata.CreationTimestamp},
	}
	var steps []string
	for i, o := range order {
		steps = append(steps, fmt.Sprintf("%s %s", o.what, o.at.Format("15:04:05")))
		// The keygen Job and the Service share wave -1, in either order.
		if i >= 2 && o.at.Before(order[i-1].at) {
			t.Errorf("sync waves: %s at %s, before %s at %s", o.what, o.at.Format(time.TimeOnly), order[i-1].what, order[i-1].at.Format(time.TimeOnly))
		}
	}
	if svc.Metadata.CreationTimestamp.After(*kg.Status.CompletionTime) {
		t.Errorf("sync waves: the headless Service was created after the keygen Job completed")
	}
	t.Logf("sync waves of %s: %s", instance, strings.Join(steps, ", "))
}

// argocdFirstSync: the Application syncs the example's MiniCluster (size 4, `echo hello world`)
// and becomes Healthy once the broker Job is complete, with the waves in order and rank 0's
// output showing that the brokers ran.
func argocdFirstSync(t *testing.T, a *argocdTest, revision string) job {
	t.Helper()
	start := time.Now()
	app, _ := synced(t, revision)
	took := time.Since(start)
	j := brokerJob(t, argocdTarget, argocdApp)
	if status, _ := j.condition("Complete"); status != "True" {
		t.Errorf("the Application is Healthy, but broker Job %s is not Complete", j.Metadata.Name)
	}
	if r, ok := app.resource("Job", j.Metadata.Name); !ok || r.Status != "Synced" {
		t.Errorf("Argo CD's view of broker Job %s: %+v", j.Metadata.Name, r)
	}
	if log := jobRank0Log(t, argocdTarget, j.Metadata.Name); !strings.Contains(log, "hello world") {
		t.Errorf("rank 0 of %s did not print the command's output:\n%s", j.Metadata.Name, log)
	}
	checkAllExitedZero(t, argocdTarget, j.Metadata.Name, 4)
	checkWaves(t, argocdApp)
	// Every object Argo CD applied is one the generator made: the source has only the MiniCluster,
	// which kustomize does not emit (local-config).
	for _, r := range app.Status.Resources {
		if r.Kind == "MiniCluster" {
			t.Errorf("Argo CD applied the MiniCluster itself: the generator did not run")
		}
	}
	t.Logf("%s: Application Synced and Healthy %.1fs after it was applied; %d resources; broker Job %s complete, all 4 pods exited 0",
		a.setup, took.Seconds(), len(app.Status.Resources), j.Metadata.Name)
	return j
}

// argocdEdit: an edit of the command syncs without "field is immutable": a new broker Job, the
// old one pruned, the certificate kept.
func argocdEdit(t *testing.T, a *argocdTest, before job) {
	t.Helper()
	cert0 := certificate(t, argocdTarget, argocdApp)
	a.repo.replace(t, a.appFile, "command: echo hello world", "command: echo hello argocd-edit")
	rev := a.repo.push(t, "Edit the command")
	refresh(t)
	app, took := synced(t, rev)
	for _, r := range app.Status.OperationState.SyncResult.Resources {
		if strings.Contains(r.Message, "immutable") {
			t.Errorf("the sync of the edit: %s/%s: %s", r.Kind, r.Name, r.Message)
		}
	}
	gone(t, argocdTarget, "jobs", before.Metadata.Name, time.Minute)
	j := brokerJob(t, argocdTarget, argocdApp)
	if j.Metadata.Name == before.Metadata.Name {
		t.Fatalf("the edit kept the broker Job name %s", j.Metadata.Name)
	}
	if log := jobRank0Log(t, argocdTarget, j.Metadata.Name); !strings.Contains(log, "hello argocd-edit") {
		t.Errorf("rank 0 of %s did not print the edited command's output:\n%s", j.Metadata.Name, log)
	}
	if cert := certificate(t, argocdTarget, argocdApp); cert.Metadata.UID != cert0.Metadata.UID {
		t.Errorf("the edit replaced the certificate Secret (uid %s -> %s)", cert0.Metadata.UID, cert.Metadata.UID)
	}
	t.Logf("%s: edit synced and Healthy %.1fs after the refresh: new Job %s complete, old Job %s pruned, same certificate, no immutable-field error",
		a.setup, took.Seconds(), j.Metadata.Name, before.Metadata.Name)
}

// argocdDelete: removing the example's MiniCluster from Git prunes every object of it, the
// certificate included, and leaves the other MiniCluster of the Application alone.
func argocdDelete(t *testing.T, a *argocdTest, other string) {
	t.Helper()
	keep := brokerJob(t, argocdTarget, other)
	if err := os.Remove(filepath.Join(a.repo.dir, a.appFile)); err != nil {
		t.Fatal(err)
	}
	a.repo.replace(t, argocdAppDir+"/kustomization.yaml", "  - minicluster.yaml\n", "")
	rev := a.repo.push(t, "Remove "+argocdApp)
	pushed := time.Now()
	refresh(t)
	synced(t, rev)
	allPruned(t, argocdTarget, argocdApp, "jobs", "pods", "configmaps", "secrets", "services", "serviceaccounts", "roles", "rolebindings")
	gone(t, argocdTarget, "secrets", certSecret(argocdApp), time.Minute)
	if j := brokerJob(t, argocdTarget, other); j.Metadata.UID != keep.Metadata.UID {
		t.Errorf("removing %s replaced the broker Job of %s", argocdApp, other)
	}
	t.Logf("%s: every object of %s, the certificate included, gone %.1fs after the push; %s untouched",
		a.setup, argocdApp, time.Since(pushed).Seconds(), other)
}

// argocdFailedCommand: the example's command (now command) made to fail: its broker Job fails, and
// the Application is Degraded, naming the Job. Then the command is put back, and the Application
// is Healthy again.
func argocdFailedCommand(t *testing.T, a *argocdTest, command string) {
	t.Helper()
	a.repo.replace(t, a.appFile, "command: "+command, "command: sh -c 'exit 3'")
	rev := a.repo.push(t, "A command that fails")
	pushed := time.Now()
	refresh(t)
	var app argocdApplication
	var failed string
	took := waitFor(t, "Application "+argocdApp+" Degraded by the failed Job", argocdStepLimit, func() (bool, string, error) {
		if err := getObject(&app, argocdNamespace, "applications", argocdApp); err != nil {
			return false, "", err
		}
		var l jobList
		if err := listObjects(&l, argocdTarget, "jobs", selector(argocdApp, "broker")); err != nil {
			return false, "", err
		}
		for _, j := range l.Items {
			if s, _ := j.condition("Failed"); s == "True" {
				failed = j.Metadata.Name
			}
		}
		if failed == "" || app.Status.Sync.Revision != rev || app.Status.Health.Status != "Degraded" {
			return false, app.state(), nil
		}
		// The Job is named in the Application's health message, or in its resource's health.
		r, _ := app.resource("Job", failed)
		named := strings.Contains(app.Status.Health.Message, failed) || (r.Health != nil && r.Health.Status == "Degraded")
		return named, app.state(), nil
	})
	var j job
	if err := getObject(&j, argocdTarget, "jobs", failed); err != nil {
		t.Fatal(err)
	}
	if _, why := j.condition("Failed"); !strings.Contains(why, "exit code 3") {
		t.Errorf("Job %s's Failed condition does not name the exit code 3: %q", failed, why)
	}
	t.Logf("%s: the Application was Degraded %.1fs after the refresh, naming Job %s: %s", a.setup, took.Seconds(), failed, app.state())
	a.repo.replace(t, a.appFile, "command: sh -c 'exit 3'", "command: "+command)
	rev = a.repo.push(t, "The command fixed")
	refresh(t)
	_, took = synced(t, rev)
	t.Logf("%s: Healthy again %.1fs after the fix (%.1fs after the failing push)", a.setup, took.Seconds(), time.Since(pushed).Seconds())
}

// addPersistent adds a persistent MiniCluster (size 2, until deleted) to the Application's
// kustomization, as a user adds a second MiniCluster, and pushes it.
func addPersistent(t *testing.T, a *argocdTest, name string) string {
	t.Helper()
	a.repo.write(t, argocdAppDir+"/"+name+".yaml", strings.Replace(persistentMiniCluster(name, 2),
		"metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: minicluster-fn\n", 1))
	a.repo.replace(t, argocdAppDir+"/kustomization.yaml", "  - minicluster.yaml\n", "  - minicluster.yaml\n  - "+name+".yaml\n")
	rev := a.repo.push(t, "A persistent MiniCluster")
	refresh(t)
	return rev
}

// argocdLabelTracking: the Application holds two MiniClusters, the example's and other, under
// label tracking (the cmp setup's): Argo CD's instance label names the Application on the objects
// of both. status still shows them as two rows, each with its own broker Job and phase; a second
// sync, with prune, and a refresh leave the Application Synced and Healthy with every object of
// both as it was (same UIDs, pods included), nothing pruned.
func argocdLabelTracking(t *testing.T, a *argocdTest, other string) {
	t.Helper()
	rev := gitCmd(t, a.repo.dir, "rev-parse", "HEAD")
	instances := []string{argocdApp, other}

	// The tracking was on: each object Argo CD applied (the pods and the certificate, which have
	// an owner, it did not) carries the Application's name as its instance, other's too, and no
	// tracking-id annotation.
	const instanceLabel, trackingID = "app.kubernetes.io/instance", "argocd.argoproj.io/tracking-id"
	for _, instance := range instances {
		for _, resource := range []string{"jobs", "services", "configmaps", "serviceaccounts", "roles", "rolebindings"} {
			objs := miniClusterObjects(t, resource, instance)
			if len(objs) == 0 {
				t.Errorf("no %s of %s", resource, instance)
			}
			for _, o := range objs {
				if got := o.Labels[instanceLabel]; got != argocdApp || o.Annotations[trackingID] != "" {
					t.Errorf("%s %s of %s: %s %q, annotation %s %q; label tracking writes %q and no annotation",
						resource, o.Name, instance, instanceLabel, got, trackingID, o.Annotations[trackingID], argocdApp)
				}
			}
		}
	}

	rows := checkTwoRows(t, other)
	uids := miniClusterUIDs(t, instances...)

	// A second sync, as `argocd app sync --prune` asks for one (an operation on the Application,
	// docs/user-guide/sync-kubectl.md): everything is applied again, and anything Argo CD took for
	// its own but not in Git would be pruned.
	app := getApplication(t)
	var last time.Time
	if op := app.Status.OperationState; op != nil {
		last = op.StartedAt
	}
	mustKube(t, nil, "-n", argocdNamespace, "patch", "application", argocdApp, "--type=merge", "-p",
		`{"operation":{"initiatedBy":{"username":"minicluster-fn-live"},"sync":{"revision":"`+rev+`","prune":true,"syncStrategy":{"hook":{}}}}}`)
	took := waitFor(t, "the second sync of "+argocdApp, argocdStepLimit, func() (bool, string, error) {
		if err := getObject(&app, argocdNamespace, "applications", argocdApp); err != nil {
			return false, "", err
		}
		op := app.Status.OperationState
		return op != nil && op.StartedAt.After(last) && op.Phase != "Running", app.state(), nil
	})
	op := app.Status.OperationState
	if op.Phase != "Succeeded" || op.SyncResult == nil {
		t.Fatalf("the second sync: %s", app.state())
	}
	for _, r := range op.SyncResult.Resources {
		if r.Status != "Synced" {
			t.Errorf("the second sync: %s/%s %s %q", r.Kind, r.Name, r.Status, r.Message)
		}
	}
	synced(t, rev)
	sameUIDs(t, "the second sync", uids, miniClusterUIDs(t, instances...))

	// A hard refresh: Argo CD compares again, and still finds nothing to sync or prune.
	refreshed := time.Now().Truncate(time.Second)
	refresh(t)
	waitFor(t, "Argo CD's comparison after the refresh", argocdStepLimit, func() (bool, string, error) {
		// A fresh value each time: decoding into the last one would keep the refresh annotation
		// that an earlier read saw (encoding/json adds to a map, it never removes from it).
		app = argocdApplication{}
		if err := getObject(&app, argocdNamespace, "applications", argocdApp); err != nil {
			return false, "", err
		}
		_, pending := app.Metadata.Annotations["argocd.argoproj.io/refresh"]
		return !pending && app.Status.ReconciledAt != nil && !app.Status.ReconciledAt.Before(refreshed), app.state(), nil
	})
	if app.Status.Sync.Status != "Synced" || app.Status.Sync.Revision != rev || app.Status.Health.Status != "Healthy" || len(app.Status.Conditions) > 0 {
		t.Errorf("after the refresh: %s", app.state())
	}
	for _, r := range app.Status.Resources {
		if r.Status != "Synced" || r.RequiresPruning {
			t.Errorf("after the refresh: %s/%s %s, requires pruning %v", r.Kind, r.Name, r.Status, r.RequiresPruning)
		}
	}
	sameUIDs(t, "the refresh", uids, miniClusterUIDs(t, instances...))
	checkTwoRows(t, other)
	t.Logf("label tracking: both MiniClusters' objects labelled %s=%s; status: %s; a second sync (%d resources, %.1fs) and a refresh left all %d objects and pods as they were",
		instanceLabel, argocdApp, rows, len(op.SyncResult.Resources), took.Seconds(), len(uids))
}

// checkTwoRows checks what status says of the Argo CD tests' namespace holding the example's
// MiniCluster (its command complete) and other (persistent, size 2, joined): two rows, each with
// its own broker Job and phase, and other managed by the Application. It returns the rows, summed up.
func checkTwoRows(t *testing.T, other string) string {
	t.Helper()
	rows, err := statusRows(argocdTarget)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{argocdApp: "Succeeded", other: "Ready"}
	var seen []string
	for _, row := range rows {
		seen = append(seen, fmt.Sprintf("%s %s %d/%d (%s, managed by %q)", row.Name, row.Phase, row.Joined, row.Size, row.BrokerJob, row.ManagedBy))
		phase, ok := want[row.Name]
		if !ok {
			continue
		}
		if j := brokerJob(t, argocdTarget, row.Name); row.Phase != phase || row.BrokerJob != j.Metadata.Name {
			t.Errorf("status says %s is %s with broker Job %s; want %s with %s", row.Name, row.Phase, row.BrokerJob, phase, j.Metadata.Name)
		}
		if row.Name == other && (row.Joined != 2 || row.Size != 2) {
			t.Errorf("status says %d of %d brokers of %s joined; want 2 of 2", row.Joined, row.Size, other)
		}
		// The example's MiniCluster is named as the Application: status names it by Argo CD's
		// field manager, as it names other's by the instance label Argo CD wrote.
		if row.ManagedBy != "Application/"+argocdApp {
			t.Errorf("status says %s is managed by %q; want Application/%s", row.Name, row.ManagedBy, argocdApp)
		}
		delete(want, row.Name)
	}
	if len(rows) != 2 || len(want) > 0 {
		t.Errorf("status -n %s shows %d rows (%s); want one for %s and one for %s", argocdTarget, len(rows), strings.Join(seen, "; "), argocdApp, other)
	}
	return strings.Join(seen, "; ")
}

// miniClusterUIDs are the UIDs of every object of the MiniClusters in the Argo CD tests'
// namespace, pods and certificates included, by kind and name.
func miniClusterUIDs(t *testing.T, instances ...string) map[string]string {
	t.Helper()
	uids := map[string]string{}
	for _, instance := range instances {
		for _, resource := range []string{"jobs", "pods", "configmaps", "secrets", "services", "serviceaccounts", "roles", "rolebindings"} {
			for _, o := range miniClusterObjects(t, resource, instance) {
				uids[resource+"/"+o.Name] = o.UID
			}
		}
	}
	return uids
}

// miniClusterObjects is the metadata of the objects of one resource (jobs, pods, ...) that the
// contract label gives to MiniCluster instance, in the Argo CD tests' namespace.
func miniClusterObjects(t *testing.T, resource, instance string) []objectMeta {
	t.Helper()
	var l struct {
		Items []struct {
			Metadata objectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := listObjects(&l, argocdTarget, resource, labelMiniCluster+"="+instance); err != nil {
		t.Fatal(err)
	}
	metas := make([]objectMeta, len(l.Items))
	for i, o := range l.Items {
		metas[i] = o.Metadata
	}
	return metas
}

// sameUIDs fails the test for each object that after (what) does not have the same UID as before,
// or is new.
func sameUIDs(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for _, o := range slices.Sorted(maps.Keys(before)) {
		if uid, ok := after[o]; !ok {
			t.Errorf("%s deleted %s", what, o)
		} else if uid != before[o] {
			t.Errorf("%s replaced %s", what, o)
		}
	}
	for _, o := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[o]; !ok {
			t.Errorf("%s created %s", what, o)
		}
	}
}

// TestArgoCDLive runs both setups of examples/argocd, one after the other: they share Argo CD's
// namespace and settings, and the plugin setup changes argocd-cm while it runs. Like every live
// test it runs beside the others, and takes its slot once Argo CD is built (slots_test.go).
func TestArgoCDLive(t *testing.T) {
	t.Parallel()
	requireImages(t)
	needArgoCD(t)
	takeSlotAhead(t)
	t.Run("KustomizeExec", testArgoCDLiveKustomizeExec)
	t.Run("CMP", testArgoCDLiveCMP)
}

// testArgoCDLiveKustomizeExec is setup (a): Argo CD's own kustomize with --enable-exec runs the
// generator from the repo server's PATH.
func testArgoCDLiveKustomizeExec(t *testing.T) {
	a := newArgoCDTest(t, "kustomize-exec")
	rev := gitCmd(t, a.repo.dir, "rev-parse", "HEAD")
	first := argocdFirstSync(t, a, rev)
	const persistent = "persistent-argocd"

	t.Run("health means brokers joined", func(t *testing.T) {
		rev := addPersistent(t, a, persistent)
		// Sample Argo CD's health and the pods' readiness together: Healthy must never be seen
		// while a broker has not joined. The Application's health is its least healthy resource's
		// (the other MiniCluster's Job is complete), and Argo CD v3 keeps the health of single
		// resources out of the Application by default (--persist-resource-health).
		var progressing int
		var healthyAt time.Duration
		start := time.Now()
		waitFor(t, "Argo CD reports the Application Healthy with the persistent MiniCluster", argocdStepLimit, func() (bool, string, error) {
			var app argocdApplication
			if err := getObject(&app, argocdNamespace, "applications", argocdApp); err != nil {
				return false, "", err
			}
			var l jobList
			if err := listObjects(&l, argocdTarget, "jobs", selector(persistent, "broker")); err != nil || len(l.Items) != 1 {
				return false, fmt.Sprintf("%d broker Jobs (%v)", len(l.Items), err), nil
			}
			health := app.Status.Health.Status
			if health == "Progressing" && strings.Contains(app.Status.Health.Message, l.Items[0].Metadata.Name) {
				progressing++
			}
			// Health is Argo CD's view of the cluster only once the sync is over: while it runs,
			// the Application's health can be that of the resources before it.
			if op := app.Status.OperationState; app.Status.Sync.Status != "Synced" || app.Status.Sync.Revision != rev || op == nil || op.Phase == "Running" {
				return false, "the sync of the new revision is not over: " + app.state(), nil
			}
			ready := 0
			for _, p := range pods(t, argocdTarget, selector(persistent, "broker")) {
				if p.ready() {
					ready++
				}
			}
			if health == "Healthy" && ready < 2 {
				return false, "", fmt.Errorf("Argo CD reports the Application Healthy with %d of 2 broker pods Ready: %s", ready, app.state())
			}
			healthyAt = time.Since(start)
			return health == "Healthy", fmt.Sprintf("%s, %d pods Ready", app.state(), ready), nil
		})
		if progressing == 0 {
			t.Errorf("Argo CD never reported the Application Progressing because of the persistent broker Job before its brokers joined")
		}
		// Joined, as the brokers see it, too.
		ranksReachable(t, argocdTarget, brokerJob(t, argocdTarget, persistent).Metadata.Name, 2, time.Minute)
		synced(t, rev)
		t.Logf("with the persistent MiniCluster: Progressing in %d samples, Healthy %.1fs after the refresh, with both brokers Ready and both ranks reachable",
			progressing, healthyAt.Seconds())
	})

	t.Run("edit the command", func(t *testing.T) { argocdEdit(t, a, first) })
	t.Run("failed command", func(t *testing.T) { argocdFailedCommand(t, a, "echo hello argocd-edit") })

	t.Run("self-healing", func(t *testing.T) {
		// selfHeal: true, as the examples set it: the headless Service and the broker Job of the
		// running persistent MiniCluster, deleted by hand, come back, and the brokers join again.
		svc0, job0 := objectUID(t, "services", persistent), brokerJob(t, argocdTarget, persistent)
		cert0 := certificate(t, argocdTarget, persistent)
		mustKube(t, nil, "-n", argocdTarget, "delete", "service", persistent, "--wait=true")
		mustKube(t, nil, "-n", argocdTarget, "delete", "job", job0.Metadata.Name, "--wait=true")
		deleted := time.Now()
		waitFor(t, "Argo CD puts the Service and the broker Job back", argocdStepLimit, func() (bool, string, error) {
			var svc, j struct {
				Metadata objectMeta `json:"metadata"`
			}
			errS, errJ := getObject(&svc, argocdTarget, "services", persistent), getObject(&j, argocdTarget, "jobs", job0.Metadata.Name)
			back := errS == nil && errJ == nil && svc.Metadata.UID != svc0 && j.Metadata.UID != job0.Metadata.UID
			return back, fmt.Sprintf("Service: %v, Job: %v", errOrEmpty(errS), errOrEmpty(errJ)), nil
		})
		back := time.Since(deleted)
		brokersReady(t, argocdTarget, persistent, 2, runningLimit)
		ranksReachable(t, argocdTarget, job0.Metadata.Name, 2, time.Minute)
		joined := time.Since(deleted)
		// The keygen Job owns the certificate too, so the garbage collector kept it.
		if cert := certificate(t, argocdTarget, persistent); cert.Metadata.UID != cert0.Metadata.UID {
			t.Errorf("the certificate was replaced (uid %s -> %s)", cert0.Metadata.UID, cert.Metadata.UID)
		}
		t.Logf("deleted the headless Service and broker Job by hand: Argo CD put both back %.1fs later; 2 brokers joined with the same certificate %.1fs after the deletion",
			back.Seconds(), joined.Seconds())
	})

	// The faults below leave the running objects as they are: these are their UIDs.
	running := func() map[string]string {
		return map[string]string{
			"hello broker Job":       brokerJob(t, argocdTarget, argocdApp).Metadata.UID,
			"persistent broker Job":  brokerJob(t, argocdTarget, persistent).Metadata.UID,
			"persistent Service":     objectUID(t, "services", persistent),
			"persistent certificate": certificate(t, argocdTarget, persistent).Metadata.UID,
		}
	}
	unchanged := func(t *testing.T, before map[string]string, after string) {
		t.Helper()
		for what, uid := range running() {
			if uid != before[what] {
				t.Errorf("%s: the %s was replaced", after, what)
			}
		}
		brokersReady(t, argocdTarget, persistent, 2, runningLimit)
	}

	t.Run("invalid MiniCluster", func(t *testing.T) {
		// The sync fails with our message, which names the object and the field, in the
		// Application's conditions; nothing running changes. (kustomize gives a generator no file
		// name: the ResourceList it passes has none.)
		before := running()
		a.repo.replace(t, a.appFile, "  size: 4\n", "  size: -3\n")
		a.repo.push(t, "An invalid MiniCluster")
		refresh(t)
		msg := applicationCondition(t, "ComparisonError", "spec.size")
		if !strings.Contains(msg, "MiniCluster/"+argocdApp+": spec.size") {
			t.Errorf("the Application's condition does not name the object and the field:\n%s", msg)
		}
		unchanged(t, before, "the invalid commit")
		t.Logf("the Application's condition ComparisonError says: %s", msg)
		a.repo.replace(t, a.appFile, "  size: -3\n", "  size: 4\n")
		rev := a.repo.push(t, "Fix the MiniCluster")
		refresh(t)
		// The fixed revision renders what runs: nothing to sync. Argo CD may keep the failed
		// revision's condition until its next sync (seen with v3.6.1).
		app, _ := synced(t, rev, "ComparisonError")
		t.Logf("fixed: %s", app.state())
	})

	t.Run("binary missing from the repo server's PATH", func(t *testing.T) {
		before := running()
		tool := filepath.Join(argocdState(), "repo-server", "bin", "minicluster-fn")
		if err := os.Remove(tool); err != nil {
			t.Fatal(err)
		}
		restored := false
		defer func() {
			if !restored {
				installArgoCDTool(t, "repo-server")
			}
		}()
		refresh(t)
		msg := applicationCondition(t, "ComparisonError", `exec: "minicluster-fn": executable file not found`)
		unchanged(t, before, "the missing binary")
		t.Logf("with minicluster-fn missing from the repo server's PATH, the Application's condition ComparisonError says: %s", msg)
		installArgoCDTool(t, "repo-server")
		restored = true
		refresh(t)
		app, _ := synced(t, gitCmd(t, a.repo.dir, "rev-parse", "HEAD"), "ComparisonError")
		t.Logf("with the binary back: %s", app.state())
	})

	t.Run("empty render", func(t *testing.T) {
		// Without --enable-exec kustomize skips the generator silently and renders nothing;
		// automated sync with allowEmpty false (the examples') must not prune the MiniClusters.
		before := running()
		mustKube(t, nil, "-n", argocdNamespace, "patch", "configmap", "argocd-cm", "--type=merge",
			"-p", `{"data":{"kustomize.buildOptions":"--enable-alpha-plugins"}}`)
		restored := false
		defer func() {
			if !restored {
				patchArgoCDSettings(t, filepath.Join(suite.repo, "examples", "argocd", "kustomize-exec", "argocd-cm-patch.yaml"))
			}
		}()
		refresh(t)
		msg := applicationCondition(t, "SyncError", "auto-sync will wipe out all resources")
		app := getApplication(t)
		pruning := 0
		for _, r := range app.Status.Resources {
			if r.RequiresPruning {
				pruning++
			}
		}
		if app.Status.Sync.Status != "OutOfSync" || pruning != len(app.Status.Resources) {
			t.Errorf("with an empty render: %s; %d of %d resources require pruning", app.state(), pruning, len(app.Status.Resources))
		}
		// Give automated sync time to act: it must not.
		time.Sleep(10 * time.Second)
		unchanged(t, before, "the empty render")
		t.Logf("with kustomize.buildOptions lacking --enable-exec: sync %s, all %d resources shown as requiring pruning, none pruned; the condition SyncError says: %s",
			app.Status.Sync.Status, pruning, msg)
		patchArgoCDSettings(t, filepath.Join(suite.repo, "examples", "argocd", "kustomize-exec", "argocd-cm-patch.yaml"))
		restored = true
		refresh(t)
		// Argo CD clears a SyncError condition at its next sync, and the render it gets now is
		// what runs already: nothing to sync.
		app, _ = synced(t, gitCmd(t, a.repo.dir, "rev-parse", "HEAD"), "SyncError")
		t.Logf("with --enable-exec back: %s", app.state())
	})

	t.Run("queued by Kueue", func(t *testing.T) { argocdKueue(t, a) })
	t.Run("delete a MiniCluster", func(t *testing.T) { argocdDelete(t, a, persistent) })
}

// argocdKueue (make test-all): two queued MiniClusters added to the Application, one after the
// other, with room in their ClusterQueue's quota for one. While the first runs, the second waits
// suspended, and three hard refreshes with self-heal on never suspend the first again nor start the
// second. With the ClusterQueue held (stopPolicy Hold: no new admission) when the first ends, the
// queued Job is the only one not Healthy: the Application reads Progressing (the health check of
// examples/argocd), not Suspended as with Argo CD's own. Released, the second runs and completes,
// and the Application is Synced and Healthy. They are removed from the Application at the end.
func argocdKueue(t *testing.T, a *argocdTest) {
	exhaustive(t, "Kueue with Argo CD")
	label := needKueue(t)
	queue := kueueQueue(t, "live-kueue-argocd", "300m")
	localQueue(t, label, argocdTarget, queue)

	const first, second = "kueue-run", "kueue-queued"
	generator := "metadata:\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: minicluster-fn\n"
	kustomization := a.repo.read(t, argocdAppDir+"/kustomization.yaml")
	t.Cleanup(func() {
		a.repo.write(t, argocdAppDir+"/kustomization.yaml", kustomization)
		rev := a.repo.push(t, "Without the queued MiniClusters")
		refresh(t)
		synced(t, rev)
	})
	brokerJobOf := func(name string) (job, error) {
		var l jobList
		if err := listObjects(&l, argocdTarget, "jobs", selector(name, "broker")); err != nil || len(l.Items) != 1 {
			return job{}, fmt.Errorf("broker Jobs of %s: %d (%v)", name, len(l.Items), err)
		}
		return l.Items[0], nil
	}
	add := func(name, command string) {
		a.repo.write(t, argocdAppDir+"/"+name+".yaml", strings.Replace(queuedMiniCluster(name, queue, command), "metadata:\n", generator, 1))
		a.repo.replace(t, argocdAppDir+"/kustomization.yaml", "  - minicluster.yaml\n", "  - minicluster.yaml\n  - "+name+".yaml\n")
		a.repo.push(t, "A queued MiniCluster: "+name)
		refresh(t)
	}
	suspended := func(j job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

	add(first, "sleep 60")
	var firstJob, secondJob string
	waitFor(t, "the broker pods of "+first+" running", argocdStepLimit, func() (bool, string, error) {
		j, err := brokerJobOf(first)
		if err != nil {
			return false, err.Error(), nil
		}
		firstJob = j.Metadata.Name
		n := activePods(t, argocdTarget, firstJob)
		return n == 2, fmt.Sprintf("%d active broker pods", n), nil
	})
	uids := podUIDs(t, argocdTarget, first)
	// No new admission from here on; what runs goes on.
	mustKube(t, []byte(`{"spec":{"stopPolicy":"Hold"}}`), "patch", "clusterqueue", queue, "--type=merge", "--patch-file=/dev/stdin")
	add(second, "sleep 5")
	waitFor(t, "the second MiniCluster's broker Job, suspended by Kueue", argocdStepLimit, func() (bool, string, error) {
		j, err := brokerJobOf(second)
		if err != nil {
			return false, err.Error(), nil
		}
		secondJob = j.Metadata.Name
		return suspended(j), fmt.Sprintf("suspended %v", suspended(j)), nil
	})
	for i := 1; i <= 3; i++ {
		refresh(t)
		time.Sleep(5 * time.Second)
		j, err1 := brokerJobOf(first)
		q, err2 := brokerJobOf(second)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if suspended(j) && activePods(t, argocdTarget, firstJob) > 0 {
			t.Fatalf("after refresh %d the running MiniCluster's Job %s is suspended", i, firstJob)
		}
		if !suspended(q) {
			t.Fatalf("after refresh %d the queued MiniCluster's Job %s is not suspended", i, secondJob)
		}
	}
	now := podUIDs(t, argocdTarget, first)
	for name, uid := range uids {
		if now[name] != uid {
			t.Errorf("broker pod %s of the running MiniCluster was replaced during the refreshes", name)
		}
	}
	jobComplete(t, argocdTarget, firstJob, kueueLimit)
	// Every resource but the held Job is Healthy now: the Application's health is that Job's.
	var health string
	refresh(t)
	waitFor(t, "the Application Progressing with only the queued Job not Healthy", argocdStepLimit, func() (bool, string, error) {
		app := getApplication(t)
		health = app.Status.Health.Status
		if health == "Suspended" || health == "Healthy" {
			return false, "", fmt.Errorf("with the queued Job %s the Application is %s: %s", secondJob, health, app.state())
		}
		return health == "Progressing" && app.Status.Sync.Status == "Synced", app.state(), nil
	})
	mustKube(t, []byte(`{"spec":{"stopPolicy":"None"}}`), "patch", "clusterqueue", queue, "--type=merge", "--patch-file=/dev/stdin")
	jobComplete(t, argocdTarget, secondJob, kueueLimit)
	app, _ := synced(t, gitCmd(t, a.repo.dir, "rev-parse", "HEAD"))
	t.Logf("three hard refreshes with self-heal left the running and the queued MiniCluster as they were; with only the queued Job left, the Application was %s; released, it completed: %s",
		health, app.state())
}

// testArgoCDLiveCMP is setup (b): the plugin sidecar renders the Application that names it; Argo
// CD's own kustomize has no --enable-exec. It runs under Argo CD's label tracking
// (newArgoCDTest), with two MiniClusters in the Application before one is deleted.
func testArgoCDLiveCMP(t *testing.T) {
	a := newArgoCDTest(t, "cmp")
	const persistent = "persistent-cmp"
	first := argocdFirstSync(t, a, gitCmd(t, a.repo.dir, "rev-parse", "HEAD"))
	// The plugin server rendered it: its log since the Application was applied.
	if plugin := readLog(t, "argocd-cmp-server")[a.pluginLog:]; !strings.Contains(plugin, "grpc.method=GenerateManifest") {
		t.Errorf("the plugin server's log shows no manifest generation since the Application was applied:\n%s", plugin)
	}
	t.Run("edit the command", func(t *testing.T) { argocdEdit(t, a, first) })
	t.Run("failed command", func(t *testing.T) { argocdFailedCommand(t, a, "echo hello argocd-edit") })
	t.Run("two MiniClusters under label tracking", func(t *testing.T) {
		synced(t, addPersistent(t, a, persistent))
		argocdLabelTracking(t, a, persistent)
	})
	t.Run("delete a MiniCluster", func(t *testing.T) { argocdDelete(t, a, persistent) })
}

// readLog is the log of a host component (tests/cluster's $STATE/log).
func readLog(t *testing.T, component string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(suite.state, "log", component+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// objectUID is the UID of a named object in the Argo CD tests' target namespace.
func objectUID(t *testing.T, resource, name string) string {
	t.Helper()
	var o struct {
		Metadata objectMeta `json:"metadata"`
	}
	if err := getObject(&o, argocdTarget, resource, name); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.UID
}
