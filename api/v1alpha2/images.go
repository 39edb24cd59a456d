package v1alpha2

import (
	// The digest algorithms of image references (@sha256:…, @sha512:…) must be linked in for the
	// reference parser to accept their digests, as the kubelet links them (k8s.io/kubernetes
	// pkg/util/parsers).
	_ "crypto/sha256"
	_ "crypto/sha512"
	"strings"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateImage checks that image is a reference the kubelet can pull: it parses it as the
// kubelet does before every pull (reference.ParseNormalizedNamed, in k8s.io/kubernetes
// pkg/util/parsers.ParseImageName), so that `Ubuntu:Noble` or `ubuntu noble` is an error naming
// its field now instead of a pod stuck in InvalidImageName after the apply. An empty image is
// left to the callers, which say why one is needed.
func validateImage(image string, p *field.Path) field.ErrorList {
	if image == "" {
		return nil
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		detail := "not an image reference the kubelet can pull: " + err.Error()
		if strings.ContainsAny(image, " \t\r\n") {
			detail += " (it contains whitespace)"
		}
		return field.ErrorList{field.Invalid(p, image, detail)}
	}
	return nil
}
