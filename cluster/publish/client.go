// Package publish creates a MiniCluster's CURVE certificate Secret (or ConfigMap) in the cluster,
// only if it is absent: what the keygen Job runs with the keygen-image option (minicluster-fn keygen publish).
//
// It talks to the API server through client-go's REST client with a scheme of core/v1 only. The
// generated clientset (k8s.io/client-go/kubernetes) is avoided on purpose: importing it registers
// every API group in init(), and the same binary is the KRM function, whose whole run must stay
// in single-digit milliseconds.
package publish

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// inClusterNamespaceFile is where kubelet puts the pod's namespace next to its ServiceAccount token.
var inClusterNamespaceFile = path.Join(generators.ServiceAccountDir, "namespace")

// ErrNoCredentials: neither a kubeconfig nor a pod's ServiceAccount is available.
var ErrNoCredentials = errors.New("no Kubernetes credentials: not running in a pod with a ServiceAccount token " +
	"(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are unset), and neither --kubeconfig nor KUBECONFIG is given")

// defaultBackoff bounds the retries of one API call on transient errors (unreachable server,
// timeouts, 429, 5xx): 6 attempts over about 15 seconds.
var defaultBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 6, Cap: 8 * time.Second}

// Client is a connection to one API server, working in one namespace.
type Client struct {
	rest      rest.Interface
	host      string
	namespace string
	// backoff bounds the retries of each API call.
	backoff wait.Backoff
}

// Connect builds a Client from, in this order: the kubeconfig file given (a --kubeconfig flag),
// the KUBECONFIG environment variable, or the pod's ServiceAccount. namespace overrides the
// namespace of the credentials (the kubeconfig context's, or the pod's own).
func Connect(kubeconfig, namespace string) (*Client, error) {
	cfg, credNamespace, err := loadConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = credNamespace
	}
	return newClient(cfg, namespace)
}

// newClient is a REST client for core/v1 with a scheme holding core/v1 alone.
func newClient(cfg *rest.Config, namespace string) (*Client, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg.UserAgent = "minicluster-fn/" + version.Version
	if cfg.Timeout == 0 {
		// One request never waits longer than this; the retries come on top.
		cfg.Timeout = 15 * time.Second
	}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Client{rest: rc, host: cfg.Host, namespace: namespace, backoff: defaultBackoff}, nil
}

// loadConfig returns the connection settings and the namespace they imply.
func loadConfig(kubeconfig string) (*rest.Config, string, error) {
	if kubeconfig != "" {
		return loadKubeconfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, "--kubeconfig "+kubeconfig)
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return loadKubeconfig(&clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(env)}, "KUBECONFIG="+env)
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, "", ErrNoCredentials
	}
	if err != nil {
		return nil, "", fmt.Errorf("in-cluster credentials: %w", err)
	}
	ns, err := os.ReadFile(inClusterNamespaceFile)
	if err != nil {
		return nil, "", fmt.Errorf("in-cluster namespace: %w (pass --namespace)", err)
	}
	return cfg, strings.TrimSpace(string(ns)), nil
}

// loadKubeconfig reads kubeconfig files without falling back to anything else: a user who names
// a kubeconfig must not silently get the in-cluster identity instead.
func loadKubeconfig(rules *clientcmd.ClientConfigLoadingRules, source string) (*rest.Config, string, error) {
	raw, err := rules.Load()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", source, err)
	}
	cc := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, "", fmt.Errorf("%s: no usable kubeconfig (missing files, or no current context)", source)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", source, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", source, err)
	}
	return cfg, ns, nil
}
