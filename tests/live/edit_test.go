package live

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestEditCommand edits the command of a MiniCluster and applies again with prune, as GitOps does:
// with hash naming the new render has a new broker Job, prune deletes the old one, and the
// certificate (made by keygen, not part of the applied set) stays.
func TestEditCommand(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "edited"
	ns := namespace(t, "edit")
	dir := fnDir(t, "edit")
	// An ApplySet gives kubectl's prune an exact set: what earlier applies made and this one lacks.
	applyPruned := func(manifests []byte) {
		t.Helper()
		if _, err := kubeEnv([]string{"KUBECTL_APPLYSET=true"}, manifests,
			"apply", "--server-side", "-n", ns, "--prune", "--applyset=secret/"+instance+"-applyset", "-f", "-"); err != nil {
			t.Fatal(err)
		}
	}

	applyPruned(renderKustomize(t, ns, dir))
	cert := certificate(t, ns, instance)
	first := brokerJob(t, ns, instance)
	jobComplete(t, ns, first.Metadata.Name, completeLimit)

	setCommand(t, dir, "echo first command", "echo second command")
	applyPruned(renderKustomize(t, ns, dir))
	waitFor(t, "prune removes the old Job "+first.Metadata.Name, time.Minute, func() (bool, string, error) {
		err := getObject(&job{}, ns, "jobs", first.Metadata.Name)
		if errors.Is(err, errNotFound) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, "still present", nil
	})
	second := brokerJob(t, ns, instance)
	if second.Metadata.Name == first.Metadata.Name {
		t.Fatalf("the edited command kept the Job name %s", first.Metadata.Name)
	}
	var after secret
	if err := getObject(&after, ns, "secrets", certSecret(instance)); err != nil {
		t.Fatalf("the certificate did not survive the edit: %v", err)
	}
	if after.Metadata.UID != cert.Metadata.UID || !bytes.Equal(after.Data["curve.cert"], cert.Data["curve.cert"]) {
		t.Errorf("the certificate Secret was replaced (uid %s -> %s)", cert.Metadata.UID, after.Metadata.UID)
	}
	jobComplete(t, ns, second.Metadata.Name, completeLimit)
	log := brokerLog(t, ns, rankPod(t, ns, instance, "0"))
	if !strings.Contains(log, "second command") {
		t.Errorf("the new Job's rank 0 does not print the edited command's output:\n%s", log)
	}
	t.Logf("Job %s replaced by %s; certificate %s kept", first.Metadata.Name, second.Metadata.Name, cert.Metadata.UID)
}
