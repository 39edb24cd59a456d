package outputcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// newObject is an empty object of the k8s.io/api type for apiVersion and kind, for the kinds a
// manifest set may hold.
func newObject(apiVersion, kind string) (runtime.Object, error) {
	switch apiVersion + " " + kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 Secret":
		return &corev1.Secret{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1 Pod":
		return &corev1.Pod{}, nil
	case "batch/v1 Job":
		return &batchv1.Job{}, nil
	case "rbac.authorization.k8s.io/v1 Role":
		return &rbacv1.Role{}, nil
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return &rbacv1.RoleBinding{}, nil
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		return &rbacv1.ClusterRole{}, nil
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		return &rbacv1.ClusterRoleBinding{}, nil
	}
	return nil, fmt.Errorf("unexpected kind %q of apiVersion %q in a manifest set", kind, apiVersion)
}

// DecodeStrict decodes a YAML stream of manifests into their k8s.io/api types: a field the type
// does not have, a field given twice or a value of the wrong type is an error, as the API server's
// strict field validation would report it.
func DecodeStrict(stream []byte) ([]runtime.Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var objs []runtime.Object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		obj, err := DecodeObject(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj != nil {
			objs = append(objs, obj)
		}
	}
}

// DecodeObject strictly decodes one YAML document (nil for an empty one).
func DecodeObject(doc []byte) (runtime.Object, error) {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return nil, nil
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(js, &head); err != nil {
		return nil, err
	}
	obj, err := newObject(head.APIVersion, head.Kind)
	if err != nil {
		return nil, err
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj, sigsjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", head.Kind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s: %w", head.Kind, errors.Join(strict...))
	}
	return obj, nil
}
