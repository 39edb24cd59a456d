package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// These tests pin the error handling that a real API server cannot be made to exercise on demand
// (a 503, a refused connection). Everything else is tested against a real kube-apiserver in
// tests/integration.

// fastBackoff keeps retry tests short: 4 attempts, a few milliseconds apart.
var fastBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 4}

// fakeAPI answers core/v1 requests from a table of canned responses, in order per path, and
// records each request.
type fakeAPI struct {
	mu        sync.Mutex
	responses map[string][]cannedResponse // key: "METHOD /path"
	requests  []string
	created   []byte
}

type cannedResponse struct {
	code int
	body any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := r.Method + " " + r.URL.Path
	f.requests = append(f.requests, key)
	if r.Method == http.MethodPost {
		f.created, _ = io.ReadAll(r.Body)
	}
	queue := f.responses[key]
	if len(queue) == 0 {
		http.Error(w, "unexpected request "+key, http.StatusTeapot)
		return
	}
	resp := queue[0]
	if len(queue) > 1 {
		f.responses[key] = queue[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.code)
	if err := json.NewEncoder(w).Encode(resp.body); err != nil {
		panic(err)
	}
}

func status(code int32, reason metav1.StatusReason, msg string) cannedResponse {
	return cannedResponse{int(code), metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: code, Reason: reason, Message: msg,
	}}
}

var (
	serviceOK = cannedResponse{200, corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "team", UID: "uid-1"},
	}}
	configMapAbsent = status(404, metav1.StatusReasonNotFound, `configmaps "hello-curve" not found`)
	unavailable     = status(503, metav1.StatusReasonServiceUnavailable, "etcd is restarting")
)

const (
	svcPath = "GET /api/v1/namespaces/team/services/hello"
	cmPath  = "GET /api/v1/namespaces/team/configmaps/hello-curve"
	postCM  = "POST /api/v1/namespaces/team/configmaps"
)

func testClient(t *testing.T, host string) *Client {
	t.Helper()
	c, err := newClient(&rest.Config{Host: host}, "team")
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = fastBackoff
	return c
}

func testCert(t *testing.T) *curve.Cert {
	t.Helper()
	cert, err := curve.Generate("hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

var target = Target{Kind: v1alpha2.CurveKindConfigMap, Name: "hello-curve", OwnerService: "hello", Labels: map[string]string{"app.kubernetes.io/instance": "hello"}}

// secretTarget is target as a Secret, the default of the generated keygen Job.
var secretTarget = Target{Kind: v1alpha2.CurveKindSecret, Name: "hello-curve", OwnerService: "hello", Labels: map[string]string{"app.kubernetes.io/instance": "hello"}}

const postSecret = "POST /api/v1/namespaces/team/secrets"

// TestPublishSecret: the Secret is created with the certificate, owned by the Service, and
// nothing reads a Secret.
func TestPublishSecret(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath:    {serviceOK},
		postSecret: {{201, corev1.Secret{}}},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	cert := testCert(t)
	out, err := testClient(t, srv.URL).Publish(context.Background(), secretTarget, cert, io.Discard)
	if err != nil || !out.Created || out.OwnerUID != "uid-1" {
		t.Fatalf("out = %+v, err = %v", out, err)
	}
	if want := []string{svcPath, postSecret}; !slices.Equal(api.requests, want) {
		t.Errorf("requests %v, want %v", api.requests, want)
	}
	var secret corev1.Secret
	if err := json.Unmarshal(api.created, &secret); err != nil {
		t.Fatalf("created body: %v", err)
	}
	refs := secret.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Service" || refs[0].Name != "hello" || refs[0].UID != "uid-1" || refs[0].APIVersion != "v1" {
		t.Errorf("ownerReferences = %+v", refs)
	}
	if secret.Kind != "Secret" || secret.Type != corev1.SecretTypeOpaque || secret.Immutable == nil || !*secret.Immutable ||
		secret.Labels["app.kubernetes.io/instance"] != "hello" {
		t.Errorf("kind %q, type %q, immutable %v, labels %v; want an immutable Opaque Secret with the labels", secret.Kind, secret.Type, secret.Immutable, secret.Labels)
	}
	if got := string(secret.Data["curve.cert"]); got != string(cert.Marshal()) {
		t.Errorf("curve.cert =\n%s", got)
	}
}

// TestPublishSecretJobOwner: with the keygen Job named, it is the second owner, after the Service.
func TestPublishSecretJobOwner(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath:    {serviceOK},
		postSecret: {{201, corev1.Secret{}}},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	target := secretTarget
	target.OwnerJob, target.OwnerJobUID = "hello-keygen-0123abcd", "uid-job"
	if _, err := testClient(t, srv.URL).Publish(context.Background(), target, testCert(t), io.Discard); err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := json.Unmarshal(api.created, &secret); err != nil {
		t.Fatalf("created body: %v", err)
	}
	refs := secret.OwnerReferences
	if len(refs) != 2 || refs[0].Kind != "Service" || refs[0].UID != "uid-1" ||
		refs[1].APIVersion != "batch/v1" || refs[1].Kind != "Job" || refs[1].Name != "hello-keygen-0123abcd" || refs[1].UID != "uid-job" {
		t.Errorf("ownerReferences = %+v, want the Service, then the Job", refs)
	}
	// Neither may block the owner's deletion: that would need rights on the owners' finalizers.
	for _, r := range refs {
		if r.BlockOwnerDeletion != nil || r.Controller != nil {
			t.Errorf("ownerReference %+v sets blockOwnerDeletion or controller", r)
		}
	}
}

// TestPublishSecretExists: an existing Secret is left alone without being read; the keygen Role
// has no right to read it.
func TestPublishSecretExists(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath:    {serviceOK},
		postSecret: {status(409, metav1.StatusReasonAlreadyExists, `secrets "hello-curve" already exists`)},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	out, err := testClient(t, srv.URL).Publish(context.Background(), secretTarget, testCert(t), io.Discard)
	if err != nil || out.Created {
		t.Fatalf("out = %+v, err = %v; want the existing Secret accepted", out, err)
	}
	if want := []string{svcPath, postSecret}; !slices.Equal(api.requests, want) {
		t.Errorf("requests %v, want %v", api.requests, want)
	}
}

// TestPublishSecretForbidden: a Role without create on secrets gets a message naming the rights.
func TestPublishSecretForbidden(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath:    {serviceOK},
		postSecret: {status(403, metav1.StatusReasonForbidden, `secrets is forbidden: User "system:serviceaccount:team:x" cannot create resource "secrets"`)},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	_, err := testClient(t, srv.URL).Publish(context.Background(), secretTarget, testCert(t), io.Discard)
	want := `create Secret team/hello-curve: secrets is forbidden: User "system:serviceaccount:team:x" cannot create resource "secrets" ` +
		`(the keygen Role must allow get on the Service hello and create on secrets)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestPublishRetriesTransientErrors(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath: {unavailable, unavailable, serviceOK},
		cmPath:  {configMapAbsent},
		postCM:  {{201, corev1.ConfigMap{}}},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	cert := testCert(t)

	var log bytes.Buffer
	out, err := testClient(t, srv.URL).Publish(context.Background(), target, cert, &log)
	if err != nil {
		t.Fatalf("Publish: %v\nlog:\n%s", err, log.String())
	}
	if !out.Created || out.OwnerUID != "uid-1" || out.Namespace != "team" {
		t.Errorf("outcome = %+v", out)
	}
	if n := strings.Count(log.String(), "retrying in"); n != 2 {
		t.Errorf("want 2 retry notices, got %d:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "get Service team/hello: etcd is restarting; retrying in") {
		t.Errorf("retry notice does not say what failed:\n%s", log.String())
	}

	var cm corev1.ConfigMap
	if err := json.Unmarshal(api.created, &cm); err != nil {
		t.Fatalf("created body: %v", err)
	}
	refs := cm.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Service" || refs[0].Name != "hello" || refs[0].UID != "uid-1" || refs[0].APIVersion != "v1" {
		t.Errorf("ownerReferences = %+v", refs)
	}
	if cm.Immutable == nil || !*cm.Immutable || cm.Labels["app.kubernetes.io/instance"] != "hello" {
		t.Errorf("immutable = %v, labels = %v", cm.Immutable, cm.Labels)
	}
	if got := cm.Data["curve.cert"]; got != string(cert.Marshal()) {
		t.Errorf("curve.cert =\n%s", got)
	}
}

func TestPublishGivesUpAfterBackoff(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{svcPath: {unavailable}}}
	srv := httptest.NewServer(api)
	defer srv.Close()

	var log bytes.Buffer
	_, err := testClient(t, srv.URL).Publish(context.Background(), target, testCert(t), &log)
	if err == nil || !strings.Contains(err.Error(), "get Service team/hello: etcd is restarting") {
		t.Fatalf("err = %v", err)
	}
	if len(api.requests) != fastBackoff.Steps {
		t.Errorf("%d attempts, want %d (the backoff's steps): %v", len(api.requests), fastBackoff.Steps, api.requests)
	}
}

func TestPublishDoesNotRetryPermanentErrors(t *testing.T) {
	tests := []struct {
		name string
		resp cannedResponse
		want string
	}{
		{"forbidden", status(403, metav1.StatusReasonForbidden, `services "hello" is forbidden: User "system:serviceaccount:team:other" cannot get resource "services"`),
			`get Service team/hello: services "hello" is forbidden: User "system:serviceaccount:team:other" cannot get resource "services" (the keygen Role must allow`},
		{"unauthorized", status(401, metav1.StatusReasonUnauthorized, "Unauthorized"), "rejected the credentials"},
		{"not found", status(404, metav1.StatusReasonNotFound, `services "hello" not found`),
			"owner Service team/hello not found: --owner-service must name the MiniCluster's headless Service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPI{responses: map[string][]cannedResponse{svcPath: {tt.resp}}}
			srv := httptest.NewServer(api)
			defer srv.Close()
			var log bytes.Buffer
			_, err := testClient(t, srv.URL).Publish(context.Background(), target, testCert(t), &log)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if len(api.requests) != 1 || log.Len() != 0 {
				t.Errorf("a permanent error was retried: requests %v, log %q", api.requests, log.String())
			}
		})
	}
}

func TestPublishUnreachable(t *testing.T) {
	// A port that was just free: connections are refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + l.Addr().String()
	l.Close()

	var log bytes.Buffer
	_, err = testClient(t, host).Publish(context.Background(), target, testCert(t), &log)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Kubernetes API server at "+host) {
		t.Fatalf("err = %v", err)
	}
	if n := strings.Count(log.String(), "connection refused; retrying in"); n != fastBackoff.Steps-1 {
		t.Errorf("want %d retry notices, got:\n%s", fastBackoff.Steps-1, log.String())
	}
}

func TestPublishStopsAtDeadline(t *testing.T) {
	api := &fakeAPI{responses: map[string][]cannedResponse{svcPath: {unavailable}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c := testClient(t, srv.URL)
	c.backoff = wait.Backoff{Duration: time.Hour, Steps: 10}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Publish(ctx, target, testCert(t), io.Discard)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %s; want an error at the deadline", err, time.Since(start))
	}
}

func TestPublishLeavesExistingAlone(t *testing.T) {
	valid := string(testCert(t).Marshal())
	tests := []struct {
		name    string
		data    map[string]string
		wantErr string
	}{
		{"valid certificate", map[string]string{"curve.cert": valid}, ""},
		{"not a certificate", map[string]string{"curve.cert": "hello"}, `ConfigMap team/hello-curve exists but does not hold a valid CURVE certificate in key "curve.cert"`},
		{"no curve.cert key", map[string]string{"other": valid}, `ConfigMap team/hello-curve exists but does not hold a valid CURVE certificate: it has no key "curve.cert"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := cannedResponse{200, corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "hello-curve", Namespace: "team"},
				Data:       tt.data,
			}}
			api := &fakeAPI{responses: map[string][]cannedResponse{svcPath: {serviceOK}, cmPath: {existing}}}
			srv := httptest.NewServer(api)
			defer srv.Close()
			out, err := testClient(t, srv.URL).Publish(context.Background(), target, testCert(t), io.Discard)
			if out.Created {
				t.Error("Created = true for an existing ConfigMap")
			}
			for _, r := range api.requests {
				if !strings.HasPrefix(r, "GET ") {
					t.Errorf("request %s changes the cluster", r)
				}
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidExisting) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestPublishRaceAlreadyExists(t *testing.T) {
	existing := cannedResponse{200, corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		Data:     map[string]string{"curve.cert": string(testCert(t).Marshal())},
	}}
	api := &fakeAPI{responses: map[string][]cannedResponse{
		svcPath: {serviceOK},
		cmPath:  {configMapAbsent, existing},
		postCM:  {status(409, metav1.StatusReasonAlreadyExists, `configmaps "hello-curve" already exists`)},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	out, err := testClient(t, srv.URL).Publish(context.Background(), target, testCert(t), io.Discard)
	if err != nil || out.Created {
		t.Fatalf("out = %+v, err = %v; want the other run's ConfigMap accepted", out, err)
	}
}

func TestConnectCredentials(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBECONFIG", "")
	if _, err := Connect("", ""); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("no credentials: err = %v", err)
	}

	dir := t.TempDir()
	missing := filepath.Join(dir, "absent")
	if _, err := Connect(missing, ""); err == nil || !strings.Contains(err.Error(), "--kubeconfig "+missing) {
		t.Errorf("missing --kubeconfig: err = %v", err)
	}
	t.Setenv("KUBECONFIG", missing)
	if _, err := Connect("", ""); err == nil || !strings.Contains(err.Error(), "KUBECONFIG="+missing+": no usable kubeconfig") {
		t.Errorf("missing KUBECONFIG: err = %v", err)
	}

	kubeconfig := filepath.Join(dir, "config")
	const text = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	c, err := Connect("", "")
	if err != nil || c.namespace != "team-a" || c.host != "https://127.0.0.1:6443" {
		t.Fatalf("KUBECONFIG: client %+v, err %v; want the context's namespace and server", c, err)
	}
	if c, err := Connect(kubeconfig, "other"); err != nil || c.namespace != "other" {
		t.Fatalf("--namespace does not override the context: %+v, %v", c, err)
	}
}
