// Package version holds build information set with -ldflags.
package version

// Version is the release of this build, set with
// -ldflags "-X github.com/minicluster-fn/minicluster-fn/internal/version.Version=v0.1.0".
var Version = "v0.1.0-dev"

// ImageRepository is where the project's container image is published; set with -ldflags to build
// for another registry.
var ImageRepository = "ghcr.io/minicluster-fn/minicluster-fn"

// Image is this release's project image: what `make image` tags, the image Argo CD's repo server
// takes the binary from, and what the keygen-image option names to run keygen publish.
func Image() string { return ImageRepository + ":" + Version }
