package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkResult is one result of check -o json (the fields these tests read).
type checkResult struct {
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// runCheck runs minicluster-fn check -o json with the kubeconfig and returns its results by check
// name (the last of a name wins; these tests check one MiniCluster at most).
func runCheck(t *testing.T, kubeconfig string, args ...string) (map[string]checkResult, fnResult) {
	t.Helper()
	res := runFn(t, []string{"HOME=" + t.TempDir()}, "", append([]string{"check", "-o", "json", "--kubeconfig", kubeconfig}, args...)...)
	var report struct {
		Kind    string        `json:"kind"`
		Results []checkResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &report); err != nil || report.Kind != "MiniClusterCheck" {
		t.Fatalf("check -o json: %v\n%s", err, res)
	}
	out := map[string]checkResult{}
	for _, r := range report.Results {
		out[r.Check] = r
	}
	return out, res
}

// testCheck: check against a real API server, in a namespace that enforces Pod Security
// "restricted". As the server's admin: the features pass (v1.36), the SelfSubjectAccessReviews
// allow everything, restricted refuses the default broker pods (root) and a pull Secret that
// exists is found by its metadata. With the namespace's view role only: access fails and what
// the role cannot read (nodes, Secrets, another subject's rights) cannot be told.
func (c *cluster) testCheck(t *testing.T) {
	ns := c.namespace(t, "check", restrictedNamespace)
	if _, err := c.cs.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mc.yaml")
	doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: checked}\nspec:\n  size: 2\n" +
		"  containers: [{image: ubuntu:noble, command: hostname, imagePullSecret: registry}]\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}

	admin := c.kubeconfigFor(t, c.config.BearerToken, ns)
	got, res := runCheck(t, admin, file)
	if res.code == 0 {
		t.Errorf("check passed in a restricted namespace:\n%s", res)
	}
	for name, want := range map[string]string{
		"indexed-job": "Passed", "pod-failure-policy": "Passed", "pod-replacement-policy": "Passed",
		"namespace": "Passed", "access": "Passed", "image-pull-secret": "Passed", "pod-security": "Failed",
	} {
		if got[name].Status != want {
			t.Errorf("as admin, %s: %+v, want %s\n%s", name, got[name], want, res)
		}
	}
	if m := got["pod-security"].Message; !strings.Contains(m, "the broker pods") || !strings.Contains(m, "may run as root") || strings.Contains(m, "keygen") {
		t.Errorf("pod-security's message: %s", m)
	}

	viewer := c.viewer(t, ns)
	got, res = runCheck(t, viewer, "--applied-by", "flux-system:kustomize-controller", file)
	if res.code == 0 {
		t.Errorf("check passed with the view role:\n%s", res)
	}
	for name, want := range map[string]string{
		"access": "Failed", "nodes": "Unknown", "image-pull-secret": "Unknown", "access-applied-by": "Unknown",
	} {
		if got[name].Status != want {
			t.Errorf("with the view role, %s: %+v, want %s\n%s", name, got[name], want, res)
		}
	}
	if m := got["access-applied-by"].Message; !strings.Contains(m, "forbidden to create subjectaccessreviews") {
		t.Errorf("access-applied-by's message: %s", m)
	}
}
