package generators

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A broker container whose user cannot read the mounted certificate (non-root, no fsGroup: the
// file is mode 0400 and owned by root) must stop with a message saying what to do, not start a
// broker that fails later on a missing file.
func TestEntrypointUnreadableCertificate(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, caseNamed(t, "hello-world"))
	sb.run(t, InitScriptKey, 0)
	cert := filepath.Join(sb.dir, "curve", "curve.cert")
	if err := os.Chmod(cert, 0o400); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sb.dir, "broker.sh")
	if err := os.WriteFile(p, []byte(sb.script(WaitScriptKey(0))), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{"/bin/bash", p}
	if os.Geteuid() == 0 {
		// As in a pod: the certificate belongs to root, the container runs as another user.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv (util-linux): cannot run the script as another user")
		}
		argv = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
		err = filepath.WalkDir(sb.dir, func(f string, d os.DirEntry, err error) error {
			if err != nil || f == cert {
				return err
			}
			return os.Chmod(f, 0o777)
		})
		if err != nil {
			t.Fatal(err)
		}
		// t.TempDir's own parent directory is private to this user.
		if err := os.Chmod(filepath.Dir(sb.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for d := filepath.Dir(sb.dir); d != "/"; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err != nil || st.Mode().Perm()&0o001 == 0 {
				t.Skipf("the user 65534 cannot reach the sandbox through %s", d)
			}
		}
	} else if err := os.Chmod(cert, 0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(sb.dir, "tmp")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(sb.dir, "home"), "HOSTNAME=" + sb.n.Job + "-0",
		"JOB_COMPLETION_INDEX=0", "FAKE_FLUX_LOG=" + filepath.Join(sb.dir, "flux.log")}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the broker script went on without the certificate:\n%s", out)
	}
	if !strings.Contains(string(out), "cannot read the mounted CURVE certificate") || !strings.Contains(string(out), "fsGroup") {
		t.Errorf("no message saying what to do:\n%s", out)
	}
	if log, _ := os.ReadFile(filepath.Join(sb.dir, "flux.log")); len(log) > 0 {
		t.Errorf("flux ran without a certificate: %s", log)
	}
	if strings.Contains(string(out), "SECRET") {
		t.Errorf("the output holds the certificate's secret key:\n%s", out)
	}
}
