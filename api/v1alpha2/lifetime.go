package v1alpha2

// NeverCompletes says why the broker Job of m never completes on its own, or is "" when it
// completes once the command ends: the brokers run until deleted, or a container that runs no
// broker (a sidecar) keeps its pod running after the brokers exit.
func (m *MiniCluster) NeverCompletes() string {
	if reason := m.RunsUntilDeleted(); reason != "" {
		return reason
	}
	for _, c := range m.Spec.Containers {
		if !c.RunFlux {
			return "container " + c.Name + " runs no broker (a sidecar), and the Job completes only when it exits"
		}
	}
	return ""
}

// RunsUntilDeleted says why the brokers of m run until the cluster is deleted, or is "" when the
// lead broker runs a command and the brokers exit when it ends.
func (m *MiniCluster) RunsUntilDeleted() string {
	if m.Spec.Interactive {
		return "spec.interactive keeps the brokers running until the cluster is deleted"
	}
	for _, c := range m.Spec.Containers {
		if c.RunFlux && c.Command == "" && c.Commands.Script == "" {
			return "without a command the brokers run until the cluster is deleted"
		}
	}
	return ""
}
