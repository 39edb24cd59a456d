package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

const testVersion = "v0.1.0"

// testOptions is a release of the repository's HEAD into dist.
func testOptions(t *testing.T, dist string) Options {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	modfile, err := filepath.Abs("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Version: testVersion,
		// Any commit and time: the test checks that the release says what it was given.
		Commit:          "0123456789abcdef0123456789abcdef01234567",
		Date:            time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC),
		ImageRepository: "ghcr.io/minicluster-fn/minicluster-fn",
		Repo:            repo,
		Dist:            dist,
		SBOMTool:        []string{"go", "tool", "-modfile=" + modfile, "cyclonedx-gomod"},
		Log:             io.Discard,
	}
}

// released is one release, made once for the tests that read it.
var released = struct {
	once sync.Once
	dist string
	err  error
}{}

func release(t *testing.T) string {
	t.Helper()
	released.once.Do(func() {
		dir, err := os.MkdirTemp("", "release-test-")
		if err != nil {
			released.err = err
			return
		}
		released.dist = filepath.Join(dir, "dist")
		released.err = Release(testOptions(t, released.dist))
	})
	if released.err != nil {
		t.Fatal(released.err)
	}
	return released.dist
}

func TestMain(m *testing.M) {
	code := m.Run()
	if released.dist != "" {
		os.RemoveAll(filepath.Dir(released.dist))
	}
	os.Exit(code)
}

func wantArtifacts() []string {
	var names []string
	for _, p := range Platforms {
		names = append(names, ArchiveName(testVersion, p), SBOMName(testVersion, p))
	}
	names = append(names, ImageArchiveName(testVersion))
	slices.Sort(names)
	return names
}

// TestChecksums: dist has exactly the artifacts and checksums.txt, which lists each with its
// SHA-256, as sha256sum -c reads it.
func TestChecksums(t *testing.T) {
	dist := release(t)
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if want := append(wantArtifacts(), ChecksumsName); !slices.Equal(files, slices.Sorted(slices.Values(want))) {
		t.Errorf("dist holds %v, want %v", files, want)
	}
	b, err := os.ReadFile(filepath.Join(dist, ChecksumsName))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("checksums.txt line %q is not \"<sha256>  <name>\"", line)
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: checksums.txt says %s, the file's is %x", name, sum, got)
		}
		listed = append(listed, name)
	}
	if !slices.Equal(listed, wantArtifacts()) {
		t.Errorf("checksums.txt lists %v, want %v", listed, wantArtifacts())
	}
	if sha256sum, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command(sha256sum, "--check", "--strict", ChecksumsName)
		cmd.Dir = dist
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum --check: %v\n%s", err, out)
		}
	}
}

// TestReproducible: a second release of the same commit is the same, byte for byte.
func TestReproducible(t *testing.T) {
	first := release(t)
	second := filepath.Join(t.TempDir(), "dist")
	if err := Release(testOptions(t, second)); err != nil {
		t.Fatal(err)
	}
	for _, name := range append(wantArtifacts(), ChecksumsName) {
		a, err := os.ReadFile(filepath.Join(first, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(second, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two releases of the same commit", name)
		}
	}
}

// readTar returns the regular files of a tar (gzip-compressed when gz) by name, with their modes.
func readTar(t *testing.T, r io.Reader, gz bool) (map[string][]byte, map[string]int64) {
	t.Helper()
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	files, modes := map[string][]byte{}, map[string]int64{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, modes
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owned by %d:%d (%q:%q), want 0:0 with no names", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], modes[h.Name] = b, h.Mode
	}
}

// archiveBinary returns the binary of a platform's archive, after checking the archive's files.
func archiveBinary(t *testing.T, dist string, p platform) []byte {
	t.Helper()
	name := ArchiveName(testVersion, p)
	f, err := os.Open(filepath.Join(dist, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, modes := readTar(t, f, true)
	top := strings.TrimSuffix(name, ".tar.gz") + "/"
	want := []string{top + "CHANGELOG.md", top + "LICENSE", top + "README.md", top + "minicluster-fn"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Errorf("%s holds %v, want %v", name, got, want)
	}
	if modes[top+"minicluster-fn"] != 0o755 {
		t.Errorf("%s: the binary's mode is %o, want 755", name, modes[top+"minicluster-fn"])
	}
	return files[top+"minicluster-fn"]
}

// TestArchives: each archive holds a static binary for its platform.
func TestArchives(t *testing.T) {
	dist := release(t)
	for _, p := range Platforms {
		bin := archiveBinary(t, dist, p)
		switch p.OS {
		case "linux":
			f, err := elf.NewFile(bytes.NewReader(bin))
			if err != nil {
				t.Fatalf("%s: not an ELF file: %v", p, err)
			}
			want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Arch]
			if f.Machine != want {
				t.Errorf("%s: ELF machine %v, want %v", p, f.Machine, want)
			}
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					t.Errorf("%s: the binary asks for a dynamic loader: not static", p)
				}
			}
		case "darwin":
			f, err := macho.NewFile(bytes.NewReader(bin))
			if err != nil {
				t.Fatalf("%s: not a Mach-O file: %v", p, err)
			}
			want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[p.Arch]
			if f.Cpu != want {
				t.Errorf("%s: Mach-O CPU %v, want %v", p, f.Cpu, want)
			}
		}
	}
}

// TestBinaryVersion: the binary for this machine says the release's version and commit.
func TestBinaryVersion(t *testing.T) {
	p := platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(Platforms, p) {
		t.Skipf("SKIPPED: no release binary for this machine (%s)", p)
	}
	path := filepath.Join(t.TempDir(), "minicluster-fn")
	if err := os.WriteFile(path, archiveBinary(t, release(t), p), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(path, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Version, Commit, KeygenImage string }
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	o := testOptions(t, "")
	if info.Version != o.Version || info.Commit != o.Commit || info.KeygenImage != o.ImageRepository+":"+o.Version {
		t.Errorf("version -o json: %+v, want version %s, commit %s, keygen image %s:%s", info, o.Version, o.Commit, o.ImageRepository, o.Version)
	}
}

// TestSBOM: each SBOM is CycloneDX JSON describing the release's binary and its modules.
func TestSBOM(t *testing.T) {
	dist := release(t)
	for _, p := range Platforms {
		b, err := os.ReadFile(filepath.Join(dist, SBOMName(testVersion, p)))
		if err != nil {
			t.Fatal(err)
		}
		var bom struct {
			BOMFormat, SerialNumber string
			Metadata                struct {
				Timestamp  string
				Component  struct{ Name, Version string }
				Properties []struct{ Name, Value string }
			}
			Components []struct{ Name, Version string }
		}
		if err := json.Unmarshal(b, &bom); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if bom.BOMFormat != "CycloneDX" {
			t.Errorf("%s: bomFormat %q", p, bom.BOMFormat)
		}
		if bom.SerialNumber != "" || bom.Metadata.Timestamp != "" {
			t.Errorf("%s: a serial number %q or timestamp %q would differ between two releases", p, bom.SerialNumber, bom.Metadata.Timestamp)
		}
		c := bom.Metadata.Component
		if c.Name != "github.com/minicluster-fn/minicluster-fn" || c.Version != testVersion {
			t.Errorf("%s: the SBOM describes %s %s", p, c.Name, c.Version)
		}
		props := map[string]string{}
		for _, pr := range bom.Metadata.Properties {
			props[pr.Name] = pr.Value
		}
		if props["cdx:gomod:build:env:GOOS"] != p.OS || props["cdx:gomod:build:env:GOARCH"] != p.Arch {
			t.Errorf("%s: the SBOM's build properties are %v", p, props)
		}
		// The binary it describes is the archive's.
		if sum := sha256.Sum256(archiveBinary(t, dist, p)); props["cdx:gomod:binary:hash:SHA-256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: the SBOM describes a binary of SHA-256 %s, the archive's is %x", p, props["cdx:gomod:binary:hash:SHA-256"], sum)
		}
		var names []string
		for _, m := range bom.Components {
			names = append(names, m.Name)
		}
		for _, want := range []string{"sigs.k8s.io/kustomize/kyaml", "k8s.io/api", "std"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s: the SBOM lacks module %s", p, want)
			}
		}
	}
}

// TestImage: the OCI archive holds one index, named repository:version, of a linux/amd64 and a
// linux/arm64 image; each runs the archive's binary as nobody and carries the OCI labels.
func TestImage(t *testing.T) {
	dist := release(t)
	o := testOptions(t, dist)
	f, err := os.Open(filepath.Join(dist, ImageArchiveName(testVersion)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, _ := readTar(t, f, false)
	dir := t.TempDir()
	for name, b := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 {
		t.Fatalf("index.json has %d entries, want 1", len(topManifest.Manifests))
	}
	ref := topManifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"]
	if want := o.ImageRepository + ":" + testVersion; ref != want {
		t.Errorf("the index is named %q, want %q", ref, want)
	}
	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			t.Fatalf("image %s has no platform in the index", desc.Digest)
		}
		p := platform{desc.Platform.OS, desc.Platform.Architecture}
		platforms = append(platforms, p.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, o, p, img, archiveBinary(t, dist, p))
	}
	if want := []string{"linux_amd64", "linux_arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the image's platforms are %v, want %v", platforms, want)
	}
}

func checkImage(t *testing.T, o Options, p platform, img v1.Image, binary []byte) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != p.OS || cfg.Architecture != p.Arch {
		t.Errorf("%s: the image's config says %s/%s", p, cfg.OS, cfg.Architecture)
	}
	if cfg.Config.User != imageUser || !slices.Equal(cfg.Config.Entrypoint, []string{"/" + imageBinary}) {
		t.Errorf("%s: user %q, entrypoint %v", p, cfg.Config.User, cfg.Config.Entrypoint)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Commit,
		"org.opencontainers.image.source":   sourceURL,
	} {
		if got := cfg.Config.Labels[k]; got != want {
			t.Errorf("%s: label %s is %q, want %q", p, k, got, want)
		}
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%s: %d layers, want 1", p, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files, modes := readTar(t, rc, false)
	if !bytes.Equal(files[imageBinary], binary) || modes[imageBinary] != 0o755 {
		t.Errorf("%s: the image's %s is not the archive's binary (mode %o)", p, imageBinary, modes[imageBinary])
	}
	if !strings.HasPrefix(string(files["etc/passwd"]), "nobody:x:65534:65534:") {
		t.Errorf("%s: /etc/passwd has no nobody: %q", p, files["etc/passwd"])
	}
}

// TestBadInput: a version or commit that is not one is refused, and nothing is written.
func TestBadInput(t *testing.T) {
	for name, edit := range map[string]func(*Options){
		"version without v":   func(o *Options) { o.Version = "0.1.0" },
		"version not semver":  func(o *Options) { o.Version = "v1" },
		"short commit":        func(o *Options) { o.Commit = "0123456" },
		"no date":             func(o *Options) { o.Date = time.Time{} },
		"missing source file": func(o *Options) { o.Repo = t.TempDir() },
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions(t, filepath.Join(t.TempDir(), "dist"))
			edit(&o)
			if err := Release(o); err == nil {
				t.Fatal("Release succeeded")
			}
			if _, err := os.Stat(o.Dist); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed release left %s (%v)", o.Dist, err)
			}
		})
	}
}
