package generators

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A broker container whose certificate variable is empty (its Secret's curve.cert holds nothing)
// must stop with a message saying where the certificate comes from, not start a broker that fails
// later on an empty file.
func TestEntrypointEmptyCertificate(t *testing.T) {
	sb := newSandbox(t, caseNamed(t, "hello-world"))
	sb.run(t, InitScriptKey, 0)
	res := runCommand(t, sb.command(t, WaitScriptKey(0), 0, envCurveCert+"="))
	if res.code == 0 {
		t.Fatalf("the broker script went on without the certificate:\n%s", res.output)
	}
	for _, want := range []string{envCurveCert + " is empty", "the key " + CurveCertKey} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(sb.dir, "flux.log")); strings.Contains(string(log), "\nstart\n") {
		t.Errorf("flux started without a certificate: %s", log)
	}
}
