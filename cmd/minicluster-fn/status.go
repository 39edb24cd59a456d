package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/cluster/status"
)

// pollInterval is how often status --watch and wait read the cluster again: well below the
// seconds a broker takes to join, and three list requests a round.
const pollInterval = 500 * time.Millisecond

// clusterSource reads MiniClusters' objects; status.Cluster outside tests.
type clusterSource interface {
	Read(ctx context.Context, names []string) (*status.Objects, error)
	Logs(ctx context.Context, namespace, pod, container string, lines int64) (string, error)
}

// connect opens the cluster the flags name; tests replace it.
var connect = func(c status.Connection) (clusterSource, string, error) {
	cluster, err := status.Connect(c)
	if err != nil {
		return nil, "", err
	}
	return cluster, cluster.Namespace, nil
}

// now is the clock AGE is measured with; tests fix it.
var now = time.Now

// addConnectionFlags adds kubectl's flags for where to read; -A only with allNamespaces (not for a
// command about one named MiniCluster).
func addConnectionFlags(cmd *cobra.Command, c *status.Connection, allNamespaces bool) {
	f := cmd.Flags()
	f.StringVar(&c.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config), as kubectl")
	f.StringVar(&c.Context, "context", "", "the kubeconfig context to use, as kubectl")
	f.StringVarP(&c.Namespace, "namespace", "n", "", "the namespace (default: the context's), as kubectl")
	if allNamespaces {
		f.BoolVarP(&c.AllNamespaces, "all-namespaces", "A", false, "MiniClusters of every namespace, as kubectl")
	}
}

func newStatusCmd() *cobra.Command {
	var conn status.Connection
	var output string
	var watch, brokers bool
	cmd := &cobra.Command{
		Use:   "status [NAME...]",
		Short: "Show each MiniCluster's phase in the cluster and, when it is not up, why",
		Long: `status reads the cluster with your kubeconfig, as kubectl does, and prints one line per
MiniCluster: its phase, how many brokers have joined, whether it runs until deleted, and its age.
A MiniCluster that is not Ready, Running or Succeeded gets a REASON: the first cause found (an
image that cannot be pulled, a pod that cannot be scheduled, a missing certificate, a failed
command, ...), naming the object.

It finds MiniClusters by the labels on the objects their manifests made (docs/generated-objects.md,
"What the objects say about themselves"), and needs no more than the namespace's view role: it
lists Jobs, Pods, ConfigMaps, Events and PersistentVolumeClaims and reads pod logs, never a Secret.

Phases: WaitingForCertificate, Starting, Ready, Running, Succeeded, Failed, Degraded, Pending
(docs/generated-objects.md, "Status").

-o wide adds the nodes the brokers run on; --brokers adds, under each MiniCluster, one line per
broker pod: its rank, node, state (Pending, NotJoined, Joined, Rejoining, NodeLost, Terminating,
StuckTerminating, Succeeded, Failed), restarts and age. -o json and -o yaml always hold both.`,
		Example: `  minicluster-fn status
  minicluster-fn status -n hpc flux-sample -o wide
  minicluster-fn status -A --watch
  minicluster-fn status flux-sample --brokers
  kubectl minicluster status -o yaml     # installed as the kubectl plugin kubectl-minicluster`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, names []string) error {
			if !slices.Contains([]string{"", "wide", "json", "yaml"}, output) {
				return usageErrorf(cmd, "--output %q: want wide, json or yaml", output)
			}
			src, namespace, err := connect(conn)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			p := &statusPrinter{out: cmd.OutOrStdout(), output: output, allNamespaces: namespace == "", brokers: brokers}
			rows, err := readStatus(ctx, src, names)
			if err != nil {
				return err
			}
			if len(rows) == 0 && !watch {
				where := "in namespace " + namespace
				if namespace == "" {
					where = "in any namespace"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "No MiniClusters found %s.\n", where)
				return nil
			}
			if err := p.print(rows); err != nil || !watch {
				return err
			}
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(pollInterval):
				}
				if rows, err = readStatus(ctx, src, names); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				if err := p.print(rows); err != nil {
					return err
				}
			}
		},
	}
	addConnectionFlags(cmd, &conn, true)
	cmd.Flags().StringVarP(&output, "output", "o", "", "wide, json or yaml")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "after the list, print each MiniCluster again when it changes")
	cmd.Flags().BoolVar(&brokers, "brokers", false, "under each MiniCluster, a line per broker pod: rank, pod, node, state, restarts, age")
	return cmd
}

func readStatus(ctx context.Context, src clusterSource, names []string) ([]status.MiniCluster, error) {
	objs, err := src.Read(ctx, names)
	if err != nil {
		return nil, err
	}
	return status.Summarize(ctx, objs, src.Logs), nil
}

// statusPrinter prints rows; under --watch, only those that changed since they were last printed.
type statusPrinter struct {
	out           io.Writer
	output        string
	allNamespaces bool
	// brokers: a table of each MiniCluster's broker pods under the list (--brokers).
	brokers bool
	// printed is what was printed of each MiniCluster, and whether the header was.
	printed map[string]string
	header  bool
}

// statusList is the document of -o json and -o yaml.
type statusList struct {
	Kind  string               `json:"kind"`
	Items []status.MiniCluster `json:"items"`
}

func (p *statusPrinter) print(rows []status.MiniCluster) error {
	if p.printed == nil {
		p.printed = map[string]string{}
	} else {
		// --watch: only what changed; AGE alone is no change.
		rows = slices.DeleteFunc(slices.Clone(rows), func(mc status.MiniCluster) bool {
			return p.printed[mc.Namespace+"/"+mc.Name] == fingerprint(mc)
		})
	}
	for _, mc := range rows {
		p.printed[mc.Namespace+"/"+mc.Name] = fingerprint(mc)
	}
	switch p.output {
	case "json":
		b, err := json.MarshalIndent(statusList{Kind: "MiniClusterStatusList", Items: nonNil(rows)}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(statusList{Kind: "MiniClusterStatusList", Items: nonNil(rows)})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(p.out, "---\n%s", b)
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(p.out, 0, 8, 3, ' ', 0)
	wide := p.output == "wide"
	if !p.header {
		p.header = true
		var cols []string
		if p.allNamespaces {
			cols = append(cols, "NAMESPACE")
		}
		cols = append(cols, "NAME", "PHASE", "BROKERS", "LIFETIME", "AGE")
		if wide {
			cols = append(cols, "JOB", "CERTIFICATE", "MANAGED-BY", "VIEW", "NODES")
		}
		fmt.Fprintln(tw, strings.Join(append(cols, "REASON"), "\t"))
	}
	for _, mc := range rows {
		var cols []string
		if p.allNamespaces {
			cols = append(cols, mc.Namespace)
		}
		cols = append(cols, mc.Name, string(mc.Phase), mc.BrokersColumn(), orNone(mc.Lifetime), age(mc.Created))
		if wide {
			cols = append(cols, orNone(mc.BrokerJob), string(mc.Certificate), orNone(mc.ManagedBy), orNone(mc.ViewSource), nodesColumn(mc.Nodes))
		}
		fmt.Fprintln(tw, strings.Join(append(cols, mc.Reason), "\t"))
	}
	if err := tw.Flush(); err != nil || !p.brokers {
		return err
	}
	for _, mc := range rows {
		if err := printBrokers(p.out, mc); err != nil {
			return err
		}
	}
	return nil
}

// printBrokers is --brokers' table of one MiniCluster's broker pods.
func printBrokers(out io.Writer, mc status.MiniCluster) error {
	fmt.Fprintf(out, "\nBrokers of %s/%s (Job %s):\n", mc.Namespace, mc.Name, orNone(mc.BrokerJob))
	if len(mc.Brokers) == 0 {
		_, err := fmt.Fprintln(out, "  no broker pods")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "  RANK\tPOD\tNODE\tSTATE\tRESTARTS\tAGE")
	for _, b := range mc.Brokers {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%d\t%s\n", b.Rank, b.Pod, orNone(b.Node), b.State, b.Restarts, age(b.Created))
	}
	return tw.Flush()
}

// maxNodesShown is how many node names NODES lists before it counts the rest.
const maxNodesShown = 3

// nodesColumn is NODES: the brokers' nodes, the first few by name.
func nodesColumn(nodes []string) string {
	if len(nodes) <= maxNodesShown {
		return orNone(strings.Join(nodes, ","))
	}
	return fmt.Sprintf("%s +%d", strings.Join(nodes[:maxNodesShown], ","), len(nodes)-maxNodesShown)
}

// fingerprint is a row without its age.
func fingerprint(mc status.MiniCluster) string {
	mc.Created = time.Time{}
	b, _ := json.Marshal(mc)
	return string(b)
}

func nonNil(rows []status.MiniCluster) []status.MiniCluster {
	if rows == nil {
		return []status.MiniCluster{}
	}
	return rows
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// age is AGE as kubectl prints it.
func age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now().Sub(t))
}
