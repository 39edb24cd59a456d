package impact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/fn"
)

// Set is one MiniCluster's manifest set at one revision.
type Set struct {
	Namespace, Name string
	// File is the MiniCluster's file, or for rendered output the file of its broker Job.
	File string
	// Source is the MiniCluster document as the user wrote it; nil for rendered output.
	Source map[string]any
	// MaxSize is the MiniCluster's spec.maxSize after defaults; in rendered output, its broker
	// Job's max-size annotation (0 without one).
	MaxSize int
	Objects []*unstructured.Unstructured
}

func (s Set) key() string { return id(s.Namespace, s.Name) }

// FromManifestSet is the Set of a MiniCluster rendered in this process.
func FromManifestSet(ms fn.ManifestSet) (Set, error) {
	source, err := documentOf(ms.Source.MustString())
	if err != nil {
		return Set{}, fmt.Errorf("%s: MiniCluster %s: %w", ms.File, ms.MiniCluster.Name, err)
	}
	objs, err := toUnstructured(ms.Objects)
	if err != nil {
		return Set{}, err
	}
	return Set{Namespace: ms.MiniCluster.Namespace, Name: ms.MiniCluster.Name, File: ms.File, Source: source,
		MaxSize: int(ms.MiniCluster.Spec.MaxSize), Objects: objs}, nil
}

// documentOf is a MiniCluster document as a tree of maps and lists, without the annotations that
// a reader adds to say where the document was (its file and index, which are not the user's).
func documentOf(text string) (map[string]any, error) {
	var doc map[string]any
	if err := sigsyaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if meta, ok := doc["metadata"].(map[string]any); ok {
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			for key := range annotations {
				if isReaderAnnotation(key) {
					delete(annotations, key)
				}
			}
			if len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	return doc, nil
}

// isReaderAnnotation tells the annotations kyaml's readers add (file, index, id).
func isReaderAnnotation(key string) bool {
	//lint:ignore SA1019 the legacy forms are what kpt and older kustomize write
	legacy := key == kioutil.LegacyPathAnnotation || key == kioutil.LegacyIndexAnnotation || key == kioutil.LegacyIdAnnotation
	return legacy || strings.HasPrefix(key, "internal.config.kubernetes.io/")
}

// toUnstructured turns typed objects into the form rendered output is read in, through their JSON,
// so that both compare alike.
func toUnstructured[T any](objs []T) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// RenderedFile is a file of rendered output: what kustomize build, render.sh or kpt wrote.
type RenderedFile struct {
	Path string
	Data []byte
}

// RenderedSets finds the MiniClusters whose generated objects the files hold, by the labels every
// generated object carries (objects of others, such as a kustomization, are skipped), sorted by
// namespace and name. Rendered output has no MiniCluster documents: the Sets have no Source.
func RenderedSets(files []RenderedFile) ([]Set, error) {
	sets := map[string]*Set{}
	seen := map[string]string{}
	var problems []error
	for _, f := range files {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(f.Data)))
		for index := 0; ; index++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: YAML does not parse: %w", f.Path, err))
				break
			}
			js, err := sigsyaml.YAMLToJSON(doc)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s (document %d): YAML does not parse: %w", f.Path, index+1, err))
				continue
			}
			if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				continue // not a Kubernetes object (a configuration file): not ours
			}
			instance := miniClusterOf(u)
			if instance == "" {
				continue
			}
			objID := objectID(u)
			if first, dup := seen[objID]; dup {
				problems = append(problems, fmt.Errorf("%s: %s is also in %s: each object must be rendered once", f.Path, objID, first))
				continue
			}
			seen[objID] = f.Path
			key := id(u.GetNamespace(), instance)
			s := sets[key]
			if s == nil {
				s = &Set{Namespace: u.GetNamespace(), Name: instance}
				sets[key] = s
			}
			if isBrokerJob(u) {
				s.File = f.Path
				if n, err := strconv.Atoi(u.GetAnnotations()[contract.AnnotationMaxSize]); err == nil {
					s.MaxSize = n
				}
			}
			s.Objects = append(s.Objects, u)
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	var out []Set
	for _, key := range slices.Sorted(maps.Keys(sets)) {
		out = append(out, *sets[key])
	}
	return out, nil
}

// miniClusterOf is the MiniCluster a generated object belongs to, by its labels; "" for an
// object minicluster-fn did not generate.
func miniClusterOf(u *unstructured.Unstructured) string {
	labels := u.GetLabels()
	name := labels[contract.LabelMiniCluster]
	if name == "" || !contract.IsGenerated(labels, name) {
		return ""
	}
	return name
}
