package live

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// kubectlTimeout bounds every kubectl call: nothing may hang silently.
const kubectlTimeout = 90 * time.Second

// kube runs kubectl against the live cluster and returns its stdout; stdin may be nil.
func kube(stdin []byte, args ...string) (string, error) {
	return kubeEnv(nil, stdin, args...)
}

// kubeEnv is kube with extra environment variables (KEY=VALUE).
func kubeEnv(env []string, stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.kubectl, append([]string{"--kubeconfig", suite.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// mustKube is kube that fails the test on error.
func mustKube(t testing.TB, stdin []byte, args ...string) string {
	t.Helper()
	out, err := kube(stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// namespace creates a fresh namespace for one test and removes it when the test ends, failed or
// not. A failed test first logs what a user would look at: events, pods, their logs.
func namespace(t testing.TB, name string) string {
	t.Helper()
	ns := "live-" + name
	if _, err := kube(nil, "get", "namespace", ns); err == nil {
		// Left by an interrupted run.
		if _, err := kube(nil, "delete", "namespace", ns, "--wait", "--timeout=120s"); err != nil {
			t.Fatalf("removing the namespace %s left from an earlier run: %v", ns, err)
		}
	}
	mustKube(t, nil, "create", "namespace", ns)
	t.Cleanup(func() {
		if t.Failed() {
			logDiagnostics(t, ns)
		}
		start := time.Now()
		// --ignore-not-found: a test may have deleted it already (the live benchmarks do, with
		// deleteNamespace between runs).
		if _, err := kube(nil, "delete", "namespace", ns, "--ignore-not-found", "--wait", "--timeout=120s"); err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		t.Logf("cleanup: namespace %s deleted in %.1fs", ns, time.Since(start).Seconds())
	})
	return ns
}

// deleteNamespace deletes a namespace that namespace made and waits until it is gone (its pods
// stopped), so that what comes next runs on a quiet node.
func deleteNamespace(t testing.TB, ns string) {
	t.Helper()
	if _, err := kube(nil, "delete", "namespace", ns, "--wait", "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
}

// logDiagnostics logs the namespace's objects, events and every container's log.
func logDiagnostics(t testing.TB, ns string) {
	t.Helper()
	for _, args := range [][]string{
		{"get", "all,configmaps,secrets", "-o", "wide"},
		{"get", "events", "--sort-by=.lastTimestamp"},
	} {
		out, err := kube(nil, append([]string{"-n", ns}, args...)...)
		t.Logf("diagnostics: kubectl -n %s %s\n%s%v", ns, strings.Join(args, " "), out, errOrEmpty(err))
	}
	var pods podList
	if err := listObjects(&pods, ns, "pods", ""); err != nil {
		t.Logf("diagnostics: %v", err)
		return
	}
	for _, p := range pods.Items {
		out, err := kube(nil, "-n", ns, "logs", p.Metadata.Name, "--all-containers", "--prefix", "--tail=60")
		t.Logf("diagnostics: logs of pod %s (phase %s)\n%s%v", p.Metadata.Name, p.Status.Phase, out, errOrEmpty(err))
	}
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The tests read objects straight from the API server, not through kubectl: they poll every
// second (the milestones every 0.5 s), and each kubectl run costs about 0.2 s of CPU on this VM
// (measured with process accounting: 88 runs, 17 s, in one hello-world test), a quarter of all
// the CPU a hello-world run took on a 2-core machine the brokers need too. kubectl stays for
// apply, exec, logs and delete.
var apiClient = sync.OnceValues(newAPIClient)

// apiServer is the cluster's API server: its URL (the kubeconfig's server) and a client that
// authenticates as the kubeconfig's user, with the certificates tests/cluster/up.sh made.
type apiServer struct {
	url    string
	client *http.Client
}

func newAPIClient() (apiServer, error) {
	kubeconfig, err := os.ReadFile(suite.kubeconfig)
	if err != nil {
		return apiServer{}, err
	}
	// up.sh writes this kubeconfig (make_kubeconfig), with one cluster and its server on one line.
	var server string
	for _, line := range strings.Split(string(kubeconfig), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "server: "); ok {
			server = v
		}
	}
	if server == "" {
		return apiServer{}, fmt.Errorf("%s: no server", suite.kubeconfig)
	}
	pki := filepath.Join(suite.state, "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return apiServer{}, err
	}
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return apiServer{}, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return apiServer{}, fmt.Errorf("%s: no certificate", filepath.Join(pki, "ca.crt"))
	}
	return apiServer{url: server, client: &http.Client{
		Timeout:   kubectlTimeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots}},
	}}, nil
}

// apiGroups gives the API path of each resource the tests read.
var apiGroups = map[string]string{"pods": "/api/v1", "events": "/api/v1", "secrets": "/api/v1", "configmaps": "/api/v1",
	"services": "/api/v1", "serviceaccounts": "/api/v1", "jobs": "/apis/batch/v1",
	"roles": "/apis/rbac.authorization.k8s.io/v1", "rolebindings": "/apis/rbac.authorization.k8s.io/v1",
	"kustomizations": "/apis/kustomize.toolkit.fluxcd.io/v1", "gitrepositories": "/apis/source.toolkit.fluxcd.io/v1",
	"applications": "/apis/argoproj.io/v1alpha1", "miniclusters": "/apis/flux-framework.org/v1alpha2",
	"workloads": "/apis/kueue.x-k8s.io/v1beta2"}

// getObject reads one namespaced object (resource is plural: "secrets", "jobs") into v.
func getObject(v any, ns, resource, name string) error {
	return apiGet(v, ns, resource, "/"+url.PathEscape(name))
}

// listObjects lists a namespace's objects of a resource into v, those matching the label selector
// when it is not empty.
func listObjects(v any, ns, resource, selector string) error {
	query := ""
	if selector != "" {
		query = "?labelSelector=" + url.QueryEscape(selector)
	}
	return apiGet(v, ns, resource, query)
}

// errNotFound: the object does not exist (HTTP 404).
var errNotFound = errors.New("not found")

func apiGet(v any, ns, resource, suffix string) error {
	api, err := apiClient()
	if err != nil {
		return fmt.Errorf("API client: %v", err)
	}
	group, ok := apiGroups[resource]
	if !ok {
		return fmt.Errorf("no API path for resource %q", resource)
	}
	path := group + "/namespaces/" + url.PathEscape(ns) + "/" + resource + suffix
	resp, err := api.client.Get(api.url + path)
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		// The API server's Status says why (e.g. secrets "x" not found).
		var status struct {
			Message string `json:"message"`
		}
		why := resp.Status
		if json.Unmarshal(body, &status) == nil && status.Message != "" {
			why += ": " + status.Message
		}
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("GET %s: %w (%s)", path, errNotFound, why)
		}
		return fmt.Errorf("GET %s: %s", path, why)
	}
	return json.Unmarshal(body, v)
}

// waitFor polls check until it reports done, for at most limit. On timeout it fails the test with
// the last state check saw: no wait is silent or unbounded. It polls every second, but a check that
// runs processes (kubectl exec into a broker, status) takes a share of the two cores that the
// cluster under test needs, the more so with many tests side by side: after a check that took d,
// the next comes 2d later at the earliest, so checking never takes more than a third of the time.
func waitFor(t testing.TB, what string, limit time.Duration, check func() (done bool, state string, err error)) time.Duration {
	t.Helper()
	return poll(t, what, limit, true, check)
}

// poll is waitFor; every second whatever the check costs unless adaptive.
func poll(t testing.TB, what string, limit time.Duration, adaptive bool, check func() (done bool, state string, err error)) time.Duration {
	t.Helper()
	start := time.Now()
	var state string
	for {
		began := time.Now()
		done, s, err := check()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		state = s
		if done {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			t.Fatalf("%s: not reached after %s; last state: %s", what, limit, state)
		}
		pause := time.Second
		if adaptive {
			pause = max(pause, 2*time.Since(began))
		}
		time.Sleep(pause)
	}
}

// The parts of Kubernetes objects the tests read.
type objectMeta struct {
	Name              string            `json:"name"`
	UID               string            `json:"uid"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
}

type containerStatus struct {
	Name         string `json:"name"`
	Ready        bool   `json:"ready"`
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running *struct {
			StartedAt time.Time `json:"startedAt"`
		} `json:"running"`
		Terminated *struct {
			ExitCode int    `json:"exitCode"`
			Reason   string `json:"reason"`
			Message  string `json:"message"`
		} `json:"terminated"`
		Waiting *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
	} `json:"state"`
}

type pod struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Hostname  string `json:"hostname"`
		Subdomain string `json:"subdomain"`
		NodeName  string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase                 string            `json:"phase"`
		PodIP                 string            `json:"podIP"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
		Conditions            []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

type podList struct {
	Items []pod `json:"items"`
}

// ended: the pod ended, or one of its containers exited.
func (p *pod) ended() bool {
	if p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
		return true
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			return true
		}
	}
	return false
}

func (p *pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// index is the pod's JOB_COMPLETION_INDEX label ("" for pods outside Indexed Jobs).
func (p *pod) index() string {
	return p.Metadata.Labels["batch.kubernetes.io/job-completion-index"]
}

type job struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Completions *int  `json:"completions"`
		Parallelism *int  `json:"parallelism"`
		Suspend     *bool `json:"suspend"`
	} `json:"spec"`
	Status struct {
		Active         int        `json:"active"`
		CompletionTime *time.Time `json:"completionTime"`
		Succeeded      int        `json:"succeeded"`
		Failed         int        `json:"failed"`
		Ready          *int       `json:"ready"`
		Conditions     []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

type jobList struct {
	Items []job `json:"items"`
}

// condition returns the status of the Job's condition type ("" when absent) and its message.
func (j *job) condition(kind string) (string, string) {
	for _, c := range j.Status.Conditions {
		if c.Type == kind {
			return c.Status, c.Reason + ": " + c.Message
		}
	}
	return "", ""
}

// secret is a Secret as the API returns it: JSON decodes the base64 of data into the bytes.
type secret struct {
	Metadata objectMeta        `json:"metadata"`
	Data     map[string][]byte `json:"data"`
}

type event struct {
	Reason         string     `json:"reason"`
	Message        string     `json:"message"`
	Type           string     `json:"type"`
	LastTimestamp  *time.Time `json:"lastTimestamp"`
	InvolvedObject struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"involvedObject"`
}

type eventList struct {
	Items []event `json:"items"`
}

// pods lists the namespace's pods with the label selector.
func pods(t testing.TB, ns, selector string) []pod {
	t.Helper()
	var l podList
	if err := listObjects(&l, ns, "pods", selector); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// events lists the namespace's events.
func events(t testing.TB, ns string) []event {
	t.Helper()
	var l eventList
	if err := listObjects(&l, ns, "events", ""); err != nil {
		t.Fatal(err)
	}
	return l.Items
}
