package v1alpha2

import (
	"strings"
	"testing"
)

// TestPortServiceNameIsALabel: a sidecar with ports gets the Service <metadata.name>-<name>, so the
// two names together must fit a DNS-1035 label; the message names the container's field and the
// Service.
func TestPortServiceNameIsALabel(t *testing.T) {
	long := strings.Repeat("w", 52) // a valid container name, but flux-sample-<it> is 64 characters
	for _, tc := range []struct {
		containers string
		wantErr    bool
	}{
		{"[{image: a, runFlux: true}, {image: b, name: " + long + ", ports: [80]}]", true},
		{"[{image: a, runFlux: true}, {image: b, name: " + long[:51] + ", ports: [80]}]", false},
		{"[{image: a, runFlux: true}, {image: b, name: " + long + "}]", false}, // no ports, no Service
	} {
		mc, errs := Decode([]byte(base + "  containers: " + tc.containers + "\n"))
		if mc == nil {
			t.Fatal(errs)
		}
		mc.Default()
		opts, _ := mc.ParseOptions()
		errs = mc.Validate(opts)
		if !tc.wantErr {
			if len(errs) > 0 {
				t.Errorf("%s: %v", tc.containers, errs)
			}
			continue
		}
		if len(errs) != 1 || errs[0].Field != "spec.containers[1].name" || !strings.Contains(errs[0].Detail, `"flux-sample-`+long+`"`) ||
			!strings.Contains(errs[0].Detail, "63") {
			t.Errorf("%s: want one error at spec.containers[1].name naming the Service and the limit, got %v", tc.containers, errs)
		}
	}
}
