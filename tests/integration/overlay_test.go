package integration

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// kustomizeBinary is the kustomize the overlays are built with: KUSTOMIZE, else <repo>/bin/kustomize.
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("KUSTOMIZE")
	if p == "" {
		p = filepath.Join(repoRoot(t), "bin", "kustomize")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("kustomize not found at %s (set KUSTOMIZE): run `make integration`, which installs it", p)
	}
	return p
}

// overlay is one kustomize overlay's output as applied.
type overlay struct {
	prefix string
	objs   []*unstructured.Unstructured
}

// buildOverlays builds two overlays of examples/hello-world with the given name prefixes, each
// with examples/overlay/kustomizeconfig.yaml, with the real kustomize.
func buildOverlays(t *testing.T, prefixes ...string) []overlay {
	t.Helper()
	kustomize := kustomizeBinary(t)
	root := repoRoot(t)
	dir := t.TempDir()
	mc, err := os.ReadFile(filepath.Join(root, "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The example names the function relative to the repository; here it is the binary under test.
	mcText := strings.Replace(string(mc), "path: ../../bin/minicluster-fn", "path: "+fnBinary(t), 1)
	if mcText == string(mc) {
		t.Fatal("examples/hello-world/minicluster.yaml no longer has exec path ../../bin/minicluster-fn")
	}
	// The options whose objects select the broker pods by label too: the required anti-affinity
	// term and the PodDisruptionBudget.
	withOptions := strings.Replace(mcText, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/broker-spread: Required\n    minicluster-fn.dev/eviction: WaitForCommand\n", 1)
	if withOptions == mcText {
		t.Fatal("examples/hello-world/minicluster.yaml no longer has metadata.annotations")
	}
	mcText = withOptions
	config, err := os.ReadFile(filepath.Join(root, "examples", "overlay", "kustomizeconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"base/minicluster.yaml":   mcText,
		"base/kustomization.yaml": "generators:\n  - minicluster.yaml\n",
	}
	for _, p := range prefixes {
		files[p+"/kustomizeconfig.yaml"] = string(config)
		files[p+"/kustomization.yaml"] = "namePrefix: " + p + "-\nresources:\n  - ../base\nconfigurations:\n  - kustomizeconfig.yaml\n"
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out []overlay
	for _, p := range prefixes {
		cmd := exec.Command(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", filepath.Join(dir, p))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("kustomize build %s: %v\n%s", p, err, stderr.String())
		}
		out = append(out, overlay{prefix: p, objs: decodeStream(t, stdout)})
	}
	return out
}

// testOverlays: two overlays of one MiniCluster with different name prefixes, applied to one
// namespace, share nothing. Every object name differs, each headless Service selects only its own
// overlay's pods, and each overlay's keygen Job (run with a real token of its ServiceAccount)
// creates its own certificate, owned by its own Service, which is the one its broker pods mount.
// The test server runs no garbage collector, so pruning is shown by the owner references: deleting
// one overlay's Service can only collect that overlay's certificate.
func (c *cluster) testOverlays(t *testing.T) {
	ctx := context.Background()
	overlays := buildOverlays(t, "team-a", "team-b")
	ns := c.namespace(t, "overlays", nil)

	owner := map[string]string{} // object reference -> overlay
	for _, o := range overlays {
		for _, obj := range o.objs {
			if prev, ok := owner[ref(obj)]; ok {
				t.Errorf("%s is in both overlays %s and %s", ref(obj), prev, o.prefix)
			}
			owner[ref(obj)] = o.prefix
		}
	}
	// The keygen Job of each overlay as the API server has it (its UID goes into the arguments).
	appliedKeygen := map[string]*unstructured.Unstructured{}
	for _, o := range overlays {
		for _, a := range c.apply(t, ns, o.objs) {
			if a.GetKind() == "Job" && a.GetLabels()["minicluster-fn.dev/component"] == "keygen" {
				appliedKeygen[o.prefix] = a
			}
		}
	}

	certs := map[string]string{}
	for i, o := range overlays {
		other := overlays[1-i]
		svc := find(t, o.objs, "Service", "headless-service")
		selector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
		sel := labels.SelectorFromSet(selector)
		if !sel.Matches(labels.Set(podLabels(t, find(t, o.objs, "Job", "broker")))) {
			t.Errorf("%s: Service/%s selector %v does not select its own broker pods", o.prefix, svc.GetName(), selector)
		}
		for _, obj := range other.objs {
			if l := podLabels(t, obj); l != nil && sel.Matches(labels.Set(l)) {
				t.Errorf("%s: Service/%s selector %v selects the pods of %s in %s", o.prefix, svc.GetName(), selector, ref(obj), other.prefix)
			}
		}
		// Every other label selector of the MiniCluster's (the anti-affinity terms, the
		// PodDisruptionBudget) selects its own broker pods and none of the other overlay's.
		for _, obj := range o.objs {
			for _, match := range matchLabels(obj.Object) {
				if _, ok := match["minicluster-fn.dev/minicluster"]; !ok {
					continue
				}
				s := labels.SelectorFromSet(match)
				if !s.Matches(labels.Set(podLabels(t, find(t, o.objs, "Job", "broker")))) {
					t.Errorf("%s: %s selects %v, not its own broker pods", o.prefix, ref(obj), match)
				}
				for _, theirs := range other.objs {
					if l := podLabels(t, theirs); l != nil && s.Matches(labels.Set(l)) {
						t.Errorf("%s: %s selects %v, which selects the pods of %s in %s", o.prefix, ref(obj), match, ref(theirs), other.prefix)
					}
				}
			}
		}
		find(t, o.objs, "PodDisruptionBudget", "disruption-budget") // the eviction option's, one

		// The keygen Job's script, run as in its pod with that Job's ServiceAccount.
		job := appliedKeygen[o.prefix]
		command, args, account := keygenContainer(t, find(t, o.objs, "Job", "keygen"), job)
		certName, ownerName := argValue(t, args, "--name"), argValue(t, args, "--owner-service")
		if ownerName != svc.GetName() {
			t.Errorf("%s: keygen --owner-service %s, want the overlay's Service %s", o.prefix, ownerName, svc.GetName())
		}
		if mounted := curveSecret(t, find(t, o.objs, "Job", "broker")); mounted != certName {
			t.Errorf("%s: the broker pods mount Secret %q, keygen creates %q", o.prefix, mounted, certName)
		}
		res := runScript(t, command, args, c.newScriptPod(t, ns, c.token(t, ns, account)))
		if res.code != 0 || !strings.Contains(res.stdout, "created Secret "+ns+"/"+certName) {
			t.Fatalf("%s: the keygen script: %s", o.prefix, res)
		}
		cert := c.getSecret(t, ns, certName)
		liveSvc, err := c.cs.CoreV1().Services(ns).Get(ctx, svc.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if refs := cert.OwnerReferences; len(refs) != 2 || refs[0].Kind != "Service" || refs[0].UID != liveSvc.UID ||
			refs[1].Kind != "Job" || refs[1].Name != job.GetName() || refs[1].UID != job.GetUID() {
			t.Errorf("%s: Secret/%s ownerReferences %+v, want Service/%s (uid %s) and the overlay's keygen Job %s (uid %s)",
				o.prefix, certName, refs, liveSvc.Name, liveSvc.UID, job.GetName(), job.GetUID())
		}
		// The arguments kustomize rewrote name the overlay's MiniCluster in the certificate too.
		// The overlay's MiniCluster label follows the Service's name (kustomizeconfig.yaml), so the
		// two overlays are two MiniClusters to every reader of the label.
		if got, want := cert.Labels["minicluster-fn.dev/minicluster"], svc.GetLabels()["minicluster-fn.dev/minicluster"]; got != want || want != svc.GetName() {
			t.Errorf("%s: Secret/%s minicluster-fn.dev/minicluster label %q, Service/%s's %q, want both the Service's name",
				o.prefix, certName, got, svc.GetName(), want)
		}
		certs[certName] = string(cert.Data["curve.cert"])
	}
	if len(certs) != 2 {
		t.Errorf("the overlays' certificate Secrets: %v, want two", slices.Collect(maps.Keys(certs)))
	} else if texts := slices.Collect(maps.Values(certs)); texts[0] == texts[1] {
		t.Error("both overlays hold the same certificate")
	}
}

// matchLabels are the matchLabels maps anywhere in an object.
func matchLabels(v any) []map[string]string {
	var out []map[string]string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if m, ok := e.(map[string]any); ok && k == "matchLabels" {
				set := map[string]string{}
				for lk, lv := range m {
					set[lk], _ = lv.(string)
				}
				out = append(out, set)
				continue
			}
			out = append(out, matchLabels(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, matchLabels(e)...)
		}
	}
	return out
}

// podLabels are the labels of the pods an object makes (a Job's template, a Pod's own), or nil.
func podLabels(t *testing.T, o *unstructured.Unstructured) map[string]string {
	t.Helper()
	switch o.GetKind() {
	case "Job":
		l, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		return l
	case "Pod":
		return o.GetLabels()
	}
	return nil
}

// curveSecret is the Secret of a broker Job's flux-curve volume.
func curveSecret(t *testing.T, job *unstructured.Unstructured) string {
	t.Helper()
	volumes, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		v := v.(map[string]any)
		if v["name"] == "flux-curve" {
			name, _, _ := unstructured.NestedString(v, "secret", "secretName")
			return name
		}
	}
	t.Fatalf("Job/%s has no flux-curve volume", job.GetName())
	return ""
}
