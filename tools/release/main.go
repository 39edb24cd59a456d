// Command release builds a minicluster-fn release into a dist directory (make release):
//
//   - the static binary for linux and darwin on amd64 and arm64, each in a .tar.gz archive with
//     LICENSE, README.md and CHANGELOG.md;
//   - a CycloneDX SBOM of each binary (cyclonedx-gomod bin, pinned in this module);
//   - the container image for linux/amd64 and linux/arm64 as an OCI image index, in an OCI archive
//     (oci-archive, what skopeo and podman read), tagged with the version;
//   - checksums.txt: the SHA-256 of every file above, in sha256sum's format.
//
// Everything is reproducible: the binaries are built with -trimpath and no VCS stamping, every
// timestamp (tar entries, the image's creation) is the commit's time, and nothing random is
// written (no SBOM serial number or timestamp), so two runs from the same commit are identical
// byte for byte. Publishing is left to the commands that docs/releasing.md lists.
//
// It is its own program, not GoReleaser: GoReleaser builds images with a Docker engine (or pushes
// them with ko), and neither a Docker engine nor a registry is available where the project is
// tested; go-containerregistry writes the multi-platform image with no daemon.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/mod/semver"
)

const (
	project = "minicluster-fn"
	mainPkg = "./cmd/minicluster-fn"
	// The binary's path in the image, and the user it runs as (nobody, which kustomize asks for
	// when it runs a container function), as the Containerfile of make image has them.
	imageBinary = "usr/local/bin/minicluster-fn"
	imageUser   = "65534:65534"
	sourceURL   = "https://github.com/minicluster-fn/minicluster-fn"
)

// archiveFiles go into every archive beside the binary, from the repository's root.
var archiveFiles = []string{"LICENSE", "README.md", "CHANGELOG.md"}

// platform is one GOOS/GOARCH the release builds for.
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "_" + p.Arch }

// Platforms are the binaries' platforms; the image has the linux ones.
var Platforms = []platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Options say what to release, from where, to where.
type Options struct {
	Version         string    // a semantic version with a leading v: v0.1.0
	Commit          string    // the full commit hash the binaries say they were built from
	Date            time.Time // the commit's time: every timestamp in the release
	ImageRepository string    // where the image is published (the binary names it as keygen image)
	Repo            string    // the repository's root
	Dist            string    // the output directory, replaced
	SBOMTool        []string  // the command that runs cyclonedx-gomod
	Log             io.Writer
}

// Names of what a release writes, from its version.

// ArchiveName is the archive of a platform's binary.
func ArchiveName(version string, p platform) string {
	return fmt.Sprintf("%s_%s_%s.tar.gz", project, strings.TrimPrefix(version, "v"), p)
}

// SBOMName is the SBOM of a platform's binary.
func SBOMName(version string, p platform) string {
	return fmt.Sprintf("%s_%s_%s.sbom.cdx.json", project, strings.TrimPrefix(version, "v"), p)
}

// ImageArchiveName is the OCI archive of the image.
func ImageArchiveName(version string) string {
	return fmt.Sprintf("%s_%s_image.oci.tar", project, strings.TrimPrefix(version, "v"))
}

// ChecksumsName is the checksum file.
const ChecksumsName = "checksums.txt"

func main() {
	var o Options
	var epoch string
	flag.StringVar(&o.Version, "version", "", "the release's version, e.g. v0.1.0")
	flag.StringVar(&o.Commit, "commit", "", "the commit it is built from (git rev-parse HEAD)")
	flag.StringVar(&epoch, "date", "", "the commit's time in seconds since 1970 (git log -1 --format=%ct)")
	flag.StringVar(&o.ImageRepository, "image-repository", "ghcr.io/minicluster-fn/minicluster-fn", "where the image is published")
	flag.StringVar(&o.Repo, "repo", ".", "the repository's root")
	flag.StringVar(&o.Dist, "dist", "dist", "the output directory (replaced)")
	flag.Parse()
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "release: -date %q: want seconds since 1970\n", epoch)
		os.Exit(2)
	}
	o.Date = time.Unix(secs, 0).UTC()
	// cyclonedx-gomod is this module's tool; go tool builds it once and caches it.
	self, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	o.SBOMTool = []string{"go", "tool", "-modfile=" + filepath.Join(self, "go.mod"), "cyclonedx-gomod"}
	o.Log = os.Stderr
	if err := Release(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// Release writes the release of o into o.Dist. On an error it removes o.Dist: nothing
// half-written stays.
func Release(o Options) (err error) {
	if !semver.IsValid(o.Version) || semver.Canonical(o.Version) != o.Version {
		return fmt.Errorf("version %q: want a semantic version with a leading v, such as v0.1.0", o.Version)
	}
	if len(o.Commit) != 40 || strings.Trim(o.Commit, "0123456789abcdef") != "" {
		return fmt.Errorf("commit %q: want a full commit hash", o.Commit)
	}
	if o.Date.IsZero() {
		return errors.New("no date: want the commit's time")
	}
	if o.Repo, err = filepath.Abs(o.Repo); err != nil {
		return err
	}
	if err := os.RemoveAll(o.Dist); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(o.Dist)
		}
	}()
	build := filepath.Join(o.Dist, "build")
	var artifacts []string
	binaries := map[platform]string{}
	for _, p := range Platforms {
		bin := filepath.Join(build, p.String(), project)
		if err := goBuild(o, p, bin); err != nil {
			return err
		}
		binaries[p] = bin
		archive := ArchiveName(o.Version, p)
		if err := writeArchive(o, bin, filepath.Join(o.Dist, archive)); err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		sbom := SBOMName(o.Version, p)
		if err := writeSBOM(o, bin, filepath.Join(o.Dist, sbom)); err != nil {
			return fmt.Errorf("%s: %w", sbom, err)
		}
		artifacts = append(artifacts, archive, sbom)
		fmt.Fprintf(o.Log, "release: %s and %s\n", archive, sbom)
	}
	image := ImageArchiveName(o.Version)
	if err := writeImage(o, binaries, filepath.Join(o.Dist, image)); err != nil {
		return fmt.Errorf("%s: %w", image, err)
	}
	artifacts = append(artifacts, image)
	fmt.Fprintf(o.Log, "release: %s (linux/amd64, linux/arm64)\n", image)
	if err := os.RemoveAll(build); err != nil {
		return err
	}
	if err := writeChecksums(o.Dist, artifacts); err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "release: %s %s in %s\n", project, o.Version, o.Dist)
	return nil
}

// goBuild builds the static binary of p, as make build does, with the release's version.
func goBuild(o Options, p platform, out string) error {
	pkg := "github.com/minicluster-fn/minicluster-fn/internal/version"
	ldflags := strings.Join([]string{"-s", "-w",
		"-X", pkg + ".Version=" + o.Version,
		"-X", pkg + ".Commit=" + o.Commit,
		"-X", pkg + ".ImageRepository=" + o.ImageRepository}, " ")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, mainPkg)
	cmd.Dir = o.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %v\n%s", p, err, b)
	}
	return nil
}

// tarWriter writes entries whose metadata says nothing of the machine or the time of the build.
type tarWriter struct {
	*tar.Writer
	date time.Time
}

func (w tarWriter) dir(name string) error {
	return w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: w.date, Format: tar.FormatPAX})
}

func (w tarWriter) file(name string, mode int64, data []byte) error {
	if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: w.date, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// writeArchive writes the .tar.gz of a binary: a directory named as the archive, with the binary
// and archiveFiles.
func writeArchive(o Options, bin, out string) error {
	var buf bytes.Buffer
	tw := tarWriter{tar.NewWriter(&buf), o.Date}
	top := strings.TrimSuffix(filepath.Base(out), ".tar.gz")
	if err := tw.dir(top); err != nil {
		return err
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	if err := tw.file(top+"/"+project, 0o755, b); err != nil {
		return err
	}
	for _, name := range archiveFiles {
		b, err := os.ReadFile(filepath.Join(o.Repo, name))
		if err != nil {
			return err
		}
		if err := tw.file(top+"/"+name, 0o644, b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return writeGzip(out, buf.Bytes())
}

// writeGzip compresses data into the file out with a header that names no file and no time.
func writeGzip(out string, data []byte) error {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, gz.Bytes(), 0o644)
}

// writeSBOM writes the CycloneDX SBOM of a binary, from the module information Go records in
// it, with no serial number and no timestamp (both would differ between two runs).
func writeSBOM(o Options, bin, out string) error {
	args := append(slices.Clone(o.SBOMTool[1:]), "bin", "-json", "-std", "-noserial", "-notimestamp",
		"-version", o.Version, "-output", out, bin)
	cmd := exec.Command(o.SBOMTool[0], args...)
	cmd.Dir = o.Repo
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("cyclonedx-gomod: %v\n%s", err, b)
	}
	return nil
}

// imageLabels are the image's OCI annotations (as labels), as the Containerfile of make image
// sets them, with the release's revision and creation time.
func imageLabels(o Options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       project,
		"org.opencontainers.image.description": "Renders Flux Framework MiniClusters into plain Kubernetes manifests; KRM function and in-cluster CURVE keygen",
		"org.opencontainers.image.source":      sourceURL,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Commit,
		"org.opencontainers.image.created":     o.Date.Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

// platformImage is the image of a linux binary: the binary and the passwd and group lines of
// nobody, on nothing (FROM scratch), running as nobody.
func platformImage(o Options, p platform, bin string) (v1.Image, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tarWriter{tar.NewWriter(&buf), o.Date}
	for _, d := range []string{"etc", "usr", "usr/local", "usr/local/bin"} {
		if err := tw.dir(d); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/group", 0o644, []byte("nogroup:x:65534:\n")},
		{"etc/passwd", 0o644, []byte("nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
		{imageBinary, 0o755, b},
	}
	for _, f := range files {
		if err := tw.file(f.name, f.mode, f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerTar := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Date}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: created, CreatedBy: "make release"}})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Created = p.OS, p.Arch, created
	cfg.Config = v1.Config{
		User:       imageUser,
		Entrypoint: []string{"/" + imageBinary},
		Labels:     imageLabels(o),
	}
	return mutate.ConfigFile(img, cfg)
}

// writeImage writes the image index of the linux binaries as an OCI archive: the tar of an OCI
// image layout whose index.json names the index by its reference, repository:version
// (org.opencontainers.image.ref.name: podman load tags it so, skopeo copies it by that name).
func writeImage(o Options, binaries map[platform]string, out string) error {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range Platforms {
		if p.OS != "linux" {
			continue
		}
		img, err := platformImage(o, p, binaries[p])
		if err != nil {
			return fmt.Errorf("image for %s: %w", p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	idx = mutate.Annotations(idx, map[string]string{
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Commit,
		"org.opencontainers.image.source":   sourceURL,
		"org.opencontainers.image.created":  o.Date.Format(time.RFC3339),
	}).(v1.ImageIndex)
	dir, err := os.MkdirTemp(o.Dist, "image-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.ImageRepository + ":" + o.Version})); err != nil {
		return err
	}
	return tarDir(dir, out, o.Date)
}

// tarDir writes the files under dir into the (uncompressed) tar out, in lexical order.
func tarDir(dir, out string, date time.Time) error {
	var buf bytes.Buffer
	tw := tarWriter{tar.NewWriter(&buf), date}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, dir+string(filepath.Separator)))
		if d.IsDir() {
			return tw.dir(rel)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return tw.file(rel, 0o644, b)
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// writeChecksums writes checksums.txt: "<sha256>  <name>" a line, as sha256sum prints it (and
// sha256sum -c reads it), sorted by name.
func writeChecksums(dist string, names []string) error {
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		f, err := os.Open(filepath.Join(dist, name))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return os.WriteFile(filepath.Join(dist, ChecksumsName), []byte(b.String()), 0o644)
}
