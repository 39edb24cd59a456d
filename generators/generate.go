// Package generators turns a defaulted, valid MiniCluster into the typed Kubernetes objects of its
// manifest set. Every function here is pure: same MiniCluster, same objects.
package generators

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/naming"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// Object is a typed Kubernetes object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// Warning is something the user should know about a MiniCluster that still renders.
type Warning struct {
	Field   string
	Message string
}

// Generate returns the manifest set of mc in a stable order, and warnings. mc must have been
// defaulted and validated (v1alpha2: Default, ParseOptions, Validate).
func Generate(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) ([]Object, []Warning, error) {
	placeholder := newNames(mc, opts, placeholderHash, placeholderHash, placeholderHash)
	// The scripts never contain the Job name (they read it at run time), so they can be rendered
	// before the name is known, and their text can go into the hash that names the Job.
	data, err := entrypointData(mc, opts, placeholder)
	if err != nil {
		return nil, nil, err
	}
	n, err := resolveNames(mc, opts, placeholder, data)
	if err != nil {
		return nil, nil, err
	}
	var objs []Object
	switch {
	case opts.CurveSecret != "":
		// The user's Secret is mounted as is.
	case mc.Spec.Flux.CurveCert != "":
		objs = append(objs, inlineCurve(mc, opts, n))
	default:
		keygen, err := keygenObjects(mc, opts, n)
		if err != nil {
			return nil, nil, err
		}
		objs = append(objs, keygen...)
	}
	objs = append(objs, entrypointConfigMap(mc, n, data), headlessService(mc, n))
	for _, s := range portServices(mc) {
		objs = append(objs, s)
	}
	if len(mc.Spec.Services) > 0 {
		objs = append(objs, servicesPod(mc, n))
	}
	if opts.Eviction == v1alpha2.EvictionWaitForCommand {
		objs = append(objs, disruptionBudget(mc, n))
	}
	objs = append(objs, brokerJob(mc, opts, n))
	return objs, warnings(mc), nil
}

func entrypointConfigMap(mc *v1alpha2.MiniCluster, n names, data map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(mc, n.EntrypointConfigMap, contract.ComponentEntrypoint, waveConfig),
		Data:       data,
	}
	cm.Annotations[fluxcdSubstitute] = fluxcdSubstituteDisabled
	return cm
}

// resolveNames computes the hashes that name the immutable objects. The broker Job's hash covers
// everything its pods run except size (a size change within maxSize patches the Job in place):
// the spec, our options, the scripts as rendered for maxSize, and the pod template itself
// (rendered with placeholder names, since the names depend on the hash).
func resolveNames(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, placeholder names, data map[string]string) (names, error) {
	spec := mc.Spec // a shallow copy: only Size changes
	spec.Size = 0
	if mc.Spec.Size != mc.Spec.MaxSize {
		atMax := *mc
		atMax.Spec.Size = mc.Spec.MaxSize
		var err error
		if data, err = entrypointData(&atMax, opts, placeholder); err != nil {
			return names{}, err
		}
	}
	jobHash, err := shortHash(spec, opts, data, brokerPodTemplate(mc, opts, placeholder))
	if err != nil {
		return names{}, err
	}
	keygenTemplate, err := keygenPodTemplate(mc, opts, placeholder)
	if err != nil {
		return names{}, err
	}
	keygenHash, err := shortHash(keygenTemplate)
	if err != nil {
		return names{}, err
	}
	servicesHash, err := shortHash(servicesPodSpec(mc, placeholder))
	if err != nil {
		return names{}, err
	}
	return newNames(mc, opts, jobHash, keygenHash, servicesHash), nil
}

// shortHash is the first naming.HashSuffixLength hex digits of the SHA-256 of the values' JSON form, as
// encoding/json writes it: struct fields in declaration order, map keys sorted, so it is
// deterministic.
func shortHash(values ...any) (string, error) {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return "", fmt.Errorf("hashing the pod template: %w", err)
		}
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))[:naming.HashSuffixLength], nil
}
