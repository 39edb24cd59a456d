package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// keygenSetup is a namespace holding the applied output of the hello-world example, and what the
// keygen Job would run there.
type keygenSetup struct {
	ns        string
	objs      []*unstructured.Unstructured
	args      []string // the keygen container's arguments, as rendered
	account   string   // the keygen ServiceAccount
	configMap string   // --name
	service   string   // --owner-service
}

// newKeygenSetup renders hello-world and applies the objects whose kind is in kinds (all if none).
func (c *cluster) newKeygenSetup(t *testing.T, labels map[string]string, kinds ...string) *keygenSetup {
	t.Helper()
	objs := render(t, filepath.Join(repoRoot(t), "examples", "hello-world", "minicluster.yaml"))
	s := &keygenSetup{ns: c.namespace(t, "keygen", labels), objs: objs}
	var toApply []*unstructured.Unstructured
	for _, o := range objs {
		if len(kinds) == 0 || slices.Contains(kinds, o.GetKind()) {
			toApply = append(toApply, o)
		}
	}
	c.apply(t, s.ns, toApply)

	job := find(t, objs, "Job", "keygen")
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("keygen Job has %d containers, want 1", len(containers))
	}
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	s.args = args
	s.account, _, _ = unstructured.NestedString(job.Object, "spec", "template", "spec", "serviceAccountName")
	s.configMap, s.service = argValue(t, args, "--name"), argValue(t, args, "--owner-service")
	return s
}

// argValue is the value after flag in args.
func argValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("no %s in the keygen arguments %q", flag, args)
	return ""
}

// token is a real ServiceAccount token from the TokenRequest API, as kubelet mounts into pods.
func (c *cluster) token(t *testing.T, ns, account string) string {
	t.Helper()
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, account, err)
	}
	return tr.Status.Token
}

// publish runs the keygen container's arguments as a separate process whose only credentials
// are the kubeconfig.
func (s *keygenSetup) publish(t *testing.T, kubeconfig string, extra ...string) fnResult {
	t.Helper()
	return runFn(t, []string{"KUBECONFIG=" + kubeconfig}, "", append(append([]string{}, s.args...), extra...)...)
}

func (c *cluster) getConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := c.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// testKeygenPublish runs `keygen --publish` with a real token of the generated ServiceAccount,
// bound only to the generated Role.
func (c *cluster) testKeygenPublish(t *testing.T) {
	ctx := context.Background()
	s := c.newKeygenSetup(t, nil)
	kubeconfig := c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns)
	svc, err := c.cs.CoreV1().Services(s.ns).Get(ctx, s.service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	first := s.publish(t, kubeconfig)
	if first.code != 0 || !strings.Contains(first.stdout, "created ConfigMap "+s.ns+"/"+s.configMap) {
		t.Fatalf("first keygen --publish: %s", first)
	}
	cm := c.getConfigMap(t, s.ns, s.configMap)
	refs := cm.OwnerReferences
	if len(refs) != 1 || refs[0].APIVersion != "v1" || refs[0].Kind != "Service" || refs[0].Name != svc.Name || refs[0].UID != svc.UID {
		t.Errorf("ownerReferences = %+v, want the Service %s (uid %s)", refs, svc.Name, svc.UID)
	}
	if cm.Immutable == nil || !*cm.Immutable {
		t.Error("the certificate ConfigMap is not immutable")
	}
	if cm.Labels["app.kubernetes.io/instance"] != "flux-sample" || cm.Labels["app.kubernetes.io/component"] != "curve" {
		t.Errorf("labels = %v", cm.Labels)
	}
	cert := cm.Data["curve.cert"]
	if check := runFn(t, nil, cert, "keygen", "--check", "-"); check.code != 0 || !strings.Contains(check.stdout, `CURVE certificate "flux-sample"`) {
		t.Errorf("the published certificate does not pass keygen --check: %s", check)
	}
	_, secret, ok := strings.Cut(cert, `secret-key = "`)
	if !ok || len(secret) < 40 {
		t.Fatalf("no secret key in the published certificate")
	}
	if strings.Contains(first.stdout+first.stderr, secret[:40]) {
		t.Error("keygen --publish printed the secret key")
	}

	second := s.publish(t, kubeconfig)
	if second.code != 0 || !strings.Contains(second.stdout, "left unchanged") {
		t.Fatalf("second keygen --publish: %s", second)
	}
	if again := c.getConfigMap(t, s.ns, s.configMap); again.ResourceVersion != cm.ResourceVersion || again.Data["curve.cert"] != cert {
		t.Errorf("the second run changed the ConfigMap (resourceVersion %s -> %s)", cm.ResourceVersion, again.ResourceVersion)
	}

	// The same token may do nothing beyond what the keygen needs.
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	as := kubernetes.NewForConfigOrDie(restConfig)
	entrypoint := find(t, s.objs, "ConfigMap", "entrypoint").GetName()
	denied := map[string]error{}
	_, denied["get another ConfigMap"] = as.CoreV1().ConfigMaps(s.ns).Get(ctx, entrypoint, metav1.GetOptions{})
	_, denied["list ConfigMaps"] = as.CoreV1().ConfigMaps(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["update the certificate"] = as.CoreV1().ConfigMaps(s.ns).Update(ctx, cm, metav1.UpdateOptions{})
	denied["delete the certificate"] = as.CoreV1().ConfigMaps(s.ns).Delete(ctx, s.configMap, metav1.DeleteOptions{})
	_, denied["list Secrets"] = as.CoreV1().Secrets(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["get a ConfigMap in another namespace"] = as.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	_, denied["list Pods"] = as.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	for what, err := range denied {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s with the keygen token: err = %v, want Forbidden", what, err)
		}
	}
	// ... while what it needs is allowed.
	if _, err := as.CoreV1().Services(s.ns).Get(ctx, s.service, metav1.GetOptions{}); err != nil {
		t.Errorf("get the owner Service with the keygen token: %v", err)
	}
	if _, err := as.CoreV1().ConfigMaps(s.ns).Get(ctx, s.configMap, metav1.GetOptions{}); err != nil {
		t.Errorf("get the certificate ConfigMap with the keygen token: %v", err)
	}
}

// testKeygenBadInput: every failure is a clear message and exit 1, and nothing is changed.
func (c *cluster) testKeygenBadInput(t *testing.T) {
	t.Run("no credentials", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		res := runFn(t, []string{}, "", s.args...)
		if res.code != 1 || !strings.Contains(res.stderr, "error: no Kubernetes credentials: not running in a pod") {
			t.Errorf("%s", res)
		}
	})

	t.Run("missing Service", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil, "ServiceAccount", "Role", "RoleBinding")
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns))
		want := "error: owner Service " + s.ns + "/" + s.service + " not found"
		if res.code != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("want %q: %s", want, res)
		}
		if _, err := c.cs.CoreV1().ConfigMaps(s.ns).Get(context.Background(), s.configMap, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a ConfigMap was created without its owner: %v", err)
		}
	})

	t.Run("existing ConfigMap is not a certificate", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		bad, err := c.cs.CoreV1().ConfigMaps(s.ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.configMap},
			Data:       map[string]string{"curve.cert": "written by hand\n"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns))
		want := "error: ConfigMap " + s.ns + "/" + s.configMap + ` exists but does not hold a valid CURVE certificate in key "curve.cert"`
		if res.code != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "left unchanged") {
			t.Errorf("want %q: %s", want, res)
		}
		if after := c.getConfigMap(t, s.ns, s.configMap); after.ResourceVersion != bad.ResourceVersion {
			t.Errorf("the ConfigMap was changed: resourceVersion %s -> %s", bad.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("forbidden", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		// The namespace's default ServiceAccount has no Role.
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, "default"), s.ns))
		if res.code != 1 || !strings.Contains(res.stderr, `cannot get resource "services"`) || !strings.Contains(res.stderr, "the keygen Role must allow") {
			t.Errorf("%s", res)
		}
	})

	t.Run("credentials rejected", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		res := s.publish(t, c.kubeconfigFor(t, "not-a-token", s.ns))
		if res.code != 1 || !strings.Contains(res.stderr, "rejected the credentials") {
			t.Errorf("%s", res)
		}
	})

	t.Run("API server unreachable", func(t *testing.T) {
		s := c.newKeygenSetup(t, nil)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "https://" + l.Addr().String()
		l.Close()
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		text := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + closed + "}}]\n" +
			"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: " + s.ns + "}}]\ncurrent-context: x\n"
		if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res := s.publish(t, kubeconfig, "--timeout", "4s")
		took := time.Since(start)
		if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the Kubernetes API server at "+closed) || !strings.Contains(res.stderr, "retrying in") {
			t.Errorf("%s", res)
		}
		if took > 20*time.Second {
			t.Errorf("gave up after %s with --timeout 4s", took)
		}
	})
}
