package status

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// BrokerState is what one broker pod is doing, as its pod shows it.
type BrokerState string

const (
	// BrokerPending: not running yet (not scheduled, its volumes or images not ready).
	BrokerPending BrokerState = "Pending"
	// BrokerNotJoined: its containers run and its broker has not joined the instance.
	BrokerNotJoined BrokerState = "NotJoined"
	// BrokerJoined: its broker joined the instance (the pod is Ready).
	BrokerJoined BrokerState = "Joined"
	// BrokerRejoining: a worker whose broker joined (its pod is Ready) before rank 0's broker
	// started again, in a new pod or a restarted container, and which the new main broker does not
	// count yet: its pod stays Ready (the startup probe passed once), but it has not joined the
	// new instance. A persistent MiniCluster's worker joins it by itself.
	BrokerRejoining BrokerState = "Rejoining"
	// BrokerNodeLost: its node stopped answering; the node lifecycle controller marked the pod not
	// ready. Whether its processes still run, nobody can tell.
	BrokerNodeLost BrokerState = "NodeLost"
	// BrokerTerminating: being deleted.
	BrokerTerminating BrokerState = "Terminating"
	// BrokerStuckTerminating: being deleted on a node that stopped answering: no kubelet finishes
	// it, so it stays until the node answers again or is declared gone (docs/generated-objects.md,
	// "When a node is lost").
	BrokerStuckTerminating BrokerState = "StuckTerminating"
	BrokerSucceeded        BrokerState = "Succeeded"
	BrokerFailed           BrokerState = "Failed"
)

// Broker is one pod of the broker Job: status --brokers prints one line for each.
type Broker struct {
	// Rank is the pod's completion index, the broker's rank.
	Rank int    `json:"rank"`
	Pod  string `json:"pod"`
	// Node is the node the pod was scheduled on, "" before.
	Node     string      `json:"node,omitempty"`
	State    BrokerState `json:"state"`
	Restarts int32       `json:"restarts"`
	Created  time.Time   `json:"created"`
}

// brokers are the broker Job's pods, those being deleted among them, by rank, newest first.
func (o observation) brokers() []Broker {
	var out []Broker
	for _, p := range slices.Concat(o.brokerPods, o.leaving) {
		b := Broker{Rank: index(p), Pod: p.Name, Node: p.Spec.NodeName, State: o.brokerState(p), Created: p.CreationTimestamp.Time}
		for _, c := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
			b.Restarts += c.RestartCount
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b Broker) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), b.Created.Compare(a.Created), cmp.Compare(a.Pod, b.Pod))
	})
	return out
}

// brokerState is brokerState, with a worker that joined before the main broker started again
// Rejoining.
func (o observation) brokerState(p *corev1.Pod) BrokerState {
	s := brokerState(p)
	if s == BrokerJoined && p.DeletionTimestamp == nil && o.joinedBeforeMain(p) {
		return BrokerRejoining
	}
	return s
}

// joinedBeforeMain tells whether a worker's pod became Ready before rank 0's broker, which is not
// Ready (it is once every worker is online), started: in a newer pod or a restarted container.
func (o observation) joinedBeforeMain(p *corev1.Pod) bool {
	if len(o.brokerPods) == 0 || index(o.brokerPods[0]) != 0 || index(p) == 0 {
		return false
	}
	main := o.brokerPods[0]
	ready := podCondition(p, corev1.PodReady)
	if podReady(main) || ready == nil || ready.LastTransitionTime.IsZero() {
		return false
	}
	started := main.CreationTimestamp.Time
	for _, c := range main.Status.ContainerStatuses {
		if c.State.Running != nil && c.State.Running.StartedAt.Time.After(started) {
			started = c.State.Running.StartedAt.Time
		}
	}
	return ready.LastTransitionTime.Time.Before(started)
}

func brokerState(p *corev1.Pod) BrokerState {
	switch {
	case p.DeletionTimestamp != nil && nodeStoppedAnswering(p):
		return BrokerStuckTerminating
	case p.DeletionTimestamp != nil:
		return BrokerTerminating
	case p.Status.Phase == corev1.PodSucceeded:
		return BrokerSucceeded
	case p.Status.Phase == corev1.PodFailed:
		return BrokerFailed
	case nodeStoppedAnswering(p):
		return BrokerNodeLost
	case podReady(p):
		return BrokerJoined
	case p.Status.Phase == corev1.PodRunning:
		return BrokerNotJoined
	}
	return BrokerPending
}

// nodeStoppedAnswering tells whether the node lifecycle controller marked a running pod not ready
// because its node stopped answering: the kubelet keeps Ready and ContainersReady equal (the broker
// pods have no readiness gates), and the controller sets only Ready to False (MarkPodsNotReady in
// Kubernetes' pkg/controller/util/node). A pod taint eviction took from such a node also has the
// condition DisruptionTarget.
func nodeStoppedAnswering(p *corev1.Pod) bool {
	if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
		return false
	}
	ready, containersReady := podCondition(p, corev1.PodReady), podCondition(p, corev1.ContainersReady)
	if ready != nil && ready.Status == corev1.ConditionFalse && containersReady != nil && containersReady.Status == corev1.ConditionTrue {
		return true
	}
	dt := podCondition(p, corev1.DisruptionTarget)
	return dt != nil && dt.Status == corev1.ConditionTrue && dt.Reason == "DeletionByTaintManager"
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// outOfServiceCommand is the one command that lets Kubernetes fail the pods of a node that is
// powered off for good or for a while: the node.kubernetes.io/out-of-service taint (Kubernetes'
// non-graceful node shutdown) makes the pod garbage collector fail and delete them at once.
func outOfServiceCommand(node string) string {
	return "kubectl taint nodes " + node + " node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
}

// nodeLost: a broker's node stopped answering. A pod stuck Terminating there holds its rank when
// the Job has a pod failure policy (it then replaces only failed pods); otherwise the Job has made
// a new pod beside it, and the reason is that pod's. A pod still running there will be evicted
// after its toleration of the node's taint.
func (r *reasoner) nodeLost() string {
	waits := r.o.broker.Spec.PodFailurePolicy != nil
	for _, p := range r.o.leaving {
		if !waits || brokerState(p) != BrokerStuckTerminating {
			continue
		}
		return fmt.Sprintf("broker pod %s (rank %d) is stuck Terminating on node %s, which stopped answering; the Job makes no new pod for rank %d "+
			"until that pod has failed, which happens when the node answers again, or at once with: %s (when the node is powered off; "+
			"remove the taint once it is back)", p.Name, index(p), p.Spec.NodeName, index(p), outOfServiceCommand(p.Spec.NodeName))
	}
	var lost []*corev1.Pod
	for _, p := range r.o.brokerPods {
		if brokerState(p) == BrokerNodeLost {
			lost = append(lost, p)
		}
	}
	if len(lost) == 0 {
		return ""
	}
	p := lost[0]
	since := ""
	if c := podCondition(p, corev1.PodReady); c != nil && !c.LastTransitionTime.IsZero() {
		since = " since " + c.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	more := ""
	if len(lost) > 1 {
		more = fmt.Sprintf(" (and %d more brokers on nodes that stopped answering)", len(lost)-1)
	}
	then := "the Job then makes a new pod"
	if waits {
		then = "the Job makes a new pod only once it has failed, which needs the node back, or: " + outOfServiceCommand(p.Spec.NodeName)
	}
	return fmt.Sprintf("node %s stopped answering%s: broker pod %s (rank %d) is there%s; Kubernetes evicts it %s, and %s",
		p.Spec.NodeName, since, p.Name, index(p), more, evictedAfter(p), then)
}

// evictedAfter says when taint eviction deletes a pod from a node that stopped answering: after its
// toleration of the node's unreachable taint, which the API server gives every pod that has none
// (300 s unless the cluster's administrator changed it).
func evictedAfter(p *corev1.Pod) string {
	for _, t := range p.Spec.Tolerations {
		if t.Key == corev1.TaintNodeUnreachable && t.Effect == corev1.TaintEffectNoExecute && (t.Operator == corev1.TolerationOpExists || t.Operator == "") {
			if t.TolerationSeconds == nil {
				return "never (it tolerates the node's unreachable taint for ever)"
			}
			return fmt.Sprintf("%d s after the node's unreachable taint (its toleration)", *t.TolerationSeconds)
		}
	}
	return "once the node is tainted unreachable"
}

// endsWhenStuckPodFails: a Job that is failing (FailureTarget) gets its Failed condition only once
// every pod has ended; one stuck Terminating on a node that stopped answering holds it, and with it
// what GitOps engines and kubectl report of the Job.
func (r *reasoner) endsWhenStuckPodFails() string {
	if JobCondition(r.o.broker, batchv1.JobFailed) != nil {
		return ""
	}
	for _, p := range r.o.leaving {
		if brokerState(p) == BrokerStuckTerminating {
			return fmt.Sprintf("; the Job is marked to fail and gets its Failed condition once broker pod %s, stuck Terminating on node %s, "+
				"which stopped answering, has failed: when the node answers again, or at once with: %s (when the node is powered off; "+
				"remove the taint once it is back)", p.Name, p.Spec.NodeName, outOfServiceCommand(p.Spec.NodeName))
		}
	}
	return ""
}

// nodes are the distinct nodes of brokers, in the order of their ranks.
func nodes(brokers []Broker) []string {
	var out []string
	for _, b := range brokers {
		if b.Node != "" && !slices.Contains(out, b.Node) {
			out = append(out, b.Node)
		}
	}
	return out
}
