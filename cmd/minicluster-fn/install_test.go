package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	// An older copy is replaced, not appended to.
	if err := os.WriteFile(filepath.Join(dir, "minicluster-fn"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCmd(t, "", "install", dir)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	target := filepath.Join(dir, "minicluster-fn")
	if out != "installed "+target+"\n" {
		t.Errorf("stdout = %q", out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not a copy of the running binary (%d bytes, want %d)", target, len(got), len(want))
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: mode %v (%v), want 0755", target, fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("install left other files in %s: %v", dir, entries)
	}
}

func TestInstallBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		out, errOut, err := runCmd(t, "", "install", dir)
		if err == nil || out != "" || !strings.Contains(errOut, "install needs an existing directory, and \""+dir+"\" is not one") {
			t.Errorf("install %s: err %v, stdout %q, stderr %q", dir, err, out, errOut)
		}
	}
	if _, _, err := runCmd(t, "", "install"); err == nil {
		t.Errorf("install without a directory succeeded")
	}
}

// TestInstallKubectlPlugin: --kubectl-plugin writes the binary under the name kubectl looks for,
// and leaves minicluster-fn alone.
func TestInstallKubectlPlugin(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runCmd(t, "", "install", "--kubectl-plugin", dir)
	target := filepath.Join(dir, "kubectl-minicluster")
	if err != nil || out != "installed "+target+"\n" {
		t.Fatalf("install --kubectl-plugin: %v, stdout %q\n%s", err, out, errOut)
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: %v, want an executable", target, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "minicluster-fn")); err == nil {
		t.Error("install --kubectl-plugin also wrote minicluster-fn")
	}
}
