package fn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
	"github.com/minicluster-fn/minicluster-fn/internal/parallel"
)

// Stream is the KRM function on streams, the path the binary takes. The ResourceList is read and
// its internal annotations reconciled by kio, as kyaml's framework.Execute does, and written back
// with the items, the functionConfig and the results. Only the generated objects take another way
// out: each is written from its typed object by objyaml, instead of being parsed into an RNode for
// kyaml's writer (for a thousand MiniClusters that writer was most of the function's time and
// memory). It returns the results it wrote; on failure the output holds the input items unchanged
// and the results, and the error is the error results.
func (p Processor) Stream(in io.Reader, out io.Writer) (framework.Results, error) {
	rw := &kio.ByteReadWriter{Reader: in, KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return nil, &ReadError{Err: err}
	}
	pathKeys := pathAnnotationKeys(items)
	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(items)
	if err != nil {
		return nil, err
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	r, err := p.render(rl)
	var generated [][]byte
	if err == nil {
		items = r.kept
		texts := parallel.Map(len(r.generated), func(i int) encoded {
			g := r.generated[i]
			var buf bytes.Buffer
			for _, obj := range g.objs {
				text, err := encodeObject(obj, g.pathAnnotations(obj, pathKeys))
				if err != nil {
					return encoded{err: err}
				}
				writeIndented(&buf, text, "- ", "  ")
			}
			return encoded{text: buf.Bytes()}
		})
		for _, t := range texts {
			if t.err != nil {
				return rl.Results, t.err
			}
			generated = append(generated, t.text)
		}
	} else if !isResults(err) {
		return rl.Results, err
	}
	if rerr := kio.ReconcileInternalAnnotations(items, nodeAnnos); rerr != nil {
		return rl.Results, rerr
	}
	w := bufio.NewWriterSize(out, 64<<10)
	werr := writeResourceList(w, items, generated, rl.FunctionConfig, rl.Results)
	return rl.Results, errors.Join(err, werr, w.Flush())
}

// ReadError is a ResourceList input that kyaml could not read: YAML that does not parse, or no
// ResourceList. Err is kyaml's error.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "failed to read the ResourceList input: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

type encoded struct {
	text []byte
	err  error
}

// writeResourceList writes a ResourceList: items (each written by kyaml, as its ByteWriter writes
// one document), then the generated items, already written as list items, then the functionConfig
// and the results (as framework.Execute writes them).
func writeResourceList(w *bufio.Writer, items []*yaml.RNode, generated [][]byte, fc *yaml.RNode, results framework.Results) error {
	w.WriteString("apiVersion: " + kio.ResourceListAPIVersion + "\nkind: " + kio.ResourceListKind + "\n")
	if len(items) == 0 && len(generated) == 0 {
		w.WriteString("items: []\n")
	} else {
		w.WriteString("items:\n")
	}
	texts := parallel.Map(len(items), func(i int) encoded { return encodeNode(items[i]) })
	for _, t := range texts {
		if t.err != nil {
			return t.err
		}
		writeIndented(w, t.text, "- ", "  ")
	}
	for _, text := range generated {
		w.Write(text)
	}
	if fc != nil {
		t := encodeNode(fc)
		if t.err != nil {
			return t.err
		}
		w.WriteString("functionConfig:\n")
		writeIndented(w, t.text, "  ", "  ")
	}
	if len(results) > 0 {
		text, err := yaml.Marshal(results)
		if err != nil {
			return err
		}
		w.WriteString("results:\n")
		w.Write(text)
	}
	return nil
}

// encodeNode is kyaml's text of one item, reader annotations kept.
func encodeNode(n *yaml.RNode) encoded {
	var buf bytes.Buffer
	err := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true}.Write([]*yaml.RNode{n})
	return encoded{text: buf.Bytes(), err: err}
}

// writeIndented writes a YAML document nested one level down: its first line after first ("- " for
// a list item), every other non-empty line after rest. Block YAML keeps its meaning when every line
// is indented alike.
func writeIndented(w io.Writer, doc []byte, first, rest string) {
	prefix := first
	for line := range bytes.Lines(doc) {
		if len(line) > 1 {
			io.WriteString(w, prefix)
		}
		w.Write(line)
		prefix = rest
	}
}

// encodeObject writes a generated object as YAML with the annotations added.
func encodeObject(obj generators.Object, annotations map[string]string) ([]byte, error) {
	if len(annotations) > 0 {
		all := make(map[string]string, len(obj.GetAnnotations())+len(annotations))
		maps.Copy(all, obj.GetAnnotations())
		maps.Copy(all, annotations)
		obj.SetAnnotations(all)
	}
	return objyaml.Marshal(obj)
}

// WriteManifests renders the MiniClusters of rl and writes only the generated objects, as a YAML
// stream ("---" between documents): the output of `minicluster-fn render`. Nothing is written if
// any MiniCluster is invalid.
func (p Processor) WriteManifests(rl *framework.ResourceList, out io.Writer) error {
	r, err := p.render(rl)
	if err != nil {
		return err
	}
	texts := parallel.Map(len(r.generated), func(i int) encoded {
		var buf bytes.Buffer
		for j, obj := range r.generated[i].objs {
			text, err := encodeObject(obj, nil)
			if err != nil {
				return encoded{err: err}
			}
			if i > 0 || j > 0 {
				buf.WriteString("---\n")
			}
			buf.Write(text)
		}
		return encoded{text: buf.Bytes()}
	})
	w := bufio.NewWriterSize(out, 64<<10)
	for _, t := range texts {
		if t.err != nil {
			return t.err
		}
		w.Write(t.text)
	}
	return w.Flush()
}
