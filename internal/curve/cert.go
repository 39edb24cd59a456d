package curve

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// KeySize is the size in bytes of a CURVE public or secret key.
const KeySize = 32

// FileName is the name of a certificate file as Flux reads it, and so the key that holds one in
// the certificate ConfigMap or Secret, which the broker pods mount as a file.
const FileName = "curve.cert"

// keyTextSize is the length of a key in Z85 text.
const keyTextSize = KeySize / 4 * 5 // 40

// MaxLineLength is the longest line, in bytes and not counting its newline,
// that Flux's certificate reader handles: it reads lines into a 256-byte
// buffer, so a longer line is split and the rest misread.
const MaxLineLength = 255

// MaxNameLength is the longest name Generate accepts: the line
// `    name = "<name>"` must fit in MaxLineLength bytes.
const MaxNameLength = MaxLineLength - len(`    name = ""`)

// valueExtra lists the non-alphanumeric characters Flux accepts inside a
// double-quoted metadata value.
const valueExtra = ".-:+=^!/*?&<>()[]{}@%$# \t"

// Sentinel errors, wrapped by the *ParseError values that Parse returns.
var (
	// ErrNoName: the metadata section has no "name" entry. Flux's reader
	// accepts such a file, but the broker then fails at startup with
	// "overlay_authorize: Invalid argument".
	ErrNoName = errors.New(`metadata has no "name" entry (Flux rejects such certificates)`)
	// ErrMissingKey: public-key or secret-key is absent.
	ErrMissingKey = errors.New("missing key")
	// ErrKeyMismatch: public-key is not X25519(secret-key, basepoint).
	ErrKeyMismatch = errors.New("public-key does not match secret-key")
)

// MetaEntry is one `key = "value"` line of a certificate's metadata section.
type MetaEntry struct {
	Key, Value string
}

// Cert is a CURVE certificate: a key pair plus ordered metadata.
//
// Its String and GoString methods leave the secret key out, so printing a
// Cert with fmt does not leak it.
type Cert struct {
	PublicKey, SecretKey [KeySize]byte
	Metadata             []MetaEntry
}

// ParseError is one problem found by Parse. Line is 1-based, or 0 when the
// problem concerns the whole certificate. Messages never contain the value
// of a secret key nor the text of a line that mentions it.
type ParseError struct {
	Line int
	Msg  string
	Err  error // what it wraps: a sentinel such as ErrKeyMismatch or a Z85 error, or nil
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.Msg
}

func (e *ParseError) Unwrap() error { return e.Err }

// Generate returns a new certificate whose metadata is exactly one entry,
// name = "<name>". The 32-byte secret key is read from rnd (crypto/rand.Reader
// if rnd is nil) and the public key is X25519(secret, basepoint), computed
// with crypto/ecdh.
//
// The bytes are read from rnd directly rather than through
// ecdh.Curve.GenerateKey, which since Go 1.26 ignores its reader; so a
// deterministic reader gives deterministic keys (for tests only).
//
// The name must be non-empty, at most MaxNameLength bytes, and use only the
// characters Flux accepts in metadata values: ASCII letters and digits and
// .-:+=^!/*?&<>()[]{}@%$# space tab (no _ , ' ; ~ | ").
func Generate(name string, rnd io.Reader) (*Cert, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	c := &Cert{Metadata: []MetaEntry{{Key: "name", Value: name}}}
	if _, err := io.ReadFull(rnd, c.SecretKey[:]); err != nil {
		return nil, fmt.Errorf("curve: reading random secret key: %w", err)
	}
	pub, err := publicFromSecret(c.SecretKey)
	if err != nil {
		return nil, err
	}
	c.PublicKey = pub
	return c, nil
}

// CheckName reports a name Generate refuses (see Generate for the rules).
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New(`curve: certificate name is empty (Flux needs a "name" metadata entry)`)
	case len(name) > MaxNameLength:
		return fmt.Errorf("curve: certificate name is %d bytes, longer than %d (Flux reads lines of at most %d bytes)",
			len(name), MaxNameLength, MaxLineLength)
	}
	if bad := badValueChars(name); bad != "" {
		return fmt.Errorf("curve: certificate name %q contains %s, which Flux does not accept in metadata values (%s)",
			name, bad, allowedValueChars)
	}
	return nil
}

func publicFromSecret(secret [KeySize]byte) ([KeySize]byte, error) {
	var pub [KeySize]byte
	k, err := ecdh.X25519().NewPrivateKey(secret[:])
	if err != nil {
		return pub, fmt.Errorf("curve: X25519: %w", err)
	}
	copy(pub[:], k.PublicKey().Bytes())
	return pub, nil
}

// Name returns the value of the "name" metadata entry, or "" if there is none.
func (c *Cert) Name() string {
	for _, e := range c.Metadata {
		if e.Key == "name" {
			return e.Value
		}
	}
	return ""
}

// PublicKeyZ85 returns the public key as 40 characters of Z85.
func (c *Cert) PublicKeyZ85() string { return mustZ85(c.PublicKey[:]) }

// String describes the certificate without its secret key.
func (c Cert) String() string {
	var b strings.Builder
	b.WriteString("curve.Cert{")
	for _, e := range c.Metadata {
		fmt.Fprintf(&b, "%s=%q ", e.Key, e.Value)
	}
	fmt.Fprintf(&b, "public-key=%q secret-key=<redacted>}", mustZ85(c.PublicKey[:]))
	return b.String()
}

// GoString is String, so that %#v does not print the secret key either.
func (c Cert) GoString() string { return c.String() }

// Marshal writes the certificate in the layout `flux keygen` writes (mode
// 0600 is the caller's business): two header comment lines, a blank line,
// the metadata section in order, then the curve section. Nothing but the
// metadata and keys varies. Marshal does not validate the metadata; Parse
// of the output reports any problem.
func (c *Cert) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("#  ZeroMQ CURVE **Secret** Certificate\n")
	b.WriteString("#  DO NOT DISTRIBUTE\n")
	b.WriteString("\n")
	b.WriteString("metadata\n")
	for _, e := range c.Metadata {
		b.WriteString("    " + e.Key + " = \"" + e.Value + "\"\n")
	}
	b.WriteString("curve\n")
	b.WriteString("    public-key = \"" + mustZ85(c.PublicKey[:]) + "\"\n")
	b.WriteString("    secret-key = \"" + mustZ85(c.SecretKey[:]) + "\"\n")
	return b.Bytes()
}

func mustZ85(key []byte) string {
	s, err := Z85Encode(key)
	if err != nil {
		panic(err) // unreachable: keys are 32 bytes
	}
	return s
}

// Validate reports every problem Parse finds in data (nil if none).
func Validate(data []byte) error {
	_, err := Parse(data)
	return err
}

// Parse reads a certificate with the rules of Flux's reader (flux-core
// cert_read), plus the broker's requirement of a "name" metadata entry:
//
//   - lines are under 256 bytes; blank lines and lines starting with '#'
//     (after leading white space) are ignored;
//   - the only sections are "metadata" and "curve", whose headers start in
//     column 0; entries start with a space or tab;
//   - entries are key = "value" with keys matching [A-Za-z0-9.-]+ and values
//     double-quoted, made of ASCII letters and digits and
//     .-:+=^!/*?&<>()[]{}@%$# space tab; metadata keys are unique;
//   - the curve section has exactly the keys public-key and secret-key, each
//     40 characters of Z85 decoding to 32 bytes, and public-key equals
//     X25519(secret-key, basepoint);
//   - metadata has a "name" entry.
//
// Both the layout `flux keygen` writes and the older CZMQ layout (with its
// "Generated on ... by CZMQ" header and keygen.* metadata) are accepted, as is
// the header-less text of a MiniCluster's spec.flux.curveCert.
//
// On failure Parse returns nil and the errors.Join of a *ParseError for every
// problem found.
func Parse(data []byte) (*Cert, error) {
	p := parser{metaLine: map[string]int{}}
	p.run(data)
	if len(p.problems) > 0 {
		return nil, errors.Join(p.problems...)
	}
	return &Cert{PublicKey: p.pub.key, SecretKey: p.sec.key, Metadata: p.meta}, nil
}

type keyState struct {
	line  int // line of the first definition, 0 if none
	valid bool
	key   [KeySize]byte
}

type parser struct {
	problems []error
	section  string
	sawCurve bool
	meta     []MetaEntry
	metaLine map[string]int
	pub, sec keyState
}

func (p *parser) addf(line int, sentinel error, format string, args ...any) {
	p.problems = append(p.problems, &ParseError{Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel})
}

func (p *parser) run(data []byte) {
	if len(bytes.TrimSpace(data)) == 0 {
		p.addf(0, nil, "certificate is empty")
		return
	}
	lines := strings.Split(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // text after the final newline
	}
	for i, raw := range lines {
		p.line(i+1, raw)
	}
	p.finish()
}

func (p *parser) line(n int, raw string) {
	// A line that mentions the secret key is never quoted in messages,
	// not even one character of it.
	sensitive := strings.Contains(strings.ToLower(raw), "secret")
	if len(raw) > MaxLineLength {
		p.addf(n, nil, "line is %d bytes; Flux reads lines of at most %d bytes (under 256 with the newline)", len(raw), MaxLineLength)
	}
	if strings.IndexByte(raw, 0) >= 0 {
		p.addf(n, nil, "line contains a NUL byte")
		return
	}
	indented := raw != "" && (raw[0] == ' ' || raw[0] == '\t')
	s := strings.Trim(raw, cSpace)
	if s == "" || s[0] == '#' {
		return
	}
	if !indented {
		switch s {
		case "metadata":
			p.section = s
		case "curve":
			p.section, p.sawCurve = s, true
		default:
			// Entries below a bad header are not checked: which section
			// they were meant for is unknown.
			p.section = "invalid"
			if strings.Contains(s, "=") {
				p.addf(n, nil, `entry is not indented (entries must start with a space or tab, below a "metadata" or "curve" line)`)
			} else if !sensitive && len(s) <= 32 && validKey(s) {
				p.addf(n, nil, `unknown section %q (only "metadata" and "curve" are allowed)`, s)
			} else {
				p.addf(n, nil, `not a section header ("metadata" or "curve") nor an indented entry`)
			}
		}
		return
	}
	if s == "metadata" || s == "curve" {
		p.addf(n, nil, "section header %q is indented (section headers must start in column 0)", s)
		// Check the entries below it as if it were not indented.
		p.section = s
		p.sawCurve = p.sawCurve || s == "curve"
		return
	}
	switch p.section {
	case "":
		p.addf(n, nil, `entry before any section header ("metadata" or "curve")`)
		return
	case "invalid":
		return // already reported
	}
	key, val, ok := p.entry(n, s, sensitive)
	if key != "" {
		// Even when its value is bad, the key is present: do not also
		// report it as missing.
		p.seen(n, key)
	}
	if !ok {
		return
	}
	if p.section == "metadata" {
		p.metadata(n, key, val, sensitive)
	} else {
		p.curve(n, key, val)
	}
}

// seen records the first line of a key in the current section.
func (p *parser) seen(n int, key string) {
	if p.section == "metadata" {
		if _, dup := p.metaLine[key]; !dup {
			p.metaLine[key] = n
		}
		return
	}
	switch key {
	case "public-key":
		if p.pub.line == 0 {
			p.pub.line = n
		}
	case "secret-key":
		if p.sec.line == 0 {
			p.sec.line = n
		}
	}
}

// entry splits key = "value" and checks the key and the quoting. The value
// is returned without its quotes and without checking its characters.
func (p *parser) entry(n int, s string, sensitive bool) (key, val string, ok bool) {
	key, val, found := strings.Cut(s, "=")
	if !found {
		p.addf(n, nil, `expected key = "value" in %s section`, p.section)
		return "", "", false
	}
	key = strings.Trim(key, cSpace)
	val = strings.Trim(val, cSpace)
	switch {
	case key == "":
		p.addf(n, nil, "entry has no key before '='")
		return "", "", false
	case !validKey(key):
		if sensitive || len(key) > 32 {
			p.addf(n, nil, "invalid key (keys may contain only ASCII letters, digits, '.' and '-')")
		} else {
			p.addf(n, nil, "invalid key %q (keys may contain only ASCII letters, digits, '.' and '-')", key)
		}
		return "", "", false
	}
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		p.addf(n, nil, "%s: value is not double-quoted", key)
		return key, "", false
	}
	return key, val[1 : len(val)-1], true
}

// metadata checks a metadata entry; p.seen has recorded its key.
func (p *parser) metadata(n int, key, val string, sensitive bool) {
	if first := p.metaLine[key]; first != n {
		p.addf(n, nil, "duplicate metadata key %q (first on line %d; Flux rejects duplicates)", key, first)
		return
	}
	if bad := badValueChars(val); bad != "" {
		if sensitive || key == "public-key" || key == "secret-key" {
			p.addf(n, nil, "metadata %q: value contains characters Flux does not accept (%s)", key, allowedValueChars)
		} else {
			p.addf(n, nil, "metadata %q: value contains %s, which Flux does not accept (%s)", key, bad, allowedValueChars)
		}
		return
	}
	p.meta = append(p.meta, MetaEntry{Key: key, Value: val})
}

// curve checks a curve entry; p.seen has recorded its key.
func (p *parser) curve(n int, key, val string) {
	var ks *keyState
	switch key {
	case "public-key":
		ks = &p.pub
	case "secret-key":
		ks = &p.sec
	default:
		p.addf(n, nil, "unknown key %q in curve section (only public-key and secret-key are allowed)", key)
		return
	}
	if ks.line != n {
		p.addf(n, nil, "duplicate %s (first on line %d)", key, ks.line)
		return
	}
	if len(val) != keyTextSize {
		p.addf(n, nil, "%s: not %d characters of Z85 (got %d)", key, keyTextSize, len(val))
		return
	}
	raw, err := Z85Decode(val)
	if err != nil {
		// Z85Decode's messages hold positions only, never characters.
		p.addf(n, err, "%s: not valid Z85: %v", key, err)
		return
	}
	copy(ks.key[:], raw)
	ks.valid = true
}

func (p *parser) finish() {
	if _, ok := p.metaLine["name"]; !ok {
		p.addf(0, ErrNoName, "%s", ErrNoName.Error())
	}
	if !p.sawCurve {
		p.addf(0, ErrMissingKey, `no "curve" section: public-key and secret-key are required`)
		return
	}
	if p.pub.line == 0 {
		p.addf(0, ErrMissingKey, "curve section has no public-key")
	}
	if p.sec.line == 0 {
		p.addf(0, ErrMissingKey, "curve section has no secret-key")
	}
	if !p.pub.valid || !p.sec.valid {
		return
	}
	want, err := publicFromSecret(p.sec.key)
	if err != nil {
		p.addf(p.sec.line, nil, "cannot derive the public key: %v", err)
		return
	}
	if want != p.pub.key {
		p.addf(p.pub.line, ErrKeyMismatch, "%s (it is not X25519 of the secret-key on line %d)", ErrKeyMismatch.Error(), p.sec.line)
	}
}

// cSpace is the set of characters C's isspace accepts, which Flux strips.
const cSpace = " \t\n\v\f\r"

const allowedValueChars = `allowed: ASCII letters, digits, space, tab and .-:+=^!/*?&<>()[]{}@%$#`

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func validKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// badValueChars lists, quoted and in order of first appearance, the bytes of
// s that Flux does not accept in a value; "" if there are none.
func badValueChars(s string) string {
	var bad []string
	seen := map[byte]bool{}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || strings.IndexByte(valueExtra, c) >= 0 || seen[c] {
			continue
		}
		seen[c] = true
		bad = append(bad, strconv.QuoteRune(rune(c)))
		if c >= 0x80 {
			bad[len(bad)-1] = fmt.Sprintf("byte 0x%02x", c)
		}
	}
	return strings.Join(bad, " ")
}
