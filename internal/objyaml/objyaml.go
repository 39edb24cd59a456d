// Package objyaml writes typed Kubernetes objects (k8s.io/api, the Flux CD APIs) as YAML: the one
// encoder for the generated manifests, the fluxcd command's objects and keygen's ConfigMap or
// Secret.
package objyaml

import (
	"bytes"
	"encoding/json"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Marshal writes a typed object as YAML, keys sorted, without status: the objects written here
// are inputs to an apply, and the typed structs would print an empty one. Unset fields are left
// out as their JSON tags say (an unset metadata.creationTimestamp among them).
//
// encoding/json writes the typed object (its encoders are the ones the name hashes already built)
// and reads that JSON back into a map, which kyaml's YAML library writes. Reading the JSON with
// the YAML parser instead cost about 4% of a hello-world process; runtime.DefaultUnstructuredConverter
// and sigs.k8s.io/yaml.Marshal did the same in more passes, and the converter's field cache is
// copied whole on each field it first sees, which in a fresh process cost more than rendering.
func Marshal(obj any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	delete(fields, "status")
	return yaml.Marshal(plainNumbers(fields))
}

// WriteStream writes the objects as one YAML stream, "---" between documents.
func WriteStream[T any](w io.Writer, objs ...T) error {
	for i, obj := range objs {
		data, err := Marshal(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// plainNumbers replaces the json.Numbers in a decoded JSON value with int64, or float64 where a
// number is not an integer, in place: kyaml's YAML library would quote a json.Number as a string,
// and would write an integer decoded as float64 in exponent form (1e+06).
func plainNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = plainNumbers(e)
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	}
	return v
}
