package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// Connection says where to read, as kubectl's flags do.
type Connection struct {
	// Kubeconfig is --kubeconfig; empty: KUBECONFIG, then ~/.kube/config, then the pod's
	// ServiceAccount, as kubectl.
	Kubeconfig string
	// Context is --context.
	Context string
	// Namespace is -n; empty: the context's namespace, else "default".
	Namespace string
	// AllNamespaces is -A.
	AllNamespaces bool
}

// Cluster reads MiniClusters' objects through one API server, with the requests the view role
// allows: list Jobs, Pods, ConfigMaps, Events and PersistentVolumeClaims, get pods/log; and, where
// a MiniCluster is queued by Kueue, list Kueue's Workloads.
type Cluster struct {
	core, batch, kueue rest.Interface
	// Namespace is the namespace read, "" for all.
	Namespace string
}

// Connect loads the kubeconfig as kubectl does and returns a Cluster for the namespace it implies.
func Connect(c Connection) (*Cluster, error) {
	cfg, ns, err := c.Load()
	if err != nil {
		return nil, err
	}
	if c.AllNamespaces {
		ns = ""
	}
	return NewCluster(cfg, ns)
}

// Load reads the kubeconfig by kubectl's rules (--kubeconfig, KUBECONFIG, ~/.kube/config, the
// pod's ServiceAccount; --context, -n) and returns its client config and the namespace it names.
func (c Connection) Load() (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
	overrides.Context.Namespace = c.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, ns, nil
}

// NewCluster reads through cfg in namespace ("" for all). Its scheme holds core/v1, batch/v1 and
// Kueue's v1beta2 only: client-go's generated clientset would register every API group at start-up, and this
// binary is also the KRM function, started once per render.
func NewCluster(cfg *rest.Config, namespace string) (*Cluster, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = codecs
	// Protobuf, as kubectl's typed clients ask for: a namespace of 1,000 MiniClusters is thousands
	// of Pods and Jobs, which decode several times faster than from JSON.
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.UserAgent = "minicluster-fn/" + version.Version
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client for %s: %w", cfg.Host, err)
	}
	client := func(apiPath string, gv schema.GroupVersion) (rest.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.APIPath = apiPath
		c.GroupVersion = &gv
		return rest.RESTClientForConfigAndClient(c, httpClient)
	}
	core, err := client("/api", corev1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	batch, err := client("/apis", batchv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	kueueClient, err := client("/apis", kueue.GroupVersion)
	if err != nil {
		return nil, err
	}
	return &Cluster{core: core, batch: batch, kueue: kueueClient, Namespace: namespace}, nil
}

// selector selects the objects of the named MiniClusters, or of all.
func selector(names []string, more ...string) string {
	s := contract.LabelMiniCluster
	if len(names) > 0 {
		s += " in (" + strings.Join(names, ",") + ")"
	}
	return strings.Join(append([]string{s}, more...), ",")
}

// Read lists, once per kind, the objects of the named MiniClusters (all without names): Jobs,
// Pods and certificate ConfigMaps by the contract's labels; Events and PersistentVolumeClaims of
// the namespace only when a MiniCluster is not healthy and its reason may need them.
func (c *Cluster) Read(ctx context.Context, names []string) (*Objects, error) {
	var objs Objects
	var jobs batchv1.JobList
	var pods corev1.PodList
	var cms corev1.ConfigMapList
	for _, l := range []struct {
		client   rest.Interface
		resource string
		selector string
		into     runtime.Object
	}{
		{c.batch, "jobs", selector(names), &jobs},
		{c.core, "pods", selector(names), &pods},
		{c.core, "configmaps", selector(names, contract.LabelComponent+"="+contract.ComponentCurve), &cms},
	} {
		if err := c.list(ctx, l.client, l.resource, l.selector, l.into); err != nil {
			return nil, err
		}
	}
	objs.Jobs, objs.Pods, objs.ConfigMaps = jobs.Items, pods.Items, cms.Items
	if !Needs(&objs) {
		return &objs, nil
	}
	var events corev1.EventList
	var pvcs corev1.PersistentVolumeClaimList
	if err := c.list(ctx, c.core, "events", "", &events); err != nil {
		return nil, err
	}
	if err := c.list(ctx, c.core, "persistentvolumeclaims", "", &pvcs); err != nil {
		return nil, err
	}
	objs.Events, objs.PVCs = events.Items, pvcs.Items
	if Queued(&objs) {
		var workloads kueue.WorkloadList
		switch err := c.list(ctx, c.kueue, "workloads", "", &workloads); {
		case err == nil:
			objs.Workloads = workloads.Items
		case apierrors.IsForbidden(err):
			// The reason says so: the view role does not grant Workloads, Kueue's batch user
			// role does.
			objs.WorkloadsUnreadable = err.Error() + " (Kueue's ClusterRole kueue-batch-user-role grants it)"
		case apierrors.IsNotFound(err):
			// Kueue's CRDs are gone, and the Job is still suspended for its queue.
			objs.WorkloadsUnreadable = err.Error()
		default:
			return nil, err
		}
	}
	return &objs, nil
}

func (c *Cluster) list(ctx context.Context, client rest.Interface, resource, labelSelector string, into runtime.Object) error {
	req := client.Get().Resource(resource)
	if c.Namespace != "" {
		req = req.Namespace(c.Namespace)
	}
	if labelSelector != "" {
		req = req.Param("labelSelector", labelSelector)
	}
	if err := req.Do(ctx).Into(into); err != nil {
		where := "in all namespaces"
		if c.Namespace != "" {
			where = "in namespace " + c.Namespace
		}
		return fmt.Errorf("listing %s %s: %w", resource, where, err)
	}
	return nil
}

// Logs is a LogReader: the container's last lines (pods/log, which the view role grants).
func (c *Cluster) Logs(ctx context.Context, namespace, pod, container string, lines int64) (string, error) {
	b, err := c.core.Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log").
		Param("container", container).Param("tailLines", fmt.Sprint(lines)).Do(ctx).Raw()
	return string(b), err
}
