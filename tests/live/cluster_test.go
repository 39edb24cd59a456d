package live

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClusterServesPods checks the harness itself with the probe image, before any Flux test
// relies on it: an Indexed Job's pods find each other through a headless Service (cluster DNS,
// search path), and reach the API server through the kubernetes Service (kube-proxy).
func TestClusterServesPods(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	takeSlot(t)
	if suite.images.probe == "" {
		t.Fatal("the probe image was not loaded")
	}
	ns := namespace(t, "cluster")
	manifests := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: peers}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: {app: peers}
---
apiVersion: batch/v1
kind: Job
metadata: {name: peers}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      labels: {app: peers}
    spec:
      subdomain: peers
      restartPolicy: Never
      containers:
      - name: probe
        image: %s
        imagePullPolicy: Never
        args: [-timeout, 60s, resolve, peers-0.peers, peers-1.peers, peers-0.peers.%s.svc.cluster.local, kubernetes.default]
      - name: api
        image: %s
        imagePullPolicy: Never
        args: [-timeout, 60s, connect, kubernetes.default.svc:443]
`, suite.images.probe, ns, suite.images.probe)
	start := time.Now()
	apply(t, []byte(manifests), "-n", ns)
	jobComplete(t, ns, "peers", 2*time.Minute)
	t.Logf("2-pod Indexed Job complete %.1fs after apply", time.Since(start).Seconds())
	for _, p := range pods(t, ns, "app=peers") {
		out := mustKube(t, nil, "-n", ns, "logs", p.Metadata.Name, "--all-containers", "--prefix")
		t.Logf("%s", out)
		if strings.Contains(out, "FAILED") {
			t.Errorf("pod %s: a probe failed", p.Metadata.Name)
		}
	}
}
