// Package version holds build information set with -ldflags.
package version

import "runtime"

// Version is the release of this build, a semantic version with a leading v, set with
// -ldflags "-X github.com/minicluster-fn/minicluster-fn/internal/version.Version=v0.1.0".
// A build from source between releases is the next release's -dev (make build's default).
var Version = "v0.2.0-dev"

// Commit is the git commit the build was made from, set with -ldflags by make build and make
// release (the Makefile sets GOFLAGS=-buildvcs=false, so Go records none itself); empty where
// the build did not say.
var Commit = ""

// ImageRepository is where the project's container image is published; set with -ldflags to build
// for another registry.
var ImageRepository = "ghcr.io/minicluster-fn/minicluster-fn"

// Image is this release's project image: what `make image` tags, the image Argo CD's repo server
// takes the binary from, and what the keygen-image option names to run keygen publish.
func Image() string { return ImageRepository + ":" + Version }

// Info is what `minicluster-fn version` prints.
type Info struct {
	Version     string `json:"version"`
	Commit      string `json:"commit,omitempty"`
	GoVersion   string `json:"goVersion"`
	Platform    string `json:"platform"`
	KeygenImage string `json:"keygenImage"`
}

// Get returns this build's Info.
func Get() Info {
	return Info{
		Version:     Version,
		Commit:      Commit,
		GoVersion:   runtime.Version(),
		Platform:    runtime.GOOS + "/" + runtime.GOARCH,
		KeygenImage: Image(),
	}
}
