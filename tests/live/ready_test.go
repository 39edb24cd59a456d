package live

import (
	"strings"
	"testing"
	"time"
)

// TestReadyMeansJoined shows that a broker pod's Ready condition means "this broker has joined the
// instance", not "its container started": a persistent size-2 MiniCluster is applied with a headless
// Service that selects no pod, so rank 1 cannot find rank 0 and the instance cannot start (its quorum is both
// ranks). Both brokers run, neither may become Ready, and the startupProbe's reason is in the
// events.
// Once the Service selects them, both join and become Ready, and rank 0 reaches both
// with flux exec at once.
func TestReadyMeansJoined(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
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
	// Two of the probe's checks (each waits 10 s) with both brokers up but not joined.
	const notJoined = 20 * time.Second
	time.Sleep(notJoined)
	for _, p := range pods(t, ns, selector(instance, "broker")) {
		if p.ready() {
			t.Errorf("pod %s is Ready %s after its broker started, while the Service selects no pod (its broker cannot join)", p.Metadata.Name, notJoined)
		}
	}
	var reasons []string
	for _, e := range events(t, ns) {
		if e.Reason == "Unhealthy" && strings.Contains(e.Message, "Startup probe failed") {
			reasons = append(reasons, e.InvolvedObject.Name+": "+e.Message)
		}
	}
	if len(reasons) == 0 {
		t.Errorf("no Startup probe failed event names why the %d running brokers are not Ready", len(running))
	}
	t.Logf("not Ready while not joined; the events say:\n%s", strings.Join(reasons, "\n"))

	start := time.Now()
	apply(t, []byte(service.text))
	brokersReady(t, ns, instance, 2, rejoinLimit)
	t.Logf("both brokers Ready %.1fs after the Service selected them", time.Since(start).Seconds())
	// Ready means joined: rank 0 reaches both at once (ranks up to maxSize 4 are offline, so
	// flux overlay status says "partial" for rank 0, seen on the cluster).
	ranksReachable(t, ns, brokerJob(t, ns, instance).Metadata.Name, 2, 10*time.Second)
}
