package v1alpha2

import "strconv"

// Defaults of the operator: the CRD's `default:` markers and the ones its Validate() applies in
// memory. CRD defaults are applied as if every parent object
// existed, so `flux.logLevel` is 6 even when the file has no `flux:` block — the operator's
// structural defaulting would leave it 0 there, which nobody means.
const (
	DefaultViewImage       = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
	DefaultViewName        = "flux-view"
	DefaultViewMountPath   = "/mnt/flux"
	DefaultSize            = 1
	DefaultTasks           = 1
	DefaultDeadlineSeconds = 31500000
	DefaultConnectTimeout  = "5s"
	DefaultLogLevel        = 6
	DefaultQueuePolicy     = "fcfs"
	DefaultLeadBrokerPort  = 8050
	DefaultBackoffLimit    = 100
	DefaultRestartPolicy   = "OnFailure"
	DefaultBrokerPort      = 8050
	DefaultOutputDir       = "/tmp/fluxout"
	// DefaultBurstClusterPrefix names an unnamed bursting cluster burst-<index>, as the operator's
	// API documents (BurstedCluster.Name: "The operator will set to burst-N").
	DefaultBurstClusterPrefix = "burst-"
)

// Default fills every default in place. It is idempotent.
func (m *MiniCluster) Default() {
	s := &m.Spec
	if s.Size == 0 {
		s.Size = DefaultSize
	}
	if s.MaxSize == 0 {
		s.MaxSize = s.Size
	}
	if s.Tasks == nil {
		t := int32(DefaultTasks)
		s.Tasks = &t
	}
	if s.DeadlineSeconds == 0 {
		s.DeadlineSeconds = DefaultDeadlineSeconds
	}
	if s.BackoffLimit == 0 {
		s.BackoffLimit = DefaultBackoffLimit
	}
	if s.Network.HeadlessName == "" {
		s.Network.HeadlessName = m.Name
	}
	f := &s.Flux
	if f.ConnectTimeout == "" {
		f.ConnectTimeout = DefaultConnectTimeout
	}
	if f.LogLevel == nil {
		l := int32(DefaultLogLevel)
		f.LogLevel = &l
	}
	if f.Scheduler.QueuePolicy == "" {
		f.Scheduler.QueuePolicy = DefaultQueuePolicy
	}
	if f.Container.Name == "" {
		f.Container.Name = DefaultViewName
	}
	if f.Container.Image == "" {
		f.Container.Image = DefaultViewImage
	}
	if f.Container.MountPath == "" {
		f.Container.MountPath = DefaultViewMountPath
	}
	if lb := f.Bursting.LeadBroker; lb != nil && lb.Port == 0 {
		lb.Port = DefaultLeadBrokerPort
	}
	// The operator's loop for these defaults ranges over copies of the clusters, so they never
	// apply there; here they do.
	for i := range f.Bursting.Clusters {
		c := &f.Bursting.Clusters[i]
		if c.Name == "" {
			c.Name = DefaultBurstClusterPrefix + strconv.Itoa(i)
		}
		if c.Size == 0 {
			c.Size = s.Size
		}
	}
	if len(s.Containers) == 1 {
		s.Containers[0].RunFlux = true
	}
	if s.Pod.RestartPolicy == "" {
		s.Pod.RestartPolicy = DefaultRestartPolicy
	}
}
