package main

import (
	"strings"
	"testing"
)

// TestWait: wait's exit and message for each kind of MiniCluster of the fixture. The fixture does
// not change, so a condition that does not hold yet times out.
func TestWait(t *testing.T) {
	f := useFixtureCluster(t)
	for _, tc := range []struct {
		args []string
		// out is stdout on success; errs are in the error message otherwise.
		out  string
		errs []string
	}{
		{args: []string{"persistent", "--for=joined"}, out: "MiniCluster persistent joined (Ready, 2/2 (max 4) brokers)\n"},
		{args: []string{"busy", "--for", "joined"}, out: "MiniCluster busy joined (Running, 2/2 brokers)\n"},
		{args: []string{"hello", "--for=complete"}, out: "MiniCluster hello complete (Succeeded, 0/2 brokers)\n"},
		{args: []string{"hello", "--for=joined"}, out: "MiniCluster hello joined (Succeeded, 0/2 brokers)\n"},
		{args: []string{"failing", "--for=complete"}, errs: []string{
			"MiniCluster failing will not be complete: phase Failed, 0/2 brokers joined: pod failing-d5328246-0-abcde container failing exited with status 3"}},
		{args: []string{"persistent", "--for=complete"}, errs: []string{
			"MiniCluster persistent will not be complete: phase Ready, 2/2 (max 4) brokers joined, and it runs until deleted"}},
		{args: []string{"pullfail", "--for=joined", "--timeout=1200ms"}, errs: []string{
			"timed out after 1.2s waiting for MiniCluster pullfail to be joined: phase WaitingForCertificate, 0/2 brokers joined: the keygen image localhost/minicluster-fn-live/does-not-exist:1 cannot be pulled"}},
		{args: []string{"absent", "--for=joined", "--timeout=1100ms"}, errs: []string{
			"timed out after 1.1s waiting for MiniCluster absent to be joined: no object of it found in namespace hpc (label minicluster-fn.dev/minicluster=absent)"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f.reads = 0
			out, errOut, err := runCmd(t, "", append([]string{"wait"}, tc.args...)...)
			if tc.errs == nil {
				if err != nil || out != tc.out {
					t.Errorf("stdout %q, error %v (%s); want %q", out, err, errOut, tc.out)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; stdout %q", out)
			}
			for _, e := range tc.errs {
				if !strings.Contains(errOut, "error: "+e) {
					t.Errorf("stderr %q lacks %q", errOut, e)
				}
			}
			if strings.HasPrefix(tc.errs[0], "timed out") && f.reads < 2 {
				t.Errorf("read the cluster %d times before timing out, want it read again every %s", f.reads, pollInterval)
			}
		})
	}
	_, errOut, err := runCmd(t, "", "wait", "persistent", "--for=ready")
	if err == nil || !strings.Contains(errOut, `--for "ready": want joined or complete`) {
		t.Errorf("wait --for=ready: %v, %q", err, errOut)
	}
}
