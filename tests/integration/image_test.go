package integration

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testKeygenImage runs the keygen Job's container of the keygen-image option as kubelet would: the
// project image, its arguments as rendered, as nobody on a read-only root filesystem, with no credentials but a
// ServiceAccount token, CA and namespace mounted at the in-cluster paths and the
// KUBERNETES_SERVICE_HOST/PORT variables. So the in-cluster code path is the one tested.
// It needs podman and MINICLUSTER_FN_IMAGE (make container-test sets both up).
func (c *cluster) testKeygenImage(t *testing.T) {
	image := os.Getenv("MINICLUSTER_FN_IMAGE")
	if image == "" {
		t.Skip("MINICLUSTER_FN_IMAGE is not set: run `make container-test`, which builds the image with podman")
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("podman not found (Debian: apt-get install podman runc): the image is not tested")
	}
	if out, err := exec.Command(podman, "image", "exists", image).CombinedOutput(); err != nil {
		t.Skipf("image %s is not in podman's local storage (%v %s): run `make image`", image, err, out)
	}

	s := c.keygenSetupOf(t, renderHelloWorld(t, projectKeygen), nil)
	secrets := t.TempDir()
	ca, err := os.ReadFile(c.servingCert)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"token":     c.token(t, s.ns, s.account),
		"ca.crt":    string(ca),
		"namespace": s.ns,
	} {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The container runs as nobody; kubelet's projected volume is world-readable too.
	if err := os.Chmod(secrets, 0o755); err != nil {
		t.Fatal(err)
	}
	host, err := url.Parse(c.config.Host)
	if err != nil {
		t.Fatal(err)
	}

	runImage := func() fnResult {
		args := append([]string{"run", "--rm", "--network=host", "--read-only", "--user=65534:65534",
			"--cap-drop=ALL", "--security-opt=no-new-privileges",
			"--volume=" + secrets + ":/var/run/secrets/kubernetes.io/serviceaccount:ro",
			"--env=KUBERNETES_SERVICE_HOST=" + host.Hostname(), "--env=KUBERNETES_SERVICE_PORT=" + host.Port(),
			image}, s.args...)
		cmd := exec.Command(podman, args...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("podman run: %v", err)
			}
			code = ee.ExitCode()
		}
		return fnResult{out.String(), errOut.String(), code}
	}

	first := runImage()
	if first.code != 0 || !strings.Contains(first.stdout, "created Secret "+s.ns+"/"+s.name) {
		t.Fatalf("keygen from the image: %s", first)
	}
	secret := c.getSecret(t, s.ns, s.name)
	// The Service, then the keygen Job (its name and UID as kubelet passes them, from the pod's
	// labels).
	if refs := secret.OwnerReferences; len(refs) != 2 || refs[0].Kind != "Service" || refs[0].Name != s.service ||
		refs[1].Kind != "Job" || refs[1].Name != s.job.GetName() || refs[1].UID != s.job.GetUID() {
		t.Errorf("ownerReferences = %+v, want the Service %s and the keygen Job %s", refs, s.service, s.job.GetName())
	}
	if second := runImage(); second.code != 0 || !strings.Contains(second.stdout, "left unchanged") {
		t.Errorf("second keygen from the image: %s", second)
	}
}
