package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// withBuild sets the build information that make build passes with -ldflags, for the test.
func withBuild(t *testing.T, v, commit string) {
	t.Helper()
	oldVersion, oldCommit := version.Version, version.Commit
	version.Version, version.Commit = v, commit
	t.Cleanup(func() { version.Version, version.Commit = oldVersion, oldCommit })
}

func TestVersionText(t *testing.T) {
	withBuild(t, "v1.2.3", "0123456789abcdef0123456789abcdef01234567")
	out, _, err := runCmd(t, "", "version")
	if err != nil {
		t.Fatal(err)
	}
	want := "minicluster-fn v1.2.3\n" +
		"commit: 0123456789abcdef0123456789abcdef01234567\n" +
		"go: " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n" +
		"keygen image: ghcr.io/minicluster-fn/minicluster-fn:v1.2.3\n"
	if out != want {
		t.Errorf("version printed\n%s\nwant\n%s", out, want)
	}
}

func TestVersionUnknownCommit(t *testing.T) {
	withBuild(t, "v1.2.3", "")
	out, _, err := runCmd(t, "", "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\ncommit: unknown\n") {
		t.Errorf("a build without a commit should say so:\n%s", out)
	}
	j, _, err := runCmd(t, "", "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(j, "commit") {
		t.Errorf("-o json has a commit where the build had none:\n%s", j)
	}
}

func TestVersionStructured(t *testing.T) {
	withBuild(t, "v1.2.3", "0123456789abcdef0123456789abcdef01234567")
	want := version.Info{
		Version:     "v1.2.3",
		Commit:      "0123456789abcdef0123456789abcdef01234567",
		GoVersion:   runtime.Version(),
		Platform:    runtime.GOOS + "/" + runtime.GOARCH,
		KeygenImage: "ghcr.io/minicluster-fn/minicluster-fn:v1.2.3",
	}
	for format, unmarshal := range map[string]func([]byte, any) error{
		"json": json.Unmarshal,
		"yaml": func(b []byte, v any) error { return sigsyaml.UnmarshalStrict(b, v) },
	} {
		out, _, err := runCmd(t, "", "version", "-o", format)
		if err != nil {
			t.Fatal(err)
		}
		var got version.Info
		if err := unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, out)
		}
		if got != want {
			t.Errorf("-o %s: got %+v, want %+v", format, got, want)
		}
	}
}

func TestVersionBadOutput(t *testing.T) {
	_, errOut, err := runCmd(t, "", "version", "-o", "wide")
	if err == nil || !strings.Contains(errOut, "must be text, json or yaml") {
		t.Errorf("version -o wide: err %v, stderr %q", err, errOut)
	}
}
