package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// Target says which certificate object to create and which Service owns it.
type Target struct {
	// Kind is the kind of the certificate object, Secret or ConfigMap.
	//
	// A Secret is created and never read: the keygen Role may create Secrets and not read any.
	// With get on the Secret's name, the keygen pod could create a Secret of that name of type
	// kubernetes.io/service-account-token for any ServiceAccount of the namespace and read the
	// token the control plane writes into it. So an existing Secret is accepted unchecked.
	//
	// A ConfigMap is read first, and an existing one is checked: reading ConfigMaps gains nothing
	// beyond the certificate itself.
	Kind v1alpha2.CurveKind
	// Name is the name of the certificate object (key curve.cert).
	Name string
	// OwnerService is the MiniCluster's headless Service: deleting it (pruning the MiniCluster
	// from Git) lets the garbage collector delete the key too.
	OwnerService string
	// OwnerJob and OwnerJobUID, when set, name the keygen Job that runs this, as a second owner.
	// The garbage collector deletes an object only once all its owners are gone: pruning the
	// MiniCluster removes both, while a Service deleted by hand (and put back by a GitOps tool)
	// leaves the certificate that the running brokers hold. No right is needed to name it.
	OwnerJob    string
	OwnerJobUID string
	// Labels go on a created object.
	Labels map[string]string
}

// Outcome is what Publish did.
type Outcome struct {
	// Created is true when this call created the object, false when it already existed.
	Created bool
	// Namespace and OwnerUID identify where the object is and the Service that owns it.
	Namespace string
	OwnerUID  string
}

// ErrInvalidExisting: a ConfigMap of the target's name exists but does not hold a valid
// certificate. Publish leaves it as it is; brokers cannot start with it.
var ErrInvalidExisting = errors.New("exists but does not hold a valid CURVE certificate")

// Publish creates the certificate object with cert, owned by the target Service, unless one of
// that name exists: then it changes nothing. An existing ConfigMap is checked, and
// ErrInvalidExisting (wrapped) returned when it does not hold a valid certificate; an existing
// Secret is not read (see Target.Kind). Transient errors are retried with backoff; each retry is
// reported on log. Messages never contain the secret key.
func (c *Client) Publish(ctx context.Context, t Target, cert *curve.Cert, log io.Writer) (Outcome, error) {
	out := Outcome{Namespace: c.namespace}
	var owner corev1.Service
	err := c.withRetry(ctx, log, "get Service "+c.ref(t.OwnerService), func(ctx context.Context) error {
		return c.rest.Get().Namespace(c.namespace).Resource("services").Name(t.OwnerService).Do(ctx).Into(&owner)
	})
	if apierrors.IsNotFound(err) {
		return out, fmt.Errorf("owner Service %s not found: --owner-service must name the MiniCluster's headless Service, "+
			"which is applied together with the keygen Job (the Job retries until it exists)", c.ref(t.OwnerService))
	}
	if err != nil {
		return out, c.describe(t, "get Service "+c.ref(t.OwnerService), err)
	}
	out.OwnerUID = string(owner.UID)

	if t.Kind == v1alpha2.CurveKindConfigMap {
		if found, err := c.existing(ctx, t, log); found || err != nil {
			return out, err
		}
	}

	meta := metav1.ObjectMeta{
		Name:      t.Name,
		Namespace: c.namespace,
		Labels:    t.Labels,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1",
			Kind:       "Service",
			Name:       owner.Name,
			UID:        owner.UID,
		}},
	}
	if t.OwnerJob != "" {
		meta.OwnerReferences = append(meta.OwnerReferences, metav1.OwnerReference{
			APIVersion: "batch/v1",
			Kind:       "Job",
			Name:       t.OwnerJob,
			UID:        types.UID(t.OwnerJobUID),
		})
	}
	// The key pair never changes once made; immutable also spares kubelet from watching it.
	obj := generators.CurveObject(t.Kind, meta, string(cert.Marshal()), true)
	resource := "secrets"
	if t.Kind == v1alpha2.CurveKindConfigMap {
		resource = "configmaps"
	}
	what := "create " + string(t.Kind) + " " + c.ref(t.Name)
	err = c.withRetry(ctx, log, what, func(ctx context.Context) error {
		return c.rest.Post().Namespace(c.namespace).Resource(resource).
			Param("fieldManager", generators.KeygenFieldManager).Body(obj).Do(ctx).Error()
	})
	if apierrors.IsAlreadyExists(err) {
		if t.Kind == v1alpha2.CurveKindConfigMap {
			// Another run created it between our get and our create.
			_, err = c.existing(ctx, t, log)
			return out, err
		}
		return out, nil
	}
	if err != nil {
		return out, c.describe(t, what, err)
	}
	out.Created = true
	return out, nil
}

// existing reports whether the target ConfigMap exists, and checks its certificate if it does.
func (c *Client) existing(ctx context.Context, t Target, log io.Writer) (bool, error) {
	var cm corev1.ConfigMap
	err := c.withRetry(ctx, log, "get ConfigMap "+c.ref(t.Name), func(ctx context.Context) error {
		return c.rest.Get().Namespace(c.namespace).Resource("configmaps").Name(t.Name).Do(ctx).Into(&cm)
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, c.describe(t, "get ConfigMap "+c.ref(t.Name), err)
	}
	text, ok := cm.Data[curve.FileName]
	if !ok {
		return true, fmt.Errorf("ConfigMap %s %w: it has no key %q; it was left unchanged, delete it to have a new certificate made",
			c.ref(t.Name), ErrInvalidExisting, curve.FileName)
	}
	if _, err := curve.Parse([]byte(text)); err != nil {
		return true, fmt.Errorf("ConfigMap %s %w in key %q (%v); it was left unchanged, delete it to have a new certificate made",
			c.ref(t.Name), ErrInvalidExisting, curve.FileName, err)
	}
	return true, nil
}

// ref is namespace/name, for messages.
func (c *Client) ref(name string) string { return c.namespace + "/" + name }

// withRetry runs call until it succeeds, fails for good, the backoff is used up or ctx ends, and
// says before each retry how long it waits. It is not client-go's retry.OnError, which sleeps
// between attempts without watching a context, so --timeout could not cut a wait short
// (TestPublishStopsAtDeadline), and which does not tell the wait.
func (c *Client) withRetry(ctx context.Context, log io.Writer, what string, call func(context.Context) error) error {
	b := c.backoff
	for {
		err := call(ctx)
		if err == nil || !transient(err) || b.Steps <= 1 || ctx.Err() != nil {
			return err
		}
		wait := b.Step()
		fmt.Fprintf(log, "%s: %s; retrying in %s\n", what, firstLine(err), wait.Round(10*time.Millisecond))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// transient tells whether a later attempt of the same call may succeed.
func transient(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 429 || code >= 500 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout
	}
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		utilnet.IsHTTP2ConnectionLost(err) || utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// describe turns an error of the API call "what" into a message that says what to do.
func (c *Client) describe(t Target, what string, err error) error {
	switch {
	case apierrors.IsForbidden(err) && t.Kind == v1alpha2.CurveKindConfigMap:
		return fmt.Errorf("%s: %w (the keygen Role must allow get on the Service %s, get on the ConfigMap %s and create on configmaps)",
			what, err, t.OwnerService, t.Name)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%s: %w (the keygen Role must allow get on the Service %s and create on secrets)", what, err, t.OwnerService)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%s: the API server at %s rejected the credentials: %w", what, c.host, err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: cannot reach the Kubernetes API server at %s: %w", what, c.host, err)
}

// firstLine keeps retry notices to one line.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
