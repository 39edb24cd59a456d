// Package v1alpha2 holds the Flux Framework MiniCluster API (flux-framework.org/v1alpha2) exactly as
// the operator's CRD defines it, with the operator's defaults and validation plus stricter checks of
// our own. It is pure: no I/O, no knowledge of Kubernetes objects it turns into.
package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	Group      = "flux-framework.org"
	Version    = "v1alpha2"
	Kind       = "MiniCluster"
	APIVersion = Group + "/" + Version
)

// MiniCluster is the operator's resource. Fields use omitzero so that a defaulted object marshals
// compactly and deterministically (it feeds the Job name hash).
type MiniCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitzero"`
	Spec              MiniClusterSpec `json:"spec,omitzero"`
	// Status is accepted because the CRD has it (an exported object may carry it) and then ignored.
	Status MiniClusterStatus `json:"status,omitzero"`
}

type MiniClusterSpec struct {
	Containers            []MiniClusterContainer `json:"containers,omitempty"`
	Services              []MiniClusterContainer `json:"services,omitempty"`
	Network               Network                `json:"network,omitzero"`
	JobLabels             map[string]string      `json:"jobLabels,omitempty"`
	Interactive           bool                   `json:"interactive,omitempty"`
	Flux                  FluxSpec               `json:"flux,omitzero"`
	Logging               LoggingSpec            `json:"logging,omitzero"`
	Archive               MiniClusterArchive     `json:"archive,omitzero"`
	ShareProcessNamespace bool                   `json:"shareProcessNamespace,omitempty"`
	Cleanup               bool                   `json:"cleanup,omitempty"`
	Size                  int32                  `json:"size,omitempty"`
	MaxSize               int32                  `json:"maxSize,omitempty"`
	BackoffLimit          int32                  `json:"backoffLimit,omitempty"`
	MinSize               int32                  `json:"minSize,omitempty"`
	// Tasks is a pointer because 0 is meaningful (only -N <size> is passed) and differs from unset (1).
	Tasks           *int32  `json:"tasks,omitempty"`
	DeadlineSeconds int64   `json:"deadlineSeconds,omitempty"`
	Pod             PodSpec `json:"pod,omitzero"`
}

type Network struct {
	HeadlessName    string `json:"headlessName,omitempty"`
	DisableAffinity bool   `json:"disableAffinity,omitempty"`
}

type LoggingSpec struct {
	Quiet  bool `json:"quiet,omitempty"`
	Strict bool `json:"strict,omitempty"`
	Debug  bool `json:"debug,omitempty"`
	Zeromq bool `json:"zeromq,omitempty"`
	Timed  bool `json:"timed,omitempty"`
}

type MiniClusterArchive struct {
	Path string `json:"path,omitempty"`
}

type FluxSpec struct {
	Container       FluxContainer `json:"container,omitzero"`
	Arch            string        `json:"arch,omitempty"`
	SubmitCommand   string        `json:"submitCommand,omitempty"`
	Wrap            string        `json:"wrap,omitempty"`
	ConnectTimeout  string        `json:"connectTimeout,omitempty"`
	OptionFlags     string        `json:"optionFlags,omitempty"`
	MinimalService  bool          `json:"minimalService,omitempty"`
	DisableSocket   bool          `json:"disableSocket,omitempty"`
	Topology        string        `json:"topology,omitempty"`
	NoWaitSocket    bool          `json:"noWaitSocket,omitempty"`
	CompleteWorkers bool          `json:"completeWorkers,omitempty"`
	// LogLevel is a pointer because 0 is a valid level and differs from unset (6).
	LogLevel     *int32            `json:"logLevel,omitempty"`
	CurveCert    string            `json:"curveCert,omitempty"`
	Scheduler    FluxScheduler     `json:"scheduler,omitzero"`
	MungeSecret  string            `json:"mungeSecret,omitempty"`
	Bursting     Bursting          `json:"bursting,omitzero"`
	BrokerConfig string            `json:"brokerConfig,omitempty"`
	Environment  map[string]string `json:"environment,omitempty"`
}

type FluxContainer struct {
	Disable         bool                        `json:"disable,omitempty"`
	Name            string                      `json:"name,omitempty"`
	WorkingDir      string                      `json:"workingDir,omitempty"`
	PythonPath      string                      `json:"pythonPath,omitempty"`
	Resources       corev1.ResourceRequirements `json:"resources,omitzero"`
	ImagePullSecret string                      `json:"imagePullSecret,omitempty"`
	Image           string                      `json:"image,omitempty"`
	PullAlways      bool                        `json:"pullAlways,omitempty"`
	SecurityContext corev1.SecurityContext      `json:"securityContext,omitzero"`
	MountPath       string                      `json:"mountPath,omitempty"`
}

type FluxScheduler struct {
	Simple      bool   `json:"simple,omitempty"`
	QueuePolicy string `json:"queuePolicy,omitempty"`
}

type Bursting struct {
	LeadBroker *FluxBroker      `json:"leadBroker,omitempty"`
	Hostlist   string           `json:"hostlist,omitempty"`
	Clusters   []BurstedCluster `json:"clusters,omitempty"`
}

type FluxBroker struct {
	Address string `json:"address,omitempty"`
	Name    string `json:"name,omitempty"`
	Size    int32  `json:"size,omitempty"`
	Port    int32  `json:"port,omitempty"`
}

type BurstedCluster struct {
	Name string `json:"name,omitempty"`
	Size int32  `json:"size,omitempty"`
}

type PodSpec struct {
	Annotations                  map[string]string         `json:"annotations,omitempty"`
	Labels                       map[string]string         `json:"labels,omitempty"`
	RestartPolicy                string                    `json:"restartPolicy,omitempty"`
	ServiceAccountName           string                    `json:"serviceAccountName,omitempty"`
	RuntimeClassName             string                    `json:"runtimeClassName,omitempty"`
	AutomountServiceAccountToken bool                      `json:"automountServiceAccountToken,omitempty"`
	SchedulerName                string                    `json:"schedulerName,omitempty"`
	NodeSelector                 map[string]string         `json:"nodeSelector,omitempty"`
	NodeAffinity                 map[string][]string       `json:"nodeAffinity,omitempty"`
	Tolerations                  []Toleration              `json:"tolerations,omitempty"`
	DNSPolicy                    string                    `json:"dnsPolicy,omitempty"`
	HostIPC                      bool                      `json:"hostIPC,omitempty"`
	HostPID                      bool                      `json:"hostPID,omitempty"`
	Resources                    corev1.ResourceList       `json:"resources,omitempty"`
	SecurityContext              corev1.PodSecurityContext `json:"securityContext,omitzero"`
}

type Toleration struct {
	Key      string `json:"key,omitempty"`
	Effect   string `json:"effect,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
}

type MiniClusterContainer struct {
	Image            string                      `json:"image,omitempty"`
	Name             string                      `json:"name,omitempty"`
	WorkingDir       string                      `json:"workingDir,omitempty"`
	Command          string                      `json:"command,omitempty"`
	ImagePullSecret  string                      `json:"imagePullSecret,omitempty"`
	ImagePullPolicy  string                      `json:"imagePullPolicy,omitempty"`
	PullAlways       bool                        `json:"pullAlways,omitempty"`
	Ports            []int32                     `json:"ports,omitempty"`
	Environment      map[string]string           `json:"environment,omitempty"`
	Secrets          map[string]Secret           `json:"secrets,omitempty"`
	Launcher         bool                        `json:"launcher,omitempty"`
	Batch            bool                        `json:"batch,omitempty"`
	BatchRaw         bool                        `json:"batchRaw,omitempty"`
	Logs             string                      `json:"logs,omitempty"`
	RunFlux          bool                        `json:"runFlux,omitempty"`
	NoWrapEntrypoint bool                        `json:"noWrapEntrypoint,omitempty"`
	Volumes          map[string]ContainerVolume  `json:"volumes,omitempty"`
	LifeCycle        LifeCycle                   `json:"lifeCycle,omitzero"`
	Resources        corev1.ResourceRequirements `json:"resources,omitzero"`
	Commands         Commands                    `json:"commands,omitzero"`
	SecurityContext  corev1.SecurityContext      `json:"securityContext,omitzero"`
}

type Secret struct {
	Name string `json:"name,omitempty"`
	Key  string `json:"key,omitempty"`
}

type LifeCycle struct {
	PostStartExec string `json:"postStartExec,omitempty"`
	PreStopExec   string `json:"preStopExec,omitempty"`
}

type Commands struct {
	Prefix     string `json:"prefix,omitempty"`
	Script     string `json:"script,omitempty"`
	Init       string `json:"init,omitempty"`
	Pre        string `json:"pre,omitempty"`
	Post       string `json:"post,omitempty"`
	WorkerPre  string `json:"workerPre,omitempty"`
	BrokerPre  string `json:"brokerPre,omitempty"`
	ServicePre string `json:"servicePre,omitempty"`
}

type ContainerVolume struct {
	Path                string            `json:"path,omitempty"`
	HostPath            string            `json:"hostPath,omitempty"`
	ConfigMapName       string            `json:"configMapName,omitempty"`
	Items               map[string]string `json:"items,omitempty"`
	ClaimName           string            `json:"claimName,omitempty"`
	SecretName          string            `json:"secretName,omitempty"`
	ReadOnly            bool              `json:"readOnly,omitempty"`
	EmptyDir            bool              `json:"emptyDir,omitempty"`
	EmptyDirMedium      string            `json:"emptyDirMedium,omitempty"`
	EmptyDirSizeLimit   string            `json:"emptyDirSizeLimit,omitempty"`
	CSIDriver           string            `json:"csiDriver,omitempty"`
	CSIDriverAttributes map[string]string `json:"csiDriverAttributes,omitempty"`
}

type MiniClusterStatus struct {
	Size        int32              `json:"size,omitempty"`
	Selector    string             `json:"selector,omitempty"`
	Jobid       string             `json:"jobid,omitempty"`
	MaximumSize int32              `json:"maximumSize,omitempty"`
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
}
