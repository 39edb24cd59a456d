package live

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hostComponents are processes that a tests/cluster script starts beside the cluster, on demand:
// Flux CD's controllers, Argo CD's components, the Flux Framework operator.
type hostComponents struct {
	name     string   // for messages
	up, down string   // the scripts in tests/cluster that start and stop them
	ports    []string // the env.sh variables of their health ports
	health   string   // the path each health port serves: /readyz, or /healthz for Argo CD's

	once sync.Once
	err  error
	// started: need ran the up script, so stopIfStarted stops them.
	started bool
}

var (
	fluxcdControllers = &hostComponents{name: "Flux CD controllers", up: "fluxcd-up.sh", down: "fluxcd-down.sh",
		ports: []string{"SOURCE_CONTROLLER_HEALTH_PORT", "KUSTOMIZE_CONTROLLER_HEALTH_PORT"}, health: "/readyz"}
	// Redis and the plugin server have no health port: argocd-up.sh waits for them, and the repo
	// server's health check fails while redis does not answer.
	argocdComponents = &hostComponents{name: "Argo CD components", up: "argocd-up.sh", down: "argocd-down.sh",
		ports: []string{"ARGOCD_REPO_SERVER_METRICS_PORT", "ARGOCD_CONTROLLER_METRICS_PORT"}, health: "/healthz"}
	operatorManager = &hostComponents{name: "Flux Framework operator", up: "operator-up.sh", down: "operator-down.sh",
		ports: []string{"OPERATOR_HEALTH_PORT"}, health: "/readyz"}
	kueueManager = &hostComponents{name: "Kueue", up: "kueue-up.sh", down: "kueue-down.sh",
		ports: []string{"KUEUE_HEALTH_PORT"}, health: "/readyz"}
)

// needFluxCD makes sure Flux CD's source-controller and kustomize-controller run against the live
// cluster (tests/cluster/fluxcd-up.sh).
func needFluxCD(t *testing.T) { fluxcdControllers.need(t) }

// needArgoCD makes sure Argo CD's application controller, repo server, plugin server and redis
// run against the live cluster (tests/cluster/argocd-up.sh).
func needArgoCD(t *testing.T) { argocdComponents.need(t) }

// needKueue makes sure Kueue's manager runs against the live cluster with its webhooks
// (tests/cluster/kueue-up.sh), and returns the label that makes a namespace one Kueue manages.
func needKueue(t *testing.T) string {
	kueueManager.need(t)
	out, err := exec.Command("bash", "-c", `. "$1/env.sh" && echo "$KUEUE_NAMESPACE_LABEL"`, "bash", suite.clusterDir).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("reading KUEUE_NAMESPACE_LABEL from tests/cluster/env.sh: %v %q", err, out)
	}
	return strings.TrimSpace(string(out))
}

// needOperator makes sure the Flux Framework operator's manager runs against the live cluster
// (tests/cluster/operator-up.sh), with its CRD installed.
// Its source comes from ../shared: without it, the test skips and says so.
func needOperator(t testing.TB) {
	t.Helper()
	tarball := envOr("MINICLUSTER_FN_OPERATOR_TARBALL", filepath.Join(suite.repo, "..", "shared", "vendor", "flux-operator-0d75cef8.tar.gz"))
	if _, err := os.Stat(tarball); err != nil {
		t.Skipf("SKIPPED: the operator's source is not at %s (../shared is absent)", tarball)
	}
	operatorManager.need(t)
}

// prebuildComponents starts tests/cluster/prebuild.sh in the background at the lowest priority when the
// whole suite runs, and returns a function that waits for it: the builds of the components beside
// the cluster (Argo CD, Flux CD, the operator), one after another, each cached per machine. On a new
// machine each takes minutes of CPU, and the tests before the ones that need them leave the
// machine idle most of the time (vmstat), which the builds use; those tests run after the rest
// (t.Parallel). A test that needs a component whose build still runs waits at the build script's
// lock and finds its result. Where the builds are cached (or make test built them ahead), the script
// returns at once. A build that fails here fails again, with its message, in the test that needs it.
func prebuildComponents() (wait func()) {
	cmd := exec.Command(filepath.Join(suite.clusterDir, "prebuild.sh"))
	// A session of its own, whose priority the script lowers (it says why).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stderr = os.Stderr // progress, prefixed by each build script
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "live: building ahead with tests/cluster/prebuild.sh: %v; the tests build what they need\n", err)
		return func() {}
	}
	return func() { _ = cmd.Wait() }
}

// need: components that answer already (make fluxcd-up, make operator-up) are used and left
// running; otherwise the up script starts them (building them the first time on the machine) and
// stopIfStarted stops them after the tests.
func (c *hostComponents) need(t testing.TB) {
	t.Helper()
	requireCluster(t)
	c.once.Do(func() { c.started, c.err = c.start() })
	if c.err != nil {
		t.Fatalf("%s: %v", c.name, c.err)
	}
}

// start runs the up script unless every component is ready, and reports whether it did.
func (c *hostComponents) start() (started bool, err error) {
	ports, err := c.healthPorts()
	if err != nil {
		return false, err
	}
	if ready(ports, c.health) {
		fmt.Fprintf(os.Stderr, "live: using the running %s (left running)\n", c.name)
		return false, nil
	}
	begin := time.Now()
	defer func() { recordPhase(c.name+" up (with any wait for its build)", time.Since(begin), "") }()
	// Shown as it runs (a first build takes minutes) and kept for the failure message.
	var out bytes.Buffer
	w := io.MultiWriter(os.Stderr, &out)
	cmd := exec.Command(filepath.Join(suite.clusterDir, c.up))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("tests/cluster/%s failed (%v):\n%s", c.up, err, out.String())
	}
	fmt.Fprintf(os.Stderr, "live: %s up in %.1fs\n", c.name, time.Since(begin).Seconds())
	return true, nil
}

// stopIfStarted stops what need started (the down script) and nothing else: components it found
// running stay.
func (c *hostComponents) stopIfStarted() error {
	if !c.started {
		return nil
	}
	if err := runScript(filepath.Join(suite.clusterDir, c.down)); err != nil {
		return fmt.Errorf("tests/cluster/%s: %v", c.down, err)
	}
	c.started = false
	return nil
}

// healthPorts: the components' health ports, from tests/cluster/env.sh.
func (c *hostComponents) healthPorts() ([]string, error) {
	script := `. "$1/env.sh"`
	for _, v := range c.ports {
		script += ` && echo "$` + v + `"`
	}
	out, err := exec.Command("bash", "-c", script, "bash", suite.clusterDir).Output()
	if err != nil {
		return nil, fmt.Errorf("reading tests/cluster/env.sh: %v", err)
	}
	ports := strings.Fields(string(out))
	if len(ports) != len(c.ports) {
		return nil, fmt.Errorf("tests/cluster/env.sh gives the health ports %v as %q", c.ports, out)
	}
	return ports, nil
}

// ready: every component answers OK at path on its health port.
func ready(ports []string, path string) bool {
	client := http.Client{Timeout: 2 * time.Second}
	for _, port := range ports {
		resp, err := client.Get("http://127.0.0.1:" + port + path)
		if err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
	}
	return true
}
