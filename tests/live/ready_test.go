package live

import (
	"strings"
	"testing"
	"time"
)

// TestReadyMeansJoined shows that a broker pod's Ready condition means "this broker has joined the
// instance", not "its container started": a persistent size-2 MiniCluster is applied with a headless
// Service that selects no pod, so rank 1 cannot find rank 0 and the instance cannot start (its quorum is both
// ranks). Both brokers run, neither may become Ready, and the probe's reason is in the events.
// Once the Service selects them, both join and become Ready, and rank 0 sees the overlay full.
func TestReadyMeansJoined(t *testing.T) {
	requireImages(t)
	const instance = "persistent" // testdata/interactive.yaml: size 2, interactive
	ns := namespace(t, "ready")
	// The keygen Job needs the Service (it owns the certificate), so the Service is applied with a
	// selector that matches no pod: it exists, but gives the brokers no DNS names.
	const member = `minicluster-fn.dev/subdomain-member: "true"`
	var service document
	for _, d := range splitDocuments(renderKustomize(t, ns, fnDir(t, "interactive"))) {
		if d.kind == "Service" {
			service = d
			if !strings.Contains(d.text, member) {
				t.Fatalf("the Service's selector has no %s:\n%s", member, d.text)
			}
			apply(t, []byte(strings.Replace(d.text, member, `minicluster-fn.dev/subdomain-member: "none"`, 1)))
			continue
		}
		apply(t, []byte(d.text))
	}
	if service.text == "" {
		t.Fatal("the rendered MiniCluster has no Service")
	}
	certificate(t, ns, instance)
	running := brokersRunning(t, ns, instance, 2, runningLimit)
	// Several probe periods (3 s) with both brokers up but not joined.
	const notJoined = 20 * time.Second
	time.Sleep(notJoined)
	for _, p := range pods(t, ns, selector(instance, "broker")) {
		if p.ready() {
			t.Errorf("pod %s is Ready %s after its broker started, while the Service selects no pod (its broker cannot join)", p.Metadata.Name, notJoined)
		}
	}
	var reasons []string
	for _, e := range events(t, ns) {
		if e.Reason == "Unhealthy" && strings.Contains(e.Message, "Readiness probe failed") {
			reasons = append(reasons, e.InvolvedObject.Name+": "+e.Message)
		}
	}
	if len(reasons) == 0 {
		t.Errorf("no Readiness probe failed event names why the %d running brokers are not Ready", len(running))
	}
	t.Logf("not Ready while not joined; the events say:\n%s", strings.Join(reasons, "\n"))

	start := time.Now()
	apply(t, []byte(service.text))
	brokersReady(t, ns, instance, 2, rejoinLimit)
	t.Logf("both brokers Ready %.1fs after the Service selected them", time.Since(start).Seconds())
	out, err := fluxOnRank0(t, ns, instance, "timeout 20 flux overlay status")
	if err != nil {
		t.Fatalf("flux overlay status on rank 0: %v", err)
	}
	if n := strings.Count(out, ": full\n"); n != 2 {
		t.Errorf("flux overlay status on rank 0 shows %d of 2 ranks full once both pods are Ready:\n%s", n, out)
	}
}
