package live

import (
	"bytes"
	"errors"
	"fmt"
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
}

func newGitOpsRepo(t *testing.T, srv *gitServer, system, target string) *gitopsRepo {
	t.Helper()
	r := &gitopsRepo{dir: t.TempDir(), url: srv.newRepository(t, "hpc"), system: system, target: target,
		fluxcdObjectsRel: "clusters/live/miniclusters.yaml"}
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
	cmd := exec.Command("bash", filepath.Join(suite.repo, "examples", "fluxcd", "render.sh"),
		"-f", r.fluxcdObjectsRel, "deploy/miniclusters", "hpc/", "--",
		"--url", r.url, "--branch", "main", "--namespace", r.system, "--target-namespace", r.target,
		"--source-interval", fluxcdSourceInterval.String(), "--timeout", fluxcdTimeout.String())
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "MINICLUSTER_FN="+suite.fn)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commit renders, commits everything and pushes, and returns the revision as Flux CD names it.
func (r *gitopsRepo) commit(t *testing.T, message string) string {
	t.Helper()
	if out, err := r.render(t); err != nil {
		t.Fatalf("render.sh: %v\n%s", err, out)
	}
	gitCmd(t, r.dir, "add", "--all")
	gitCmd(t, r.dir, "commit", "--quiet", "-m", message)
	gitCmd(t, r.dir, "push", "--quiet", "origin", "main")
	return "main@sha1:" + gitCmd(t, r.dir, "rev-parse", "HEAD")
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
		LastAppliedRevision   string      `json:"lastAppliedRevision"`
		LastAttemptedRevision string      `json:"lastAttemptedRevision"`
		Conditions            []condition `json:"conditions"`
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
	requireImages(t)
	needFluxCD(t)
	// Namespaces in cleanup order (last made, first deleted): the Flux CD objects go first, and
	// kustomize-controller's finalizers prune what they applied while the target still exists.
	target := namespace(t, "fluxcd")
	system := namespace(t, "fluxcd-system")
	srv := startGitServer(t)
	repo := newGitOpsRepo(t, srv, system, target)

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
		if strings.Contains(repo.read(t, repo.fluxcdObjectsRel), helloKs) {
			t.Errorf("render.sh -f still writes Kustomization %s", helloKs)
		}
		kustomizationReady(t, system, "flux-system", rev, fluxcdStepLimit)
		took := gone(t, system, "kustomizations", helloKs, fluxcdStepLimit)
		for _, resource := range []string{"jobs", "pods", "configmaps", "secrets", "services"} {
			waitFor(t, "every "+resource+" of "+hello+" pruned", time.Minute, func() (bool, string, error) {
				var l struct {
					Items []struct {
						Metadata objectMeta `json:"metadata"`
					} `json:"items"`
				}
				if err := listObjects(&l, target, resource, "app.kubernetes.io/instance="+hello); err != nil {
					return false, "", err
				}
				var names []string
				for _, o := range l.Items {
					names = append(names, o.Metadata.Name)
				}
				return len(names) == 0, strings.Join(names, ", "), nil
			})
		}
		// The certificate is not in Git: the keygen Job made it, owned by the headless Service, and
		// the garbage collector removed it with the Service.
		gone(t, target, "secrets", certSecret(hello), time.Minute)
		after := brokerJob(t, target, persistent)
		if after.Metadata.UID != before.Metadata.UID {
			t.Errorf("deleting %s replaced the broker Job of %s", hello, persistent)
		}
		kustomizationReady(t, system, persistentKs, rev, fluxcdStepLimit)
		t.Logf("Kustomization %s and its objects pruned %.1fs after the push; %s untouched", helloKs, took.Seconds(), persistent)
	})
}
