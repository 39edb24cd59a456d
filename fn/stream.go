package fn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/generators"
)

const resourceListHeader = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"

// Stream is the KRM function on streams: a ResourceList in, a ResourceList out, written as
// kyaml's framework.Execute would write it (the pass-through items through kyaml), but the
// generated objects are written as text instead of node trees (see emitObject). It returns the results it wrote; on failure the output
// holds the input items unchanged and the results, and the error is a *Failed.
func (p Processor) Stream(in io.Reader, out io.Writer) (Results, error) {
	rw := &kio.ByteReadWriter{Reader: in, KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return nil, errors.New("failed to read the ResourceList input: " + err.Error())
	}
	// Generated objects get the path annotations in the forms the input used, as
	// kio.ReconcileInternalAnnotations gives the items of kyaml's framework.Execute (none for kustomize).
	var pathKeys []string
	//lint:ignore SA1019 the legacy form is what kpt and older kustomize read
	for _, key := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
		// (With no items at all, kyaml keeps both forms.)
		if len(items) == 0 || slices.ContainsFunc(items, func(n *yaml.RNode) bool { _, ok := n.GetAnnotations()[key]; return ok }) {
			pathKeys = append(pathKeys, key)
		}
	}
	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(items)
	if err != nil {
		return nil, err
	}
	rl := &ResourceList{Items: items, FunctionConfig: rw.FunctionConfig}
	r, err := p.render(rl)
	if err != nil {
		var failed *Failed
		if !errors.As(err, &failed) {
			return rl.Results, err
		}
		// As kyaml's framework.Execute does: the input items and the results.
		if rerr := kio.ReconcileInternalAnnotations(items, nodeAnnos); rerr != nil {
			return rl.Results, rerr
		}
		w := bufio.NewWriter(out)
		werr := writeResourceList(w, items, rl.FunctionConfig, rl.Results, nil)
		return rl.Results, errors.Join(err, werr, w.Flush())
	}
	if err := kio.ReconcileInternalAnnotations(r.kept, nodeAnnos); err != nil {
		return rl.Results, err
	}
	w := newOutputWriter(out, len(r.generated))
	texts := parallelMap(len(r.generated), func(i int) emitted {
		g := r.generated[i]
		return emitSet(g.objs, func(obj generators.Object) map[string]string {
			annotations := map[string]string{}
			for _, key := range pathKeys {
				annotations[key] = outputFile(obj, g.src)
			}
			return annotations
		}, 2, "- ", "")
	})
	err = writeResourceList(w, r.kept, rl.FunctionConfig, rl.Results, func() error { return writeEmitted(w, texts) })
	return rl.Results, errors.Join(err, w.Flush())
}

// writeResourceList writes items as kyaml does, then the generated items (written by
// writeGenerated straight to w), then the functionConfig and the results.
func writeResourceList(w *bufio.Writer, items []*yaml.RNode, fc *yaml.RNode, results Results, writeGenerated func() error) error {
	w.WriteString(resourceListHeader)
	if len(items) == 0 && writeGenerated == nil {
		w.WriteString("items: []\n")
	} else {
		w.WriteString("items:\n")
	}
	// kyaml encodes each item on its own, so a thousand pass-through items are written in chunks in
	// parallel and the texts joined.
	const chunk = 64
	texts := parallelMap((len(items)+chunk-1)/chunk, func(i int) emitted {
		return encodeItems(items[i*chunk : min(len(items), (i+1)*chunk)])
	})
	if err := writeEmitted(w, texts); err != nil {
		return err
	}
	if writeGenerated != nil {
		if err := writeGenerated(); err != nil {
			return err
		}
	}
	if fc != nil {
		s, err := fc.String()
		if err != nil {
			return err
		}
		w.WriteString("functionConfig:\n")
		for line := range strings.SplitSeq(strings.TrimSuffix(s, "\n"), "\n") {
			if line != "" {
				w.WriteString("  ")
			}
			w.WriteString(line)
			w.WriteByte('\n')
		}
	}
	if len(results) > 0 {
		r, err := yaml.Marshal(results)
		if err != nil {
			return err
		}
		w.WriteString("results:\n")
		w.Write(r)
	}
	return nil
}

// encodeItems is the text kyaml writes for items in a ResourceList (sequence indentation and
// annotations as it formats them), after "items:".
func encodeItems(items []*yaml.RNode) emitted {
	var list bytes.Buffer
	if err := (&kio.ByteReadWriter{Writer: &list, KeepReaderAnnotations: true,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(items); err != nil {
		return emitted{err: err}
	}
	text := list.Bytes()
	i := bytes.Index(text, []byte("\nitems:\n"))
	if i < 0 {
		return emitted{err: errors.New("unexpected ResourceList encoding")}
	}
	return emitted{text: text[i+len("\nitems:\n"):]}
}

// WriteManifests renders the MiniClusters of rl and writes only the generated objects, as a YAML
// stream ("---" between documents): the output of `minicluster-fn render`. Nothing is written if
// any MiniCluster is invalid.
func (p Processor) WriteManifests(rl *ResourceList, out io.Writer) error {
	r, err := p.render(rl)
	if err != nil {
		return err
	}
	texts := parallelMap(len(r.generated), func(i int) emitted {
		sep := "---\n"
		if i == 0 {
			sep = ""
		}
		return emitSet(r.generated[i].objs, nil, 0, "", sep)
	})
	w := newOutputWriter(out, len(r.generated))
	return errors.Join(writeEmitted(w, texts), w.Flush())
}

// emitted is the YAML text of one MiniCluster's objects.
type emitted struct {
	text []byte
	err  error
}

// emitSet writes objs as YAML, each with the annotations annotate gives (nil: none), each
// preceded by sep except the first one, which is preceded by firstSep.
func emitSet(objs []generators.Object, annotate func(generators.Object) map[string]string, indent int, first, firstSep string) emitted {
	var buf bytes.Buffer
	// A MiniCluster's objects take about 20 KB of YAML; growing the buffer by doubling from
	// nothing was a quarter of all bytes allocated for a thousand of them.
	buf.Grow(32 << 10)
	w := bufio.NewWriter(&buf)
	for i, obj := range objs {
		switch {
		case i == 0:
			w.WriteString(firstSep)
		case first == "":
			w.WriteString("---\n")
		}
		var annotations map[string]string
		if annotate != nil {
			annotations = annotate(obj)
		}
		if err := emitObject(w, obj, annotations, indent, first); err != nil {
			return emitted{err: err}
		}
	}
	err := w.Flush()
	return emitted{text: buf.Bytes(), err: err}
}

func writeEmitted(w *bufio.Writer, texts []emitted) error {
	for _, t := range texts {
		if t.err != nil {
			return t.err
		}
		w.Write(t.text)
	}
	return nil
}

// newOutputWriter buffers the output of sets MiniClusters' objects: up to 64 KB (what a pipe takes
// in one write) for many, less for a few, since every 4 KB of a fresh buffer is one more page
// fault in a process that lives for a few milliseconds; texts larger than the buffer are
// written straight through anyway.
func newOutputWriter(out io.Writer, sets int) *bufio.Writer {
	return bufio.NewWriterSize(out, min(64<<10, 16<<10*max(1, sets)))
}
