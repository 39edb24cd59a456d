package jsontree

import (
	"encoding/json"
	"testing"
)

// TestJSONParserStrings compares the hand-written string decoding with encoding/json's, on escapes
// encoding/json writes and on ones only other writers use (surrogate pairs, lone surrogates, \/).
func TestJSONParserStrings(t *testing.T) {
	for _, raw := range []string{`"plain"`, `""`, `"a\"b\\c\/d"`, `"\b\f\n\r\t"`, `"\u0000\u001f\u2028\u2029"`,
		`"\u00fc\u00f1"`, `"\ud83d\ude00 pair"`, `"lone \ud800 high"`, `"lone \udc00 low"`, `"high then text \ud83dx"`,
		`"\ud83d\u0041"`, `"<&> unescaped"`, `"\u003c\u0026\u003e"`, `"tail\\"`} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("encoding/json rejects %s: %v", raw, err)
		}
		p := parser{data: []byte(raw)}
		got, err := p.value()
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if got.Kind != String || got.Text != want {
			t.Errorf("%s: got %q (kind %d), want %q", raw, got.Text, got.Kind, want)
		}
	}
}

// TestJSONParserRejects: malformed JSON is an error, never a panic or a silent value.
func TestJSONParserRejects(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"a"}`, `{"a":1`, `{"a":1,}`, `[1,`, `[1 2]`, `"abc`, `"\u12"`, `"\q"`, `{"a":1]`} {
		p := parser{data: []byte(raw)}
		if v, err := p.value(); err == nil {
			t.Errorf("%q: no error, got %+v", raw, v)
		}
	}
}
