package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/cluster/status"
)

// The conditions wait waits for.
const (
	// forJoined: every broker joined (Ready or Running); a MiniCluster that Succeeded had joined.
	forJoined = "joined"
	// forComplete: the broker Job completed (Succeeded).
	forComplete = "complete"
)

func newWaitCmd() *cobra.Command {
	var conn status.Connection
	var condition string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait NAME --for=joined|complete",
		Short: "Wait until a MiniCluster's brokers have joined, or its command has completed",
		Long: `wait reads the MiniCluster from the cluster, as status does, until the condition holds, and
exits 0. --for=joined holds once every broker has joined (phase Ready or Running, or Succeeded);
--for=complete once the broker Job has completed (Succeeded). It exits non-zero, with the phase and
the reason, when the time is up, when the MiniCluster Failed, and for complete when the MiniCluster
runs until deleted (it never completes).`,
		Example: `  minicluster-fn wait flux-sample --for=joined --timeout=5m
  minicluster-fn wait -n hpc flux-sample --for=complete
  kubectl minicluster wait flux-sample --for=complete`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if condition != forJoined && condition != forComplete {
				return usageErrorf(cmd, "--for %q: want joined or complete", condition)
			}
			src, namespace, err := connect(conn)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			mc, err := waitFor(ctx, src, args[0], condition)
			if err != nil {
				return waitError(err, args[0], namespace, condition, timeout, mc)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "MiniCluster %s %s (%s, %s brokers)\n", mc.Name, condition, mc.Phase, mc.BrokersColumn())
			return nil
		},
	}
	addConnectionFlags(cmd, &conn, false)
	cmd.Flags().StringVar(&condition, "for", "", "joined or complete")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait")
	return cmd
}

// errNever: the condition cannot hold any more.
var errNever = errors.New("it cannot be met")

// waitFor reads the MiniCluster every pollInterval until the condition holds, cannot hold, or ctx
// ends. It returns the last row read (nil before any).
func waitFor(ctx context.Context, src clusterSource, name, condition string) (*status.MiniCluster, error) {
	var last *status.MiniCluster
	for {
		rows, err := readStatus(ctx, src, []string{name})
		switch {
		case err != nil && ctx.Err() != nil:
			return last, ctx.Err()
		case err != nil:
			return last, err
		case len(rows) > 0:
			last = &rows[0]
			switch {
			case last.Phase == status.PhaseFailed:
				return last, errNever
			case condition == forComplete && last.Lifetime == contract.LifetimeUntilDeleted:
				return last, errNever
			case condition == forComplete && last.Phase == status.PhaseSucceeded:
				return last, nil
			case condition == forJoined && (last.Phase.Healthy()):
				return last, nil
			}
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// waitError says why wait gave up, with the MiniCluster's phase and reason.
func waitError(err error, name, namespace, condition string, timeout time.Duration, mc *status.MiniCluster) error {
	var what string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		what = fmt.Sprintf("timed out after %s waiting for MiniCluster %s to be %s", timeout, name, condition)
	case errors.Is(err, context.Canceled):
		what = fmt.Sprintf("stopped waiting for MiniCluster %s to be %s", name, condition)
	case errors.Is(err, errNever):
		what = fmt.Sprintf("MiniCluster %s will not be %s", name, condition)
	default:
		return err
	}
	if mc == nil {
		return fmt.Errorf("%s: no object of it found in namespace %s (label %s=%s)", what, namespace, contract.LabelMiniCluster, name)
	}
	s := fmt.Sprintf("%s: phase %s, %s brokers joined", what, mc.Phase, mc.BrokersColumn())
	if mc.Phase != status.PhaseFailed && mc.Lifetime == contract.LifetimeUntilDeleted && condition == forComplete {
		s += ", and it runs until deleted"
	}
	if mc.Reason != "" {
		s += ": " + mc.Reason
	}
	return errors.New(s)
}
