package curve

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests check certificates against real ZeroMQ: pyzmq from Debian
// (python3-zmq, libzmq 4.3.4), which belongs to /usr/bin/python3 and not to
// whatever python3 is first on PATH.

const systemPython = "/usr/bin/python3"

// pyCheck loads each certificate given on the command line with
// zmq.auth.load_certificate and checks zmq.curve_public(secret) == public,
// the check Flux's reader makes with zmq_curve_public. It prints one JSON
// object per file, with the keys decoded by pyzmq's own Z85 codec.
const pyCheck = `
import json, sys, zmq, zmq.auth
from zmq.utils import z85
out = []
for path in sys.argv[1:]:
    r = {"path": path}
    try:
        pub, sec = zmq.auth.load_certificate(path)
        r["ok"] = sec is not None and zmq.curve_public(sec) == pub
        r["public"] = z85.decode(pub).hex()
        if sec is not None:
            r["secret"] = z85.decode(sec).hex()
    except Exception as e:
        r["ok"] = False
        r["error"] = type(e).__name__
    out.append(r)
json.dump(out, sys.stdout)
`

type pyResult struct {
	Path   string `json:"path"`
	OK     bool   `json:"ok"`
	Public string `json:"public"`
	Secret string `json:"secret"`
	Error  string `json:"error"`
}

func requirePyZMQ(t *testing.T) {
	t.Helper()
	if err := exec.Command(systemPython, "-c", "import zmq").Run(); err != nil {
		t.Skip("python3-zmq not installed (apt-get install python3-zmq): real ZeroMQ cross-check skipped")
	}
}

// runPyCheck runs pyCheck once over all paths.
func runPyCheck(t *testing.T, paths ...string) []pyResult {
	t.Helper()
	cmd := exec.Command(systemPython, append([]string{"-c", pyCheck}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", systemPython, err, stderr.Bytes())
	}
	var res []pyResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(paths) {
		t.Fatalf("pyzmq output (%v): %s", err, out)
	}
	return res
}

// writeCert writes data to a fresh file of mode 0600, as Flux requires.
func writeCert(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkAgrees asserts that pyzmq read exactly the keys of c.
func checkAgrees(t *testing.T, r pyResult, c *Cert) {
	t.Helper()
	if r.Public != hex.EncodeToString(c.PublicKey[:]) || r.Secret != hex.EncodeToString(c.SecretKey[:]) {
		t.Errorf("%s: pyzmq decoded keys differ from Go's (public %s vs %x)", r.Path, r.Public, c.PublicKey)
	}
}

func TestZMQAcceptsGeneratedCert(t *testing.T) {
	requirePyZMQ(t)
	dir := t.TempDir()

	good, err := Generate("mc", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Generate("mc", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Swapped: good's public key with another certificate's secret key.
	swapped := &Cert{PublicKey: good.PublicKey, SecretKey: other.SecretKey, Metadata: good.Metadata}
	golden, err := Generate("mc", &countingReader{})
	if err != nil {
		t.Fatal(err)
	}

	paths := []string{
		writeCert(t, dir, "good.cert", good.Marshal()),
		writeCert(t, dir, "swapped.cert", swapped.Marshal()),
		writeCert(t, dir, "golden.cert", golden.Marshal()),
	}
	res := runPyCheck(t, paths...)

	if !res[0].OK {
		t.Errorf("real ZeroMQ rejects the generated certificate: %+v", res[0])
	}
	checkAgrees(t, res[0], good)

	if res[1].OK {
		t.Errorf("real ZeroMQ accepts a certificate with a swapped secret key: %+v", res[1])
	}
	if err := Validate(swapped.Marshal()); !errors.Is(err, ErrKeyMismatch) {
		t.Errorf("Validate(swapped) = %v, want ErrKeyMismatch", err)
	}

	if !res[2].OK {
		t.Errorf("real ZeroMQ rejects the golden certificate: %+v", res[2])
	}
	checkAgrees(t, res[2], golden)
}

func TestZMQAcceptsManyGeneratedCerts(t *testing.T) {
	requirePyZMQ(t)
	dir := t.TempDir()
	const n = 50
	certs := make([]*Cert, n)
	paths := make([]string, n)
	for i := range certs {
		c, err := Generate(fmt.Sprintf("mc-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(c.Marshal()); err != nil {
			t.Fatalf("cert %d: Validate: %v", i, err)
		}
		certs[i] = c
		paths[i] = writeCert(t, dir, fmt.Sprintf("c%d.cert", i), c.Marshal())
	}
	for i, r := range runPyCheck(t, paths...) {
		if !r.OK {
			t.Errorf("cert %d: real ZeroMQ check failed: %+v", i, r)
			continue
		}
		checkAgrees(t, r, certs[i])
	}
}

// TestZMQGeneratedKeysAcceptedByParse goes the other way: key pairs made by
// libzmq (zmq.curve_keypair) must pass Parse's X25519 check.
func TestZMQGeneratedKeysAcceptedByParse(t *testing.T) {
	requirePyZMQ(t)
	const n = 20
	out, err := exec.Command(systemPython, "-c", fmt.Sprintf(`
import zmq
for _ in range(%d):
    pub, sec = zmq.curve_keypair()
    print(pub.decode(), sec.decode())
`, n)).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != n {
		t.Fatalf("got %d key pairs from libzmq, want %d", len(lines), n)
	}
	for i, line := range lines {
		pub, sec, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("pair %d: bad output line", i)
		}
		data := "metadata\n    name = \"zmq\"\ncurve\n    public-key = \"" + pub + "\"\n    secret-key = \"" + sec + "\"\n"
		c, err := Parse([]byte(data))
		if err != nil {
			t.Fatalf("pair %d made by libzmq: %v", i, err)
		}
		if c.PublicKeyZ85() != pub {
			t.Errorf("pair %d: public key %q, want %q", i, c.PublicKeyZ85(), pub)
		}
	}
}
