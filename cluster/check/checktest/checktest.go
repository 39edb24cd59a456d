// Package checktest serves a cluster described in a YAML file to check, in place of an API server:
// for the tests of cluster/check and of the check command.
package checktest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/cluster/check"
)

// File is the fixture's YAML.
type File struct {
	// Version is the server's gitVersion; empty: /version fails.
	Version string `json:"version"`
	// Forbidden are the resources the identity may not read ("nodes", "secrets", ...).
	Forbidden []string `json:"forbidden"`
	// ReviewsForbidden: creating subjectaccessreviews (about another subject) is forbidden.
	ReviewsForbidden bool `json:"reviewsForbidden"`
	// Allow are the access reviews answered yes; every other one is answered no.
	Allow []Rule `json:"allow"`
	// Objects are the cluster's objects.
	Objects []runtime.RawExtension `json:"objects"`
}

// Rule allows Verbs on Resources ("jobs.batch", "roles.rbac.authorization.k8s.io/NAME") to Subject
// ("" for the identity check runs as, else "system:serviceaccount:NS:NAME"); "*" is any verb.
type Rule struct {
	Subject   string   `json:"subject"`
	Verbs     []string `json:"verbs"`
	Resources []string `json:"resources"`
}

// Cluster is a check.API over a File.
type Cluster struct {
	file    File
	objects []runtime.Object
	// Reviews counts the access reviews asked.
	Reviews int
}

// Load reads a fixture file.
func Load(path string) (*Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, discoveryv1.AddToScheme, storagev1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	c := &Cluster{file: f}
	for i, raw := range f.Objects {
		obj, _, err := decoder.Decode(raw.Raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: object %d: %w", path, i, err)
		}
		c.objects = append(c.objects, obj)
	}
	return c, nil
}

var kinds = map[string]string{
	"nodes": "Node", "namespaces": "Namespace", "services": "Service", "resourcequotas": "ResourceQuota",
	"limitranges": "LimitRange", "persistentvolumeclaims": "PersistentVolumeClaim", "secrets": "Secret",
	"configmaps": "ConfigMap", "serviceaccounts": "ServiceAccount", "endpointslices": "EndpointSlice",
	"storageclasses": "StorageClass",
}

func (c *Cluster) forbidden(resource, verb string) error {
	if slices.Contains(c.file.Forbidden, resource) {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("User \"someone\" cannot %s resource %q", verb, resource))
	}
	return nil
}

func (c *Cluster) Version(context.Context) (*version.Info, error) {
	if c.file.Version == "" {
		return nil, fmt.Errorf("the server is currently unable to handle the request")
	}
	return &version.Info{GitVersion: c.file.Version}, nil
}

func (c *Cluster) List(_ context.Context, resource, namespace, selector string, into runtime.Object) error {
	if err := c.forbidden(resource, "list"); err != nil {
		return err
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return err
	}
	var items []runtime.Object
	for _, o := range c.objects {
		m, _ := meta.Accessor(o)
		if o.GetObjectKind().GroupVersionKind().Kind == kinds[resource] && (namespace == "" || m.GetNamespace() == namespace) && sel.Matches(labels.Set(m.GetLabels())) {
			items = append(items, o.DeepCopyObject())
		}
	}
	return meta.SetList(into, items)
}

func (c *Cluster) Get(_ context.Context, resource, namespace, name string, into runtime.Object) error {
	if err := c.forbidden(resource, "get"); err != nil {
		return err
	}
	for _, o := range c.objects {
		m, _ := meta.Accessor(o)
		if o.GetObjectKind().GroupVersionKind().Kind == kinds[resource] && m.GetNamespace() == namespace && m.GetName() == name {
			if p, ok := into.(*metav1.PartialObjectMetadata); ok {
				p.Name, p.Namespace, p.Labels = m.GetName(), m.GetNamespace(), m.GetLabels()
				return nil
			}
			return runtime.DefaultUnstructuredConverter.FromUnstructured(mustUnstructured(o), into)
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func mustUnstructured(o runtime.Object) map[string]any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		panic(err)
	}
	return u
}

func (c *Cluster) Review(_ context.Context, subject *check.Subject, attrs authorizationv1.ResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	c.Reviews++
	user := ""
	if subject != nil {
		if c.file.ReviewsForbidden {
			return authorizationv1.SubjectAccessReviewStatus{}, apierrors.NewForbidden(
				schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "",
				fmt.Errorf("User \"someone\" cannot create resource \"subjectaccessreviews\" in API group \"authorization.k8s.io\" at the cluster scope"))
		}
		user = subject.User()
	}
	res := attrs.Resource
	if attrs.Group != "" {
		res += "." + attrs.Group
	}
	for _, r := range c.file.Allow {
		if r.Subject != user || (!slices.Contains(r.Verbs, attrs.Verb) && !slices.Contains(r.Verbs, "*")) {
			continue
		}
		for _, allowed := range r.Resources {
			what, name, named := strings.Cut(allowed, "/")
			if what == res && (!named || name == attrs.Name) {
				return authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "fixture rule"}, nil
			}
		}
	}
	return authorizationv1.SubjectAccessReviewStatus{}, nil
}
