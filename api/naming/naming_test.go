package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestNamesFit: every name built from the longest MiniCluster name (a DNS label) is valid for
// its use, and the hashed ones keep their hash.
func TestNamesFit(t *testing.T) {
	name := strings.Repeat("a", validation.DNS1123LabelMaxLength)
	hash := strings.Repeat("0", HashSuffixLength)
	for _, n := range []struct {
		use, value string
		check      func(string) []string
	}{
		{"keygen Job (a label value)", KeygenJob(name, hash), validation.IsValidLabelValue},
		{"keygen ServiceAccount (a label value)", KeygenAccount(name), validation.IsValidLabelValue},
		{"services pod", ServicesPod(name, hash), validation.IsDNS1123Subdomain},
	} {
		if msgs := n.check(n.value); len(msgs) > 0 {
			t.Errorf("%s %q: %v", n.use, n.value, msgs)
		}
	}
	if got := KeygenJob(name, hash); !strings.HasSuffix(got, "-keygen-"+hash) {
		t.Errorf("KeygenJob = %q, want the suffix -keygen-%s", got, hash)
	}
	if got, want := Hostname(BrokerJob("mc", "12345678", true), 3), "mc-12345678-3"; got != want {
		t.Errorf("Hostname = %q, want %q", got, want)
	}
	if got, want := BrokerJob("mc", "12345678", false), "mc"; got != want {
		t.Errorf("stable BrokerJob = %q, want %q", got, want)
	}
}
