package live

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Flux CD tests run the README's Flux CD flow against real source-controller and
// kustomize-controller processes (tests/cluster/fluxcd-up.sh) on the live cluster: a GitOps
// repository holds MiniClusters, examples/fluxcd/render.sh renders them and writes the Flux CD
// objects exactly as the README says, and the commit is pushed to a Git server on loopback. Flux
// CD itself applies those objects, as a user's flux-system Kustomization does: the test applies
// only the bootstrap source and Kustomization that `flux bootstrap` would write.

const (
	// fluxcdSourceInterval is how often the test's sources look for new commits (render.sh's
	// --source-interval, and the bootstrap GitRepository's interval): short, so that an edit
	// lands in seconds, not the 5 minutes of the default.
	fluxcdSourceInterval = 10 * time.Second
	// fluxcdTimeout is the Kustomizations' --timeout. A health check that waited for an object
	// the applied revision lacks would hold a Kustomization for all of it; every step below must
	// be done well before.
	fluxcdTimeout = 5 * time.Minute
	// fluxcdStepLimit bounds one step: a source interval, the apply, and the cluster's own time
	// (keygen, brokers, the command).
	fluxcdStepLimit = 150 * time.Second
)

// gitopsRepo is a working clone of the GitOps repository, in which the test edits MiniClusters,
// renders and pushes.
type gitopsRepo struct {
	dir, url         string
	system, target   string // namespaces: the Flux CD objects', the MiniClusters'
	fluxcdObjectsRel string // the file render.sh -f writes
	timeout          time.Duration
}

// newFluxCDTest is the setup every Flux CD test shares: the stand-in images, the controllers, the
// namespaces live-<name> (the MiniClusters') and live-<name>-system (the Flux CD objects'), a Git
// server, and the GitOps repository on it. The namespaces are made in cleanup order (last made,
// first deleted): the Flux CD objects go first, and kustomize-controller's finalizers prune what
// they applied while the target still exists. Nothing of it is shared with another test but the
// controllers, so the Flux CD tests run side by side with the others: they wait on the
// controllers and the node most of the time, and, long, take their slots ahead (slots_test.go).
func newFluxCDTest(t *testing.T, name string) (*gitopsRepo, *gitServer) {
	t.Helper()
	requireImages(t)
	needFluxCD(t)
	takeSlotAhead(t)
	target := namespace(t, name)
	system := namespace(t, name+"-system")
	srv := startGitServer(t)
	return newGitOpsRepo(t, srv, system, target), srv
}

func newGitOpsRepo(t *testing.T, srv *gitServer, system, target string) *gitopsRepo {
	t.Helper()
	r := &gitopsRepo{dir: t.TempDir(), url: srv.newRepository(t, "hpc"), system: system, target: target,
		fluxcdObjectsRel: "clusters/live/miniclusters.yaml", timeout: fluxcdTimeout}
	gitCmd(t, r.dir, "init", "--quiet", "--initial-branch=main")
	gitCmd(t, r.dir, "remote", "add", "origin", r.url)
	return r
}

func (r *gitopsRepo) write(t *testing.T, rel, text string) {
	t.Helper()
	file := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *gitopsRepo) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replace edits a file of the repository as a user would.
func (r *gitopsRepo) replace(t *testing.T, rel, from, to string) {
	t.Helper()
	text := r.read(t, rel)
	if !strings.Contains(text, from) {
		t.Fatalf("%s has no %q", rel, from)
	}
	r.write(t, rel, strings.Replace(text, from, to, 1))
}

// render runs examples/fluxcd/render.sh from the repository's top directory, as the README's CI
// step does; only the URL, the namespaces and the intervals are the test's.
func (r *gitopsRepo) render(t *testing.T) (string, error) {
	t.Helper()
	return r.renderWith(t, nil, nil, "--url", r.url, "--branch", "main")
}

// renderWith runs render.sh with more options before OUT_DIR (-p), the environment env added, and
// the source's flags for minicluster-fn fluxcd.
func (r *gitopsRepo) renderWith(t *testing.T, options, env []string, sourceFlags ...string) (string, error) {
	t.Helper()
	args := append([]string{filepath.Join(suite.repo, "examples", "fluxcd", "render.sh"), "-f", r.fluxcdObjectsRel}, options...)
	args = append(append(args, "deploy/miniclusters", "hpc/", "--"), sourceFlags...)
	cmd := exec.Command("bash", append(args, "--namespace", r.system, "--target-namespace", r.target,
		"--source-interval", fluxcdSourceInterval.String(), "--timeout", r.timeout.String())...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), "MINICLUSTER_FN="+suite.fn), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commit renders, commits everything and pushes, and returns the revision as Flux CD names it.
func (r *gitopsRepo) commit(t *testing.T, message string) string {
	t.Helper()
	if out, err := r.render(t); err != nil {
		t.Fatalf("render.sh: %v\n%s", err, out)
	}
	return "main@sha1:" + r.push(t, message)
}

// push commits everything as it is and pushes it, and returns the commit's hash.
func (r *gitopsRepo) push(t *testing.T, message string) string {
	t.Helper()
	gitCmd(t, r.dir, "add", "--all")
	gitCmd(t, r.dir, "commit", "--quiet", "-m", message)
	gitCmd(t, r.dir, "push", "--quiet", "origin", "main")
	return gitCmd(t, r.dir, "rev-parse", "HEAD")
}

// bootstrap applies what `flux bootstrap` writes for a repository: a GitRepository and a
// Kustomization that applies the cluster's directory, here clusters/live with the Flux CD
// objects render.sh wrote.
func (r *gitopsRepo) bootstrap(t *testing.T) {
	t.Helper()
	apply(t, []byte(fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: %[1]s
spec:
  interval: %[3]s
  ref:
    branch: main
  url: %[2]s
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: %[1]s
spec:
  interval: 10m0s
  path: ./clusters/live
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`, r.system, r.url, fluxcdSourceInterval)))
}

// helloMiniCluster runs a command on 2 brokers and ends; persistentMiniCluster runs until deleted.
// They name the stand-in images the cluster has (a user names the images of their registry).
func helloMiniCluster(name, command string) string {
	return fmt.Sprintf(`apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: %s
spec:
  size: 2
  logging:
    quiet: true
  flux:
    container:
      image: %s
  containers:
    - image: %s
      command: %s
`, name, suite.images.view, suite.images.app, command)
}

func persistentMiniCluster(name string, size int) string {
	return fmt.Sprintf(`apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: %s
spec:
  size: %d
  maxSize: 3
  interactive: true
  flux:
    container:
      image: %s
  containers:
    - image: %s
`, name, size, suite.images.view, suite.images.app)
}

// kustomization is what the tests read of a Flux CD Kustomization.
type kustomization struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Wait bool `json:"wait"`
	} `json:"spec"`
	Status struct {
		LastAppliedRevision    string      `json:"lastAppliedRevision"`
		LastAttemptedRevision  string      `json:"lastAttemptedRevision"`
		LastHandledReconcileAt string      `json:"lastHandledReconcileAt"`
		Conditions             []condition `json:"conditions"`
	} `json:"status"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (k *kustomization) condition(kind string) condition {
	for _, c := range k.Status.Conditions {
		if c.Type == kind {
			return c
		}
	}
	return condition{}
}

// kustomizationReady waits until the Kustomization has applied revision and is Ready (its health
// checks passed), and returns how long that took.
func kustomizationReady(t *testing.T, ns, name, revision string, limit time.Duration) time.Duration {
	t.Helper()
	return waitFor(t, "Kustomization "+name+" Ready on "+revision, limit, func() (bool, string, error) {
		var k kustomization
		if err := getObject(&k, ns, "kustomizations", name); err != nil {
			if errors.Is(err, errNotFound) {
				return false, "not created yet", nil
			}
			return false, "", err
		}
		ready := k.condition("Ready")
		state := fmt.Sprintf("applied %q, attempted %q, Ready=%s %s: %s", k.Status.LastAppliedRevision,
			k.Status.LastAttemptedRevision, ready.Status, ready.Reason, ready.Message)
		return k.Status.LastAppliedRevision == revision && ready.Status == "True", state, nil
	})
}

// gone waits until the object is deleted.
func gone(t *testing.T, ns, resource, name string, limit time.Duration) time.Duration {
	t.Helper()
	return waitFor(t, resource+"/"+name+" deleted", limit, func() (bool, string, error) {
		var o struct {
			Metadata objectMeta `json:"metadata"`
		}
		err := getObject(&o, ns, resource, name)
		if errors.Is(err, errNotFound) {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		return false, "still there", nil
	})
}

// jobRank0Log is the broker log of rank 0 of the Job (its pods, not those of another Job of the
// same MiniCluster that prune is removing).
func jobRank0Log(t *testing.T, ns, jobName string) string {
	t.Helper()
	var l podList
	if err := listObjects(&l, ns, "pods", "batch.kubernetes.io/job-name="+jobName+",batch.kubernetes.io/job-completion-index=0"); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatalf("Job %s has no rank 0 pod", jobName)
	}
	return brokerLog(t, ns, l.Items[0])
}

// TestFluxCDLiveGit is the README's Flux CD flow from Git, then the edits users make: three
// command edits in a row (each applied and healthy without waiting out a health-check timeout),
// a resize within maxSize, and the deletion of a MiniCluster.
func TestFluxCDLiveGit(t *testing.T) {
	t.Parallel()
	repo, _ := newFluxCDTest(t, "fluxcd")
	system, target := repo.system, repo.target

	const hello, persistent = "hello-fluxcd", "persistent-fluxcd"
	helloFile, persistentFile := "hpc/"+hello+".yaml", "hpc/"+persistent+".yaml"
	repo.write(t, helloFile, helloMiniCluster(hello, "echo flux-cd-edit-0"))
	repo.write(t, persistentFile, persistentMiniCluster(persistent, 2))
	repo.write(t, "hpc/kustomization.yaml", "# Not a MiniCluster: render.sh skips it.\nresources: []\n")
	rev := repo.commit(t, "Two MiniClusters")
	fluxcdObjects := repo.read(t, repo.fluxcdObjectsRel)
	helloKs, persistentKs := "miniclusters-"+hello, "miniclusters-"+persistent

	start := time.Now()
	repo.bootstrap(t)
	kustomizationReady(t, system, "flux-system", rev, fluxcdStepLimit)
	kustomizationReady(t, system, helloKs, rev, fluxcdStepLimit)
	tHello := time.Since(start)
	var k kustomization
	if err := getObject(&k, system, "kustomizations", helloKs); err != nil || !k.Spec.Wait {
		t.Fatalf("Kustomization %s: wait=%v (%v), want true: its MiniCluster ends", helloKs, k.Spec.Wait, err)
	}
	// wait: true made Ready mean that every object of the revision is healthy: the keygen and
	// broker Jobs Complete. Seen here directly, too.
	job0 := brokerJob(t, target, hello)
	if status, _ := job0.condition("Complete"); status != "True" {
		t.Errorf("Kustomization %s is Ready, but broker Job %s is not Complete", helloKs, job0.Metadata.Name)
	}
	if log := jobRank0Log(t, target, job0.Metadata.Name); !strings.Contains(log, "flux-cd-edit-0") {
		t.Errorf("rank 0 of %s did not print the command's output:\n%s", job0.Metadata.Name, log)
	}
	cert0 := certificate(t, target, hello)
	kustomizationReady(t, system, persistentKs, rev, fluxcdStepLimit)
	tPersistent := time.Since(start)
	brokersReady(t, target, persistent, 2, runningLimit)
	persistentJob := brokerJob(t, target, persistent)
	t.Logf("from the bootstrap apply: %s Ready (keygen and broker Jobs complete) after %.1fs, %s Ready (certificate, Service) after %.1fs, its 2 brokers Ready after %.1fs",
		helloKs, tHello.Seconds(), persistentKs, tPersistent.Seconds(), time.Since(start).Seconds())

	t.Run("three edits in a row", func(t *testing.T) {
		previous := job0
		for i := 1; i <= 3; i++ {
			repo.replace(t, helloFile, fmt.Sprintf("flux-cd-edit-%d", i-1), fmt.Sprintf("flux-cd-edit-%d", i))
			rev := repo.commit(t, fmt.Sprintf("Edit %d of the command", i))
			if got := repo.read(t, repo.fluxcdObjectsRel); got != fluxcdObjects {
				t.Errorf("edit %d changed the Flux CD objects:\n%s", i, got)
			}
			took := kustomizationReady(t, system, helloKs, rev, fluxcdStepLimit)
			gone(t, target, "jobs", previous.Metadata.Name, time.Minute)
			j := brokerJob(t, target, hello)
			if j.Metadata.Name == previous.Metadata.Name {
				t.Fatalf("edit %d kept the broker Job name %s", i, j.Metadata.Name)
			}
			if status, _ := j.condition("Complete"); status != "True" {
				t.Errorf("edit %d: Kustomization Ready, but Job %s is not Complete", i, j.Metadata.Name)
			}
			want := fmt.Sprintf("flux-cd-edit-%d", i)
			if log := jobRank0Log(t, target, j.Metadata.Name); !strings.Contains(log, want) {
				t.Errorf("edit %d: rank 0 of %s did not print %q:\n%s", i, j.Metadata.Name, want, log)
			}
			var cert secret
			if err := getObject(&cert, target, "secrets", certSecret(hello)); err != nil {
				t.Fatalf("edit %d: the certificate is gone: %v", i, err)
			}
			if cert.Metadata.UID != cert0.Metadata.UID || !bytes.Equal(cert.Data["curve.cert"], cert0.Data["curve.cert"]) {
				t.Errorf("edit %d replaced the certificate Secret (uid %s -> %s)", i, cert0.Metadata.UID, cert.Metadata.UID)
			}
			t.Logf("edit %d: pushed %s; applied and healthy (new Job %s complete, old Job pruned, same certificate) %.1fs after the push",
				i, rev, j.Metadata.Name, took.Seconds())
			previous = j
		}
	})

	t.Run("resize within maxSize", func(t *testing.T) {
		repo.replace(t, persistentFile, "size: 2\n", "size: 3\n")
		rev := repo.commit(t, "Grow the persistent MiniCluster to 3")
		took := kustomizationReady(t, system, persistentKs, rev, fluxcdStepLimit)
		brokersRunning(t, target, persistent, 3, runningLimit)
		j := brokerJob(t, target, persistent)
		if j.Metadata.UID != persistentJob.Metadata.UID {
			t.Errorf("the resize replaced the broker Job (%s uid %s -> %s %s), want it patched",
				persistentJob.Metadata.Name, persistentJob.Metadata.UID, j.Metadata.Name, j.Metadata.UID)
		}
		if j.Spec.Parallelism == nil || *j.Spec.Parallelism != 3 || j.Spec.Completions == nil || *j.Spec.Completions != 3 {
			t.Errorf("broker Job after the resize: parallelism %v, completions %v, want 3", j.Spec.Parallelism, j.Spec.Completions)
		}
		t.Logf("resize 2 -> 3 applied %.1fs after the push; the same Job %s runs 3 brokers", took.Seconds(), j.Metadata.Name)
	})

	t.Run("delete a MiniCluster", func(t *testing.T) {
		before := brokerJob(t, target, persistent)
		if err := os.Remove(filepath.Join(repo.dir, helloFile)); err != nil {
			t.Fatal(err)
		}
		rev := repo.commit(t, "Remove "+hello)
		pushed := time.Now()
		if strings.Contains(repo.read(t, repo.fluxcdObjectsRel), helloKs) {
			t.Errorf("render.sh -f still writes Kustomization %s", helloKs)
		}
		kustomizationReady(t, system, "flux-system", rev, fluxcdStepLimit)
		gone(t, system, "kustomizations", helloKs, fluxcdStepLimit)
		allPruned(t, target, hello, "jobs", "pods", "configmaps", "secrets", "services")
		// The certificate is not in Git: the keygen Job made it, owned by the headless Service and
		// the keygen Job, and the garbage collector removed it with them.
		gone(t, target, "secrets", certSecret(hello), time.Minute)
		took := time.Since(pushed)
		after := brokerJob(t, target, persistent)
		if after.Metadata.UID != before.Metadata.UID {
			t.Errorf("deleting %s replaced the broker Job of %s", hello, persistent)
		}
		kustomizationReady(t, system, persistentKs, rev, fluxcdStepLimit)
		t.Logf("Kustomization %s and every object of %s, the certificate included, gone %.1fs after the push; %s untouched", helloKs, hello, took.Seconds(), persistent)
	})

	t.Run("targetNamespace and postBuild", func(t *testing.T) {
		// The user's own kustomization of the cluster directory adds postBuild substitution to the
		// Kustomization render.sh wrote (a patch, as Flux CD users do). The variables it sets are
		// used by the MiniCluster's environment, and three of them are also names the scripts use:
		// those must stay as they are in the scripts, or the brokers break.
		const substituted = "substituted-fluxcd"
		ks := "miniclusters-" + substituted
		repo.write(t, "hpc/"+substituted+".yaml", strings.Replace(helloMiniCluster(substituted, "printenv GREETING"),
			"      command:", "      environment:\n        GREETING: ${cluster_greeting}\n      command:", 1))
		repo.write(t, "clusters/live/kustomization.yaml", `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- miniclusters.yaml
patches:
- target:
    kind: Kustomization
    name: `+ks+`
  patch: |
    - op: add
      path: /spec/postBuild
      value:
        substitute:
          cluster_greeting: hello-from-postbuild
          viewroot: /substituted-away
          configroot: /substituted-away
          host: substituted-away
`)
		rev := repo.commit(t, "A MiniCluster with postBuild substitution")
		took := kustomizationReady(t, system, ks, rev, fluxcdStepLimit)
		var k struct {
			Spec struct {
				TargetNamespace string `json:"targetNamespace"`
				PostBuild       *struct {
					Substitute map[string]string `json:"substitute"`
				} `json:"postBuild"`
			} `json:"spec"`
		}
		if err := getObject(&k, system, "kustomizations", ks); err != nil {
			t.Fatal(err)
		}
		if k.Spec.PostBuild == nil || k.Spec.PostBuild.Substitute["viewroot"] == "" || k.Spec.TargetNamespace != target {
			t.Fatalf("Kustomization %s: targetNamespace %q, postBuild %+v: the patch did not apply", ks, k.Spec.TargetNamespace, k.Spec.PostBuild)
		}
		j := brokerJob(t, target, substituted)
		if log := jobRank0Log(t, target, j.Metadata.Name); !strings.Contains(log, "hello-from-postbuild") {
			t.Errorf("rank 0 did not print the substituted environment variable:\n%s", log)
		}
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if err := getObject(&cm, target, "configmaps", j.Metadata.Name+"-entrypoint"); err != nil {
			t.Fatal(err)
		}
		for key, script := range cm.Data {
			if strings.Contains(script, "substituted-away") {
				t.Errorf("postBuild substituted into %s of the scripts ConfigMap", key)
			}
		}
		if !strings.Contains(cm.Data["wait-0.sh"], "${viewroot}") {
			t.Errorf("wait-0.sh lost its ${viewroot}:\n%s", cm.Data["wait-0.sh"])
		}
		t.Logf("%s applied and healthy %.1fs after the push, in %s: the environment substituted (rank 0 printed hello-from-postbuild), the scripts' ${viewroot}, ${configroot} and ${host} untouched",
			ks, took.Seconds(), target)
	})
}

// allPruned waits until no object of each resource with the MiniCluster's instance label is left.
func allPruned(t *testing.T, ns, instance string, resources ...string) {
	t.Helper()
	for _, resource := range resources {
		waitFor(t, "every "+resource+" of "+instance+" pruned", time.Minute, func() (bool, string, error) {
			var l struct {
				Items []struct {
					Metadata objectMeta `json:"metadata"`
				} `json:"items"`
			}
			if err := listObjects(&l, ns, resource, labelMiniCluster+"="+instance); err != nil {
				return false, "", err
			}
			var names []string
			for _, o := range l.Items {
				names = append(names, o.Metadata.Name)
			}
			return len(names) == 0, strings.Join(names, ", "), nil
		})
	}
}

// requestReconcile asks a Flux CD controller to reconcile the object now, as `flux reconcile`
// does: by setting the reconcile.fluxcd.io/requestedAt annotation, whose value it returns (the
// controller copies it to status.lastHandledReconcileAt once it has handled the request).
func requestReconcile(t *testing.T, ns, resource, name string) string {
	t.Helper()
	at := time.Now().Format(time.RFC3339Nano)
	mustKube(t, nil, "-n", ns, "annotate", "--overwrite", resource, name, "reconcile.fluxcd.io/requestedAt="+at)
	return at
}

// sourceState is the Ready condition of a Flux CD source, and the revision of its artifact.
func sourceState(t *testing.T, ns, name string) (condition, string) {
	t.Helper()
	var g struct {
		Status struct {
			Artifact *struct {
				Revision string `json:"revision"`
			} `json:"artifact"`
			Conditions []condition `json:"conditions"`
		} `json:"status"`
	}
	if err := getObject(&g, ns, "gitrepositories", name); err != nil {
		t.Fatal(err)
	}
	var ready condition
	for _, c := range g.Status.Conditions {
		if c.Type == "Ready" {
			ready = c
		}
	}
	revision := ""
	if g.Status.Artifact != nil {
		revision = g.Status.Artifact.Revision
	}
	return ready, revision
}

// TestFluxCDLiveFaults: what goes wrong on the way from Git to a running cluster. A MiniCluster
// that fails validation never reaches the cluster; a command that fails fails its Job, and the
// Kustomization says so with Flux CD's own message; the Git server going away loses nothing; and
// generated objects deleted by hand come back at the next reconcile.
func TestFluxCDLiveFaults(t *testing.T) {
	t.Parallel()
	repo, srv := newFluxCDTest(t, "fluxcd-faults")
	system, target := repo.system, repo.target
	// A health check that cannot pass holds its Kustomization for the whole timeout: short here,
	// where the certificate is lost on purpose.
	repo.timeout = 90 * time.Second

	const hello, steady = "hello-faults", "steady"
	helloFile := "hpc/" + hello + ".yaml"
	helloKs, steadyKs := "miniclusters-"+hello, "miniclusters-"+steady
	repo.write(t, helloFile, helloMiniCluster(hello, "echo before-the-faults"))
	repo.write(t, "hpc/"+steady+".yaml", persistentMiniCluster(steady, 2))
	rev := repo.commit(t, "Two MiniClusters")
	repo.bootstrap(t)
	kustomizationReady(t, system, helloKs, rev, fluxcdStepLimit)
	kustomizationReady(t, system, steadyKs, rev, fluxcdStepLimit)
	brokersReady(t, target, steady, 2, runningLimit)
	helloJob, steadyJob := brokerJob(t, target, hello), brokerJob(t, target, steady)

	t.Run("invalid MiniCluster never reaches the cluster", func(t *testing.T) {
		before := readTree(t, filepath.Join(repo.dir, "deploy"))
		repo.write(t, "hpc/broken.yaml", strings.Replace(helloMiniCluster("broken", "echo never"), "size: 2", "size: -3", 1))
		out, err := repo.render(t)
		if err == nil {
			t.Fatalf("render.sh accepted an invalid MiniCluster:\n%s", out)
		}
		if !strings.Contains(out, "hpc/broken.yaml") || !strings.Contains(out, "spec.size") {
			t.Errorf("render.sh's message does not name the file and the field:\n%s", out)
		}
		if after := readTree(t, filepath.Join(repo.dir, "deploy")); !maps.Equal(before, after) {
			t.Errorf("the failed render changed deploy/")
		}
		// The user's commit lands anyway (CI failed after the merge): Flux CD applies the
		// rendered directory, which did not change.
		rev := "main@sha1:" + repo.push(t, "An invalid MiniCluster")
		kustomizationReady(t, system, helloKs, rev, fluxcdStepLimit)
		kustomizationReady(t, system, steadyKs, rev, fluxcdStepLimit)
		if j := brokerJob(t, target, hello); j.Metadata.UID != helloJob.Metadata.UID {
			t.Errorf("the commit with an invalid MiniCluster replaced Job %s", helloJob.Metadata.Name)
		}
		if j := brokerJob(t, target, steady); j.Metadata.UID != steadyJob.Metadata.UID {
			t.Errorf("the commit with an invalid MiniCluster replaced Job %s", steadyJob.Metadata.Name)
		}
		if err := getObject(&kustomization{}, system, "kustomizations", "miniclusters-broken"); !errors.Is(err, errNotFound) {
			t.Errorf("a Kustomization for the invalid MiniCluster exists (%v)", err)
		}
		if err := os.Remove(filepath.Join(repo.dir, "hpc", "broken.yaml")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("failing command", func(t *testing.T) {
		const failing = "failing"
		// A failed command fails its Job, once (no logging.strict, no backoffLimit needed): the
		// main broker's container exits with the command's status, and the Job's pod failure
		// policy fails it.
		repo.write(t, "hpc/"+failing+".yaml", helloMiniCluster(failing, "sh -c 'exit 3'"))
		rev := repo.commit(t, "A command that fails")
		var k kustomization
		took := waitFor(t, "Kustomization miniclusters-"+failing+" reports the failed Job", repo.timeout+fluxcdStepLimit, func() (bool, string, error) {
			if err := getObject(&k, system, "kustomizations", "miniclusters-"+failing); err != nil {
				return false, err.Error(), nil
			}
			ready := k.condition("Ready")
			state := fmt.Sprintf("attempted %q Ready=%s %s: %s", k.Status.LastAttemptedRevision, ready.Status, ready.Reason, ready.Message)
			return k.Status.LastAttemptedRevision == rev && ready.Status == "False" && ready.Reason == "HealthCheckFailed", state, nil
		})
		j := brokerJob(t, target, failing)
		msg := k.condition("Ready").Message
		if !strings.Contains(msg, "Job/"+target+"/"+j.Metadata.Name) || !strings.Contains(msg, "Failed") {
			t.Errorf("the Kustomization's message does not name the failed Job %s:\n%s", j.Metadata.Name, msg)
		}
		// Flux CD stopped its health check because the Job failed, not at its timeout: its own
		// words for that. The time from the push also holds the source's fetch and the apply, which
		// a loaded machine stretches (90.6 s in a cold run, against a 90 s timeout, for a health
		// check that had failed early after 75 s).
		if !strings.Contains(msg, "failed early due to stalled resources") {
			t.Errorf("Flux CD did not report the failed Job before its health check timeout %s (%.1fs after the push):\n%s", repo.timeout, took.Seconds(), msg)
		}
		if s, why := j.condition("Failed"); s != "True" || !strings.Contains(why, "exit code 3") {
			t.Errorf("Job %s: Failed=%s %q, want the exit code 3 named", j.Metadata.Name, s, why)
		}
		t.Logf("Flux CD reported the failed Job %.1fs after the push (timeout %s): %s", took.Seconds(), repo.timeout, msg)
		if err := os.Remove(filepath.Join(repo.dir, "hpc", failing+".yaml")); err != nil {
			t.Fatal(err)
		}
		rev = repo.commit(t, "Remove the failing MiniCluster")
		gone(t, system, "kustomizations", "miniclusters-"+failing, fluxcdStepLimit)
		gone(t, target, "jobs", j.Metadata.Name, time.Minute)
	})

	t.Run("Git server goes away", func(t *testing.T) {
		srv.stop(t)
		requestReconcile(t, system, "gitrepositories", "miniclusters")
		waitFor(t, "source miniclusters reports that Git is unreachable", fluxcdStepLimit, func() (bool, string, error) {
			ready, _ := sourceState(t, system, "miniclusters")
			return ready.Status == "False", ready.Reason + ": " + ready.Message, nil
		})
		ready, revision := sourceState(t, system, "miniclusters")
		t.Logf("source with the server gone: Ready=%s %s: %s; artifact still %s", ready.Status, ready.Reason, ready.Message, revision)
		// Nothing applied is lost: the Kustomizations keep their last revision, the brokers run.
		requestReconcile(t, system, "kustomizations", steadyKs)
		time.Sleep(fluxcdSourceInterval)
		var k kustomization
		if err := getObject(&k, system, "kustomizations", steadyKs); err != nil {
			t.Fatal(err)
		}
		if k.condition("Ready").Status != "True" {
			t.Errorf("Kustomization %s with the Git server gone: %+v", steadyKs, k.condition("Ready"))
		}
		brokersReady(t, target, steady, 2, runningLimit)
		if j := brokerJob(t, target, steady); j.Metadata.UID != steadyJob.Metadata.UID {
			t.Errorf("the outage replaced Job %s", steadyJob.Metadata.Name)
		}
		srv.start(t)
		repo.replace(t, helloFile, "echo before-the-faults", "echo after-the-outage")
		rev := repo.commit(t, "The first commit after the outage")
		took := kustomizationReady(t, system, helloKs, rev, fluxcdStepLimit)
		if log := jobRank0Log(t, target, brokerJob(t, target, hello).Metadata.Name); !strings.Contains(log, "after-the-outage") {
			t.Errorf("the commit after the outage did not run:\n%s", log)
		}
		t.Logf("the first commit after the outage applied and healthy %.1fs after the push", took.Seconds())
	})

	t.Run("self-healing", func(t *testing.T) {
		// The scripts ConfigMap and the broker Job come back at the next reconcile, and with the Job
		// the brokers, with the certificate they had.
		cert0 := certificate(t, target, steady)
		for _, obj := range []struct{ resource, name string }{
			{"configmaps", brokerJob(t, target, steady).Metadata.Name + "-entrypoint"},
			{"jobs", brokerJob(t, target, steady).Metadata.Name},
		} {
			took := deleteAndWaitBack(t, system, steadyKs, target, obj.resource, obj.name)
			what := "the running brokers kept on"
			if obj.resource == "jobs" {
				brokersReady(t, target, steady, 2, runningLimit)
				what = "2 new brokers Ready"
			}
			var cert secret
			if err := getObject(&cert, target, "secrets", certSecret(steady)); err != nil || cert.Metadata.UID != cert0.Metadata.UID {
				t.Errorf("after %s/%s came back, the certificate is not the one the brokers had (%v)", obj.resource, obj.name, err)
			}
			t.Logf("deleted %s/%s by hand: Flux CD put it back %.1fs after the reconcile request; %s; the certificate stayed", obj.resource, obj.name, took.Seconds(), what)
		}

		// The headless Service and the keygen Job both own the certificate: the garbage collector
		// deletes it only when both are gone. Flux CD puts the Service back; the certificate
		// stays, and the running brokers never notice.
		took := deleteAndWaitBack(t, system, steadyKs, target, "services", steady)
		var kept secret
		if err := getObject(&kept, target, "secrets", certSecret(steady)); err != nil || kept.Metadata.UID != cert0.Metadata.UID {
			t.Errorf("after services/%s was deleted and put back, the certificate is not the one the brokers had (%v)", steady, err)
		}
		brokersReady(t, target, steady, 2, runningLimit)
		t.Logf("deleted services/%s by hand: Flux CD put it back %.1fs after the reconcile request; the certificate stayed (the keygen Job owns it too); the 2 brokers stay Ready",
			steady, took.Seconds())

		// The certificate deleted by hand: it is not in Git, and the keygen Job that made it is
		// complete, so nothing makes it again. The running brokers go on with the certificate they
		// mounted; the Kustomization says that it is missing.
		mustKube(t, nil, "-n", target, "delete", "secret", certSecret(steady), "--wait=true")
		requestReconcile(t, system, "kustomizations", steadyKs)
		var k kustomization
		reported := waitFor(t, "Kustomization "+steadyKs+" reports the missing certificate", repo.timeout+fluxcdStepLimit, func() (bool, string, error) {
			if err := getObject(&k, system, "kustomizations", steadyKs); err != nil {
				return false, "", err
			}
			ready := k.condition("Ready")
			return ready.Status == "False" && strings.Contains(ready.Message, "Secret/"+target+"/"+certSecret(steady)), ready.Reason + ": " + ready.Message, nil
		})
		if n := len(brokersReady(t, target, steady, 2, runningLimit)); n != 2 {
			t.Errorf("%d brokers Ready after the certificate was lost", n)
		}
		t.Logf("deleted the certificate Secret by hand: the 2 running brokers stay Ready; %.1fs after the reconcile request the Kustomization says: %s",
			reported.Seconds(), k.condition("Ready").Message)

		// The way back: delete the keygen Job and the broker Job. Flux CD re-creates both; the
		// keygen Job makes a new certificate, and the new brokers start with it.
		var keygen jobList
		if err := listObjects(&keygen, target, "jobs", selector(steady, "keygen")); err != nil || len(keygen.Items) != 1 {
			t.Fatalf("the keygen Job of %s: %v (%d found)", steady, err, len(keygen.Items))
		}
		mustKube(t, nil, "-n", target, "delete", "job", keygen.Items[0].Metadata.Name, brokerJob(t, target, steady).Metadata.Name, "--wait=true")
		requestReconcile(t, system, "kustomizations", steadyKs)
		recovered := time.Now()
		if c := certificate(t, target, steady); c.Metadata.UID == cert0.Metadata.UID {
			t.Errorf("the certificate after the recovery is the old object %s", c.Metadata.UID)
		}
		brokersReady(t, target, steady, 2, runningLimit)
		// The reconcile's health check began before the keygen Job had run: under load it can
		// wait out its timeout once, and the retry comes after the default --retry-interval (2m).
		kustomizationReady(t, system, steadyKs, k.Status.LastAttemptedRevision, repo.timeout+2*time.Minute+fluxcdStepLimit)
		t.Logf("recovered by deleting the keygen and broker Jobs: a new certificate, 2 brokers Ready and the Kustomization Ready %.1fs after the reconcile request",
			time.Since(recovered).Seconds())
	})
}

// deleteAndWaitBack deletes a generated object by hand, asks Flux CD to reconcile its
// Kustomization, and waits until the object is back (a new object), returning how long after the
// request that took.
func deleteAndWaitBack(t *testing.T, system, ks, ns, resource, name string) time.Duration {
	t.Helper()
	var o struct {
		Metadata objectMeta `json:"metadata"`
	}
	if err := getObject(&o, ns, resource, name); err != nil {
		t.Fatalf("%s/%s: %v", resource, name, err)
	}
	mustKube(t, nil, "-n", ns, "delete", resource, name, "--wait=true")
	requestReconcile(t, system, "kustomizations", ks)
	return waitFor(t, resource+"/"+name+" put back", fluxcdStepLimit, func() (bool, string, error) {
		var now struct {
			Metadata objectMeta `json:"metadata"`
		}
		err := getObject(&now, ns, resource, name)
		if errors.Is(err, errNotFound) {
			return false, "absent", nil
		}
		return err == nil && now.Metadata.UID != o.Metadata.UID, "the old object", err
	})
}

// readTree is the content of every file under dir, by its path inside dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
