package curve

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// countingReader yields next, next+1, next+2, ... (mod 256): a deterministic
// "random" source for golden tests.
type countingReader struct{ next byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.next
		r.next++
	}
	return len(p), nil
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Keys of certificates written by real generators (flux keygen, and the Flux Operator example
// custom-config), all checked
// with libzmq's zmq_curve_public.
const (
	czmqPublic     = `Gw({X]a(q!ZMHDDK.?sxlHPT=6aT%}m=wbPlMlNF`
	czmqSecret     = `Th&gvST+E-zX-<W0IY/-tbW%K6l@oc9b@BB(R40=`
	keygenPublic   = `@-j&a[}xc&ih%#HBd=2U]VqjCiK)vKobW$(zxOv7`
	keygenSecret   = `^E@j(V!<P82.7VCb[i3GV?fGY1Dh>YG@r2:o/S/)`
	operatorPublic = `}D{Y3<amLLl*TIt>@b*umPD-nBr#I}[PnV!lZBkW`
	operatorSecret = `5khD%TixeW<j<6ssPNG>s<nY1E}5)fyk@TI)g8Xu`
)

// goldenCert is Generate("mc", &countingReader{}) marshalled. Its keys were
// computed independently with pyzmq: z85.encode(bytes(range(32))) and
// zmq.curve_public of that.
const (
	goldenPublic = `K3HW^WVq.zo69t)(umF>:XvwTj:QGN^yKlWaVH(S`
	goldenSecret = `009c61o!#m2NH?C3>iWS5d]J*6CRx17-skh9337x`
	goldenCert   = "#  ZeroMQ CURVE **Secret** Certificate\n" +
		"#  DO NOT DISTRIBUTE\n" +
		"\n" +
		"metadata\n" +
		"    name = \"mc\"\n" +
		"curve\n" +
		"    public-key = \"" + goldenPublic + "\"\n" +
		"    secret-key = \"" + goldenSecret + "\"\n"
)

func TestZ85KnownVectors(t *testing.T) {
	tests := []struct {
		name string
		raw  string // hex
		text string
	}{
		{"RFC 32 test vector", "864FD26FB559F75B", "HelloWorld"},
		{"empty", "", ""},
		{"zeros", "00000000", "00000"},
		{"max group", "ffffffff", "%nSc0"},
		// Z85 text from pyzmq's zmq.utils.z85.encode(bytes(range(32))).
		{"counting 32 bytes", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", goldenSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := mustHex(t, tt.raw)
			got, err := Z85Encode(raw)
			if err != nil || got != tt.text {
				t.Errorf("Z85Encode(%s) = %q, %v; want %q", tt.raw, got, err, tt.text)
			}
			back, err := Z85Decode(tt.text)
			if err != nil || !bytes.Equal(back, raw) {
				t.Errorf("Z85Decode(%q) = %x, %v; want %x", tt.text, back, err, raw)
			}
		})
	}
}

func TestZ85RoundTripRandom(t *testing.T) {
	for n := 0; n <= 64; n += 4 {
		b := make([]byte, n)
		rand.Read(b)
		s, err := Z85Encode(b)
		if err != nil || len(s) != n/4*5 {
			t.Fatalf("Z85Encode(%d bytes) = %q, %v", n, s, err)
		}
		back, err := Z85Decode(s)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("round trip of %x: got %x, %v", b, back, err)
		}
	}
}

func TestZ85Errors(t *testing.T) {
	if _, err := Z85Encode([]byte{1, 2, 3}); !errors.Is(err, ErrZ85Length) {
		t.Errorf("Z85Encode(3 bytes) error = %v, want ErrZ85Length", err)
	}
	tests := []struct {
		in      string
		want    error
		wantMsg string
	}{
		{"Hell", ErrZ85Length, "4 characters"},
		{"HelloWorl", ErrZ85Length, "9 characters"},
		{"Hello Worl", ErrZ85Character, "position 6"},
		{"Hello_orld", ErrZ85Character, "position 6"},
		{"Hel\"o", ErrZ85Character, "position 4"},
		{"He\x00lo", ErrZ85Character, "position 3"},
		{"Hell\xc3", ErrZ85Character, "position 5"},
		{"%nSc1", ErrZ85Overflow, "characters 1-5"},
		{"00000%%%%%", ErrZ85Overflow, "characters 6-10"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Z85Decode(tt.in)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Z85Decode(%q) = %x, %v; want %v containing %q", tt.in, got, err, tt.want, tt.wantMsg)
			}
			if len(tt.in) >= 5 && strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}
}

// TestX25519RFC7748 checks the public key derivation against the test vector
// of RFC 7748 §6.1, through both publicFromSecret and Generate.
func TestX25519RFC7748(t *testing.T) {
	tests := []struct{ name, secret, public string }{
		{"Alice",
			"77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
			"8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"},
		{"Bob",
			"5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
			"de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sec [KeySize]byte
			copy(sec[:], mustHex(t, tt.secret))
			pub, err := publicFromSecret(sec)
			if err != nil || hex.EncodeToString(pub[:]) != tt.public {
				t.Errorf("publicFromSecret = %x, %v; want %s", pub, err, tt.public)
			}
			c, err := Generate("rfc7748", bytes.NewReader(sec[:]))
			if err != nil {
				t.Fatal(err)
			}
			if c.SecretKey != sec || hex.EncodeToString(c.PublicKey[:]) != tt.public {
				t.Errorf("Generate from RFC key: secret %x public %x; want public %s", c.SecretKey, c.PublicKey, tt.public)
			}
			// And the certificate made from it parses back and validates.
			if err := Validate(c.Marshal()); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestMarshalGolden(t *testing.T) {
	c, err := Generate("mc", &countingReader{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Marshal()); got != goldenCert {
		t.Errorf("Marshal() =\n%s\nwant\n%s", got, goldenCert)
	}
	// Deterministic: same reader, same bytes.
	c2, _ := Generate("mc", &countingReader{})
	if !bytes.Equal(c.Marshal(), c2.Marshal()) {
		t.Error("Marshal is not deterministic")
	}
	if got := c.PublicKeyZ85(); got != goldenPublic {
		t.Errorf("PublicKeyZ85() = %q, want %q", got, goldenPublic)
	}
	if c.Name() != "mc" || len(c.Metadata) != 1 {
		t.Errorf("metadata = %v, want exactly name=mc", c.Metadata)
	}
}

func TestGenerateMarshalParseRoundTrip(t *testing.T) {
	names := []string{"mc", "flux-sample", "flux-cert-generator", "ns.name-0", "a b\tc",
		"x:y/z+w=v^u!t*s?r&q<p>o(n)m[l]k{j}i@h%g$f#e", strings.Repeat("n", MaxNameLength)}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c, err := Generate(name, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []MetaEntry{{Key: "name", Value: name}}
			if !reflect.DeepEqual(c.Metadata, want) {
				t.Errorf("Metadata = %v, want %v", c.Metadata, want)
			}
			data := c.Marshal()
			got, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(Marshal()) error:\n%v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, c) {
				t.Errorf("Parse(Marshal()) = %v, want %v", got, c)
			}
			if !bytes.Equal(got.Marshal(), data) {
				t.Error("Marshal(Parse(x)) != x")
			}
		})
	}
	// Two calls with the real random source give different keys.
	a, _ := Generate("mc", nil)
	b, _ := Generate("mc", nil)
	if a.SecretKey == b.SecretKey || a.PublicKey == b.PublicKey {
		t.Error("two generated certificates share a key")
	}
}

func TestGenerateRejectsBadNames(t *testing.T) {
	tests := []struct{ name, want string }{
		{"", "empty"},
		{"my_cluster", `'_'`},
		{"a,b", `','`},
		{"it's", `'\''`},
		{"a;b", `';'`},
		{"a~b", `'~'`},
		{"a|b", `'|'`},
		{`a"b`, `'"'`},
		{"a\nb", `'\n'`},
		{"caf\xc3\xa9", "byte 0xc3"},
		{"a_b,c_d", `'_' ','`},
		{strings.Repeat("n", MaxNameLength+1), "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Generate(tt.name, &countingReader{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Generate(%q) = %v, %v; want error containing %s", tt.name, c, err, tt.want)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func TestGenerateReaderError(t *testing.T) {
	if _, err := Generate("mc", failingReader{}); err == nil || !strings.Contains(err.Error(), "entropy exhausted") {
		t.Errorf("Generate with failing reader: err = %v", err)
	}
	if _, err := Generate("mc", bytes.NewReader(make([]byte, 31))); err == nil {
		t.Error("Generate with a 31-byte reader succeeded")
	}
}

// TestParseAccepts covers certificates written by other generators and
// layout variations Flux's reader accepts.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name       string
		data       string
		wantMeta   []MetaEntry
		wantPublic string
	}{
		{"golden", goldenCert, []MetaEntry{{"name", "mc"}}, goldenPublic},
		{"CZMQ zcert_save_secret", "#   ****  Generated on 2026-11-21 02:00:46 by CZMQ  ****\n" +
			"#   ZeroMQ CURVE **Secret** Certificate\n" +
			"#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n" +
			"\n" +
			"metadata\n" +
			"    name = \"flux-test\"\n" +
			"    keygen.czmq-version = \"4.2.1\"\n" +
			"    keygen.zmq-version = \"4.3.4\"\n" +
			"curve\n" +
			"    public-key = \"" + czmqPublic + "\"\n" +
			"    secret-key = \"" + czmqSecret + "\"\n",
			[]MetaEntry{{"name", "flux-test"}, {"keygen.czmq-version", "4.2.1"}, {"keygen.zmq-version", "4.3.4"}},
			czmqPublic},
		{"flux keygen with keygen.* metadata", "#  ZeroMQ CURVE **Secret** Certificate\n" +
			"#  DO NOT DISTRIBUTE\n" +
			"\n" +
			"metadata\n" +
			"    name = \"vm\"\n" +
			"    keygen.hostname = \"vm\"\n" +
			"    keygen.time = \"2026-11-21T02:00:52\"\n" +
			"    keygen.userid = \"0\"\n" +
			"    keygen.flux-core-version = \"0.0.0-test\"\n" +
			"    keygen.zmq-version = \"4.3.4\"\n" +
			"curve\n" +
			"    public-key = \"" + keygenPublic + "\"\n" +
			"    secret-key = \"" + keygenSecret + "\"\n",
			[]MetaEntry{{"name", "vm"}, {"keygen.hostname", "vm"}, {"keygen.time", "2026-11-21T02:00:52"},
				{"keygen.userid", "0"}, {"keygen.flux-core-version", "0.0.0-test"}, {"keygen.zmq-version", "4.3.4"}},
			keygenPublic},
		// The Flux Operator's keygen.go.template output: its 4th line is
		// four spaces.
		{"Flux Operator CZMQ template", "#   ****  Generated on 2023-04-26 22:54:42 by CZMQ  ****\n" +
			"#   ZeroMQ CURVE **Secret** Certificate\n" +
			"#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n" +
			"    \n" +
			"metadata\n" +
			"    name = \"flux-cert-generator\"\n" +
			"    keygen.hostname = \"flux-sample-0\"\n" +
			"curve\n" +
			"    public-key = \"" + operatorPublic + "\"\n" +
			"    secret-key = \"" + operatorSecret + "\"\n",
			[]MetaEntry{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}}, operatorPublic},
		// spec.flux.curveCert of examples/tests/custom-config/minicluster.yaml
		// after YAML parsing (literal block: indentation removed, one final
		// newline).
		{"MiniCluster spec.flux.curveCert", "metadata\n" +
			"    name = \"flux-cert-generator\"\n" +
			"    keygen.hostname = \"flux-sample-0\"\n" +
			"curve\n" +
			"    public-key = \"" + operatorPublic + "\"\n" +
			"    secret-key = \"" + operatorSecret + "\"\n",
			[]MetaEntry{{"name", "flux-cert-generator"}, {"keygen.hostname", "flux-sample-0"}}, operatorPublic},
		{"CRLF, tabs, no final newline, comments anywhere",
			"# c\r\n\r\n  # indented comment\r\nmetadata \r\n\tname=\"mc\"\r\n\tempty = \"\"\r\n" +
				"curve\r\n\tsecret-key   =   \"" + goldenSecret + "\"\r\n\tpublic-key = \"" + goldenPublic + "\"",
			[]MetaEntry{{"name", "mc"}, {"empty", ""}}, goldenPublic},
		{"curve before metadata, repeated header", "curve\n    public-key = \"" + goldenPublic + "\"\n" +
			"metadata\n    name = \"mc\"\ncurve\n    secret-key = \"" + goldenSecret + "\"\n",
			[]MetaEntry{{"name", "mc"}}, goldenPublic},
		{"255-byte line", "#" + strings.Repeat("x", 254) + "\n" + goldenCert, []MetaEntry{{"name", "mc"}}, goldenPublic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.data))
			if err != nil {
				t.Fatalf("Parse error:\n%v", err)
			}
			if !reflect.DeepEqual(c.Metadata, tt.wantMeta) {
				t.Errorf("Metadata = %v, want %v", c.Metadata, tt.wantMeta)
			}
			if got := c.PublicKeyZ85(); got != tt.wantPublic {
				t.Errorf("public key = %q, want %q", got, tt.wantPublic)
			}
			if err := Validate([]byte(tt.data)); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// otherSecret is a valid secret key that does not belong to goldenPublic.
const otherSecret = czmqSecret

func TestParseRejects(t *testing.T) {
	lines := strings.SplitAfter(goldenCert, "\n") // 8 lines, each with its "\n"
	// with replaces line n (1-based) of goldenCert.
	with := func(n int, line string) string {
		l := append([]string(nil), lines[:len(lines)-1]...)
		l[n-1] = line
		return strings.Join(l, "")
	}
	without := func(n int) string { return with(n, "") }
	tests := []struct {
		name     string
		data     string
		want     []string // substrings, each expected in the error
		sentinel error    // expected via errors.Is, if not nil
	}{
		{"empty", "", []string{"certificate is empty"}, nil},
		{"blank", " \n\n", []string{"certificate is empty"}, nil},
		{"truncated after public-key", goldenCert[:strings.Index(goldenCert, "    secret-key")],
			[]string{"curve section has no secret-key"}, ErrMissingKey},
		{"truncated inside secret-key", goldenCert[:len(goldenCert)-10],
			[]string{"line 8: secret-key: value is not double-quoted"}, nil},
		{"truncated after header", goldenCert[:strings.Index(goldenCert, "metadata")],
			[]string{`metadata has no "name" entry`, `no "curve" section`}, ErrNoName},
		{"missing public key", without(7), []string{"curve section has no public-key"}, ErrMissingKey},
		{"missing secret key", without(8), []string{"curve section has no secret-key"}, ErrMissingKey},
		{"missing name", with(5, "    keygen.hostname = \"mc-0\"\n"),
			[]string{`metadata has no "name" entry (Flux rejects such certificates)`}, ErrNoName},
		{"no metadata section", without(4), []string{"line 4: entry before any section header"}, ErrNoName},
		{"mismatched keys", with(8, "    secret-key = \""+otherSecret+"\"\n"),
			[]string{"line 7: public-key does not match secret-key", "secret-key on line 8"}, ErrKeyMismatch},
		{"underscore in value", with(5, "    name = \"my_cluster\"\n"),
			[]string{`line 5: metadata "name": value contains '_'`}, nil},
		{"comma and semicolon in value", with(5, "    name = \"a,b;c\"\n"),
			[]string{`line 5: metadata "name": value contains ',' ';'`}, nil},
		{"quote in value", with(5, "    name = \"a\"b\"\n"), []string{`value contains '"'`}, nil},
		{"unquoted value", with(5, "    name = mc\n"), []string{"line 5: name: value is not double-quoted"}, nil},
		{"single-quoted value", with(5, "    name = 'mc'\n"), []string{"line 5: name: value is not double-quoted"}, nil},
		{"unquoted key value", with(7, "    public-key = "+goldenPublic+"\n"),
			[]string{"line 7: public-key: value is not double-quoted"}, nil},
		{"unindented entry", with(5, "name = \"mc\"\n"), []string{"line 5: entry is not indented"}, ErrNoName},
		{"unindented secret-key", with(8, "secret-key = \""+goldenSecret+"\"\n"),
			[]string{"line 8: entry is not indented", "curve section has no secret-key"}, nil},
		{"line of 256 bytes", "#" + strings.Repeat("x", 255) + "\n" + goldenCert,
			[]string{"line 1: line is 256 bytes"}, nil},
		{"long metadata line", with(5, "    name = \""+strings.Repeat("n", 300)+"\"\n"),
			[]string{"line 5: line is 313 bytes"}, nil},
		{"wrong section name", with(4, "meta\n"), []string{`line 4: unknown section "meta"`}, nil},
		{"section name with colon", with(6, "curve:\n"), []string{"line 6: not a section header"}, nil},
		{"indented section header", with(6, "    curve\n"),
			[]string{`line 6: section header "curve" is indented`}, nil},
		{"YAML-indented block", strings.ReplaceAll("\n"+goldenCert, "\n", "\n        ")[1:],
			[]string{`line 4: section header "metadata" is indented`, `line 6: section header "curve" is indented`}, nil},
		{"39-char public key", with(7, "    public-key = \""+goldenPublic[:39]+"\"\n"),
			[]string{"line 7: public-key: not 40 characters of Z85 (got 39)"}, nil},
		{"39-char secret key", with(8, "    secret-key = \""+goldenSecret[1:]+"\"\n"),
			[]string{"line 8: secret-key: not 40 characters of Z85 (got 39)"}, nil},
		{"41-char secret key", with(8, "    secret-key = \""+goldenSecret+"x\"\n"),
			[]string{"line 8: secret-key: not 40 characters of Z85 (got 41)"}, nil},
		{"non-Z85 char in public key", with(7, "    public-key = \""+goldenPublic[:4]+"~"+goldenPublic[5:]+"\"\n"),
			[]string{"line 7: public-key: not valid Z85: z85: invalid character at position 5"}, nil},
		{"space in secret key", with(8, "    secret-key = \""+goldenSecret[:9]+" "+goldenSecret[10:]+"\"\n"),
			[]string{"line 8: secret-key: not valid Z85: z85: invalid character at position 10"}, nil},
		{"Z85 group overflow", with(7, "    public-key = \""+strings.Repeat("%", 40)+"\"\n"),
			[]string{"line 7: public-key: not valid Z85: z85: group value exceeds 32 bits (characters 1-5)"}, ErrZ85Overflow},
		{"unknown curve key", with(7, "    private-key = \""+goldenPublic+"\"\n"),
			[]string{`line 7: unknown key "private-key" in curve section`, "no public-key"}, nil},
		{"invalid key", with(5, "    na_me = \"mc\"\n"), []string{`line 5: invalid key "na_me"`}, nil},
		{"no equals sign", with(5, "    name \"mc\"\n"), []string{`line 5: expected key = "value" in metadata section`}, nil},
		{"no key", with(5, "    = \"mc\"\n"), []string{"line 5: entry has no key"}, nil},
		{"duplicate metadata key", with(5, "    name = \"a\"\n    name = \"b\"\n"),
			[]string{`line 6: duplicate metadata key "name" (first on line 5`}, nil},
		{"duplicate public key", with(7, "    public-key = \""+goldenPublic+"\"\n    public-key = \""+goldenPublic+"\"\n"),
			[]string{"line 8: duplicate public-key (first on line 7)"}, nil},
		{"NUL byte", with(2, "#\x00\n"), []string{"line 2: line contains a NUL byte"}, nil},
		{"many problems at once", "metadata\n    host = \"a_b\"\ncurv\n    x = \"1\"\ncurve\n    public-key = \"" + goldenPublic[1:] + "\"\n",
			[]string{`line 2: metadata "host": value contains '_'`, `line 3: unknown section "curv"`,
				"line 6: public-key: not 40 characters of Z85 (got 39)", `metadata has no "name" entry`,
				"curve section has no secret-key"}, ErrNoName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.data)
			}
			if c != nil {
				t.Errorf("Parse returned a certificate along with error %v", err)
			}
			msg := err.Error()
			t.Logf("error:\n%s", msg)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not contain %q; got:\n%s", w, msg)
				}
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("errors.Is(err, %v) = false; err:\n%s", tt.sentinel, msg)
			}
			if verr := Validate([]byte(tt.data)); verr == nil || verr.Error() != msg {
				t.Errorf("Validate error %v differs from Parse error %v", verr, err)
			}
			assertNoSecret(t, tt.data, msg)
		})
	}
}

// TestParseErrorLines checks that every problem is a *ParseError carrying
// the right line number.
func TestParseErrorLines(t *testing.T) {
	data := "metadata\n    name = \"a_b\"\ncurve\n    public-key = \"x\"\n    secret-key = \"" + goldenSecret + "\"\n"
	_, err := Parse([]byte(data))
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not an errors.Join result", err)
	}
	var lines []int
	for _, e := range joined.Unwrap() {
		var pe *ParseError
		if !errors.As(e, &pe) {
			t.Fatalf("problem %T %v is not a *ParseError", e, e)
		}
		lines = append(lines, pe.Line)
	}
	// name invalid (2), public-key length (4); the name is not also
	// reported missing.
	if want := []int{2, 4}; !reflect.DeepEqual(lines, want) {
		t.Errorf("problem lines = %v, want %v; err:\n%v", lines, want, err)
	}
}

// secretTexts returns the text after '=' on every line of data that
// mentions a secret key, plus any 40-character run that looks like a key.
func secretTexts(data string) []string {
	var out []string
	for _, line := range strings.Split(data, "\n") {
		if i := strings.Index(line, "secret-key"); i >= 0 {
			v := line[i+len("secret-key"):]
			v = strings.Trim(v, " \t\r=\"")
			out = append(out, v)
		}
	}
	return append(out, goldenSecret, otherSecret, operatorSecret)
}

// assertNoSecret fails if msg contains any 8-byte piece of a secret key
// found in data, or a whole secret-key line.
func assertNoSecret(t *testing.T, data, msg string) {
	t.Helper()
	for _, s := range secretTexts(data) {
		const window = 8
		for i := 0; i+window <= len(s); i++ {
			if piece := s[i : i+window]; strings.Count(piece, piece[:1]) != window && strings.Contains(msg, piece) {
				t.Fatalf("error message leaks secret key text %q:\n%s", piece, msg)
			}
		}
	}
}

// TestErrorsNeverContainSecret feeds malformed secret-key lines, in every
// place one could end up, and checks that no message quotes the secret.
func TestErrorsNeverContainSecret(t *testing.T) {
	s := goldenSecret
	head := "metadata\n    name = \"mc\"\ncurve\n    public-key = \"" + goldenPublic + "\"\n"
	tests := []string{
		head + "    secret-key = \"" + s + "_\"\n",
		head + "    secret-key = \"" + s[:20] + "_" + s[21:] + "\"\n",
		head + "    secret-key = \"" + s + "\n",
		head + "    secret-key = " + s + "\n",
		head + "    secret-key \"" + s + "\"\n",
		head + "    secret_key = \"" + s + "\"\n",
		head + "    secret-key = \"" + s + "\" # comment\n",
		head + "    secret-key = \"" + s + strings.Repeat(" ", 300) + "\"\n",
		head + "secret-key = \"" + s + "\"\n",
		head + "secret-key\n",
		head + s + "\n",
		head + "    " + s + "\n",
		head + "    " + s + "_x = \"1\"\n",
		"    secret-key = \"" + s + "\"\n" + head,
		"metadata\n    name = \"mc\"\n    secret-key = \"" + s + "_\"\ncurve\n    public-key = \"" + goldenPublic + "\"\n",
		"metadata\n    name = \"mc\"\n    secret = \"" + s + "|\"\n",
		head + "    secret-key = \"" + otherSecret + "\"\n", // mismatch
		head + "    secret-key = \"" + s + "\"\n    secret-key = \"" + otherSecret + "\"\n",
		strings.Replace(goldenCert, "metadata", "    metadata", 1),
		strings.Replace(goldenCert, "curve", "curve\x00", 1),
	}
	for i, data := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			err := Validate([]byte(data))
			if err == nil {
				t.Fatalf("Validate accepted:\n%s", data)
			}
			assertNoSecret(t, data, err.Error())
		})
	}
}

func TestCertStringRedactsSecret(t *testing.T) {
	c, err := Generate("mc", &countingReader{})
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%v|%+v|%#v|%s|%v|%#v", c, c, c, c, *c, []*Cert{c})
	if strings.Contains(out, goldenSecret) || !strings.Contains(out, "<redacted>") || !strings.Contains(out, goldenPublic) {
		t.Errorf("formatted certificate = %s", out)
	}
	var raw strings.Builder
	for _, b := range c.SecretKey {
		fmt.Fprintf(&raw, "%d ", b)
	}
	if strings.Contains(out, strings.TrimSpace(raw.String())) {
		t.Errorf("formatted certificate contains the raw secret bytes: %s", out)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		if _, err := Generate("mc", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	data := []byte(goldenCert)
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
