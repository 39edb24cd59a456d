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
	"testing"
	"time"
)

// fluxcdControllers records what needFluxCD found or did, once per test binary.
var fluxcdControllers struct {
	once sync.Once
	err  error
	// started: needFluxCD ran tests/cluster/fluxcd-up.sh, so stopFluxCDIfStarted stops them.
	started bool
}

// needFluxCD makes sure Flux CD's source-controller and kustomize-controller run against the live
// cluster. Controllers that answer already (make fluxcd-up, make cluster-up FLUXCD=1) are used and
// left running; otherwise tests/cluster/fluxcd-up.sh starts them (building them the first time on
// the machine) and stopFluxCDIfStarted stops them after the tests.
func needFluxCD(t *testing.T) {
	t.Helper()
	requireCluster(t)
	fluxcdControllers.once.Do(func() {
		fluxcdControllers.started, fluxcdControllers.err = startFluxCD()
	})
	if fluxcdControllers.err != nil {
		t.Fatalf("Flux CD controllers: %v", fluxcdControllers.err)
	}
}

// startFluxCD runs fluxcd-up.sh unless both controllers are ready, and reports whether it did.
func startFluxCD() (started bool, err error) {
	ports, err := fluxcdHealthPorts()
	if err != nil {
		return false, err
	}
	if fluxcdReady(ports) {
		fmt.Fprintf(os.Stderr, "live: using the running Flux CD controllers (left running)\n")
		return false, nil
	}
	start := time.Now()
	// Shown as it runs (a first build takes minutes) and kept for the failure message.
	var out bytes.Buffer
	w := io.MultiWriter(os.Stderr, &out)
	cmd := exec.Command(filepath.Join(suite.clusterDir, "fluxcd-up.sh"))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("tests/cluster/fluxcd-up.sh failed (%v):\n%s", err, out.String())
	}
	fmt.Fprintf(os.Stderr, "live: Flux CD controllers up in %.1fs\n", time.Since(start).Seconds())
	return true, nil
}

// stopFluxCDIfStarted stops the controllers that needFluxCD started (tests/cluster/fluxcd-down.sh)
// and nothing else: controllers it found running stay.
func stopFluxCDIfStarted() error {
	if !fluxcdControllers.started {
		return nil
	}
	if err := runScript(filepath.Join(suite.clusterDir, "fluxcd-down.sh")); err != nil {
		return fmt.Errorf("tests/cluster/fluxcd-down.sh: %v", err)
	}
	fluxcdControllers.started = false
	return nil
}

// fluxcdHealthPorts: the controllers' health ports, from tests/cluster/env.sh.
func fluxcdHealthPorts() ([]string, error) {
	out, err := exec.Command("bash", "-c",
		`. "$1/env.sh" && echo "$SOURCE_CONTROLLER_HEALTH_PORT $KUSTOMIZE_CONTROLLER_HEALTH_PORT"`,
		"bash", suite.clusterDir).Output()
	if err != nil {
		return nil, fmt.Errorf("reading tests/cluster/env.sh: %v", err)
	}
	ports := strings.Fields(string(out))
	if len(ports) != 2 {
		return nil, fmt.Errorf("tests/cluster/env.sh gives the Flux CD health ports as %q", out)
	}
	return ports, nil
}

// fluxcdReady: every controller answers /readyz on its health port.
func fluxcdReady(ports []string) bool {
	client := http.Client{Timeout: 2 * time.Second}
	for _, port := range ports {
		resp, err := client.Get("http://127.0.0.1:" + port + "/readyz")
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
