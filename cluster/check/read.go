package check

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	ourversion "github.com/minicluster-fn/minicluster-fn/internal/version"
)

// API is what check asks the API server: reads, and access reviews, which create nothing. REST
// is the implementation; tests serve fixtures.
type API interface {
	Version(ctx context.Context) (*version.Info, error)
	// List lists resource ("nodes", "services", ...; its group is known) in namespace ("" for a
	// cluster-scoped resource) with a label selector, into a typed list.
	List(ctx context.Context, resource, namespace, selector string, into runtime.Object) error
	// Get reads one object into a typed object; a missing one is a NotFound error.
	Get(ctx context.Context, resource, namespace, name string, into runtime.Object) error
	// Review asks whether subject (nil: the identity check runs as, a SelfSubjectAccessReview;
	// otherwise a SubjectAccessReview) may do what attrs says.
	Review(ctx context.Context, subject *Subject, attrs authorizationv1.ResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error)
}

// Subject is a ServiceAccount whose rights check asks about (--applied-by).
type Subject struct{ Namespace, Name string }

// User is the user name the API server gives the ServiceAccount.
func (s Subject) User() string { return "system:serviceaccount:" + s.Namespace + ":" + s.Name }

// Groups are the groups every ServiceAccount's token carries, which RBAC bindings may name.
func (s Subject) Groups() []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + s.Namespace, "system:authenticated"}
}

func (s Subject) String() string { return "ServiceAccount " + s.Namespace + "/" + s.Name }

// resources says which API group and version serve each resource check reads.
var resources = map[string]schema.GroupVersion{
	"nodes":                  corev1.SchemeGroupVersion,
	"namespaces":             corev1.SchemeGroupVersion,
	"services":               corev1.SchemeGroupVersion,
	"resourcequotas":         corev1.SchemeGroupVersion,
	"limitranges":            corev1.SchemeGroupVersion,
	"persistentvolumeclaims": corev1.SchemeGroupVersion,
	"secrets":                corev1.SchemeGroupVersion,
	"configmaps":             corev1.SchemeGroupVersion,
	"serviceaccounts":        corev1.SchemeGroupVersion,
	"endpointslices":         discoveryv1.SchemeGroupVersion,
	"storageclasses":         storagev1.SchemeGroupVersion,
}

// REST is the API through client-go's REST client, with a scheme of the few groups check reads:
// like status (cluster/status), it avoids the generated clientset, whose init registers every
// API group in the binary that is also the KRM function (docs/benchmarks.md).
type REST struct {
	clients map[schema.GroupVersion]rest.Interface
	// Namespace is the namespace the kubeconfig and -n name.
	Namespace string
}

// Connect loads the kubeconfig as status does (status.Connection.Load).
func Connect(c status.Connection) (*REST, error) {
	cfg, ns, err := c.Load()
	if err != nil {
		return nil, err
	}
	return NewREST(cfg, ns)
}

// NewREST talks to the API server of cfg.
func NewREST(cfg *rest.Config, namespace string) (*REST, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, discoveryv1.AddToScheme, storagev1.AddToScheme, authorizationv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg.UserAgent = "minicluster-fn/" + ourversion.Version
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client for %s: %w", cfg.Host, err)
	}
	r := &REST{clients: map[schema.GroupVersion]rest.Interface{}, Namespace: namespace}
	for _, gv := range []schema.GroupVersion{corev1.SchemeGroupVersion, discoveryv1.SchemeGroupVersion, storagev1.SchemeGroupVersion, authorizationv1.SchemeGroupVersion} {
		c := rest.CopyConfig(cfg)
		c.APIPath = "/apis"
		if gv.Group == "" {
			c.APIPath = "/api"
		}
		c.GroupVersion = &gv
		if r.clients[gv], err = rest.RESTClientForConfigAndClient(c, httpClient); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *REST) client(resource string) (rest.Interface, error) {
	gv, ok := resources[resource]
	if !ok {
		return nil, fmt.Errorf("check reads no %s", resource)
	}
	return r.clients[gv], nil
}

// Version is the server's /version.
func (r *REST) Version(ctx context.Context) (*version.Info, error) {
	b, err := r.clients[corev1.SchemeGroupVersion].Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("reading /version: %w", err)
	}
	return &info, nil
}

func (r *REST) List(ctx context.Context, resource, namespace, selector string, into runtime.Object) error {
	c, err := r.client(resource)
	if err != nil {
		return err
	}
	req := c.Get().Resource(resource)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	if selector != "" {
		req = req.Param("labelSelector", selector)
	}
	return req.Do(ctx).Into(into)
}

func (r *REST) Get(ctx context.Context, resource, namespace, name string, into runtime.Object) error {
	c, err := r.client(resource)
	if err != nil {
		return err
	}
	req := c.Get().Resource(resource).Name(name)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	if _, ok := into.(*metav1.PartialObjectMetadata); ok {
		// The object's metadata only (a Secret's data never leaves the server).
		req = req.SetHeader("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	}
	return req.Do(ctx).Into(into)
}

func (r *REST) Review(ctx context.Context, subject *Subject, attrs authorizationv1.ResourceAttributes) (authorizationv1.SubjectAccessReviewStatus, error) {
	c := r.clients[authorizationv1.SchemeGroupVersion]
	if subject == nil {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
		out := &authorizationv1.SelfSubjectAccessReview{}
		err := c.Post().Resource("selfsubjectaccessreviews").Body(review).Do(ctx).Into(out)
		return out.Status, err
	}
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &attrs, User: subject.User(), Groups: subject.Groups(),
	}}
	out := &authorizationv1.SubjectAccessReview{}
	err := c.Post().Resource("subjectaccessreviews").Body(review).Do(ctx).Into(out)
	return out.Status, err
}
