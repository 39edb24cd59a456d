package generators

import (
	"fmt"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/naming"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// Every object name, label and ConfigMap key of the generated manifests comes from this file
// (object names with length rules are built with api/naming); every path inside the pods from
// layout.go.

const (
	// managedBy is the value of app.kubernetes.io/managed-by on everything we generate.
	managedBy = "minicluster-fn"

	// The recommended labels, for people and their tools. No reader of ours selects by them: a
	// GitOps engine may overwrite them (Argo CD's label tracking writes app.kubernetes.io/instance);
	// readers use api/contract's labels, which carry the same facts.
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// appName is the value of app.kubernetes.io/name on everything we generate.
	appName = "minicluster"

	// subdomainMemberLabel marks pods that register in the headless Service's DNS (broker pods and
	// the services pod), so the keygen pod is not selected.
	subdomainMemberLabel = "minicluster-fn.dev/subdomain-member"

	// jobCompletionIndexLabel is set by the Job controller on Indexed Job pods (Kubernetes >= 1.28);
	// the minimal Service selects rank 0 with it instead of the operator's patched job-index label.
	jobCompletionIndexLabel = "batch.kubernetes.io/job-completion-index"

	// Argo CD sync waves: the keygen pre-step first, the broker Job last.
	argoSyncWave       = "argocd.argoproj.io/sync-wave"
	argoSyncOptions    = "argocd.argoproj.io/sync-options"
	fluxcdForce        = "kustomize.toolkit.fluxcd.io/force"
	waveKeygen         = "-1"
	waveConfig         = "0"
	waveBrokers        = "1"
	argoReplaceJob     = "Force=true,Replace=true"
	fluxcdForceEnabled = "enabled"
	// Flux CD's postBuild substitution would replace the scripts' ${...} variables; it is off
	// for the entrypoint ConfigMap and the keygen Job whatever the Kustomization says.
	fluxcdSubstitute         = "kustomize.toolkit.fluxcd.io/substitute"
	fluxcdSubstituteDisabled = "disabled"
	placeholderHash          = "00000000"
)

// The keys of the entrypoint ConfigMap (its files in the pods, under EntrypointMountPath) and of
// the certificate, and the volumes' names.
const (
	CurveCertKey     = curve.FileName
	InitScriptKey    = "flux-init.sh"
	BrokerConfigKey  = "broker.toml"
	ReadyScriptKey   = "broker-ready.sh"
	volumeHome       = v1alpha2.VolumeHome
	volumeEntrypoint = v1alpha2.VolumeEntrypoint
	volumeCurve      = v1alpha2.VolumeCurve
	volumeViewImage  = v1alpha2.VolumeViewImage
	volumeKeygen     = "keygen" // the keygen pod's emptyDir, its only volume
)

// KeygenFieldManager names the keygen Job (either image) in the managedFields of the certificate
// object it creates.
const KeygenFieldManager = "minicluster-fn-keygen"

// WaitScriptKey is the entrypoint ConfigMap key of the broker script of containers[i].
func WaitScriptKey(i int) string { return fmt.Sprintf("wait-%d.sh", i) }

// StartScriptKey is the entrypoint ConfigMap key of the wrapper script of sidecar containers[i].
func StartScriptKey(i int) string { return fmt.Sprintf("start-%d.sh", i) }

// names are the object names of one MiniCluster's manifest set.
type names struct {
	// Job is the broker Job; pod hostnames are <Job>-<index>.
	Job                 string
	Service             string
	EntrypointConfigMap string
	// Curve is the certificate Secret or ConfigMap. It has the name of the headless Service that
	// owns it, so the reference to the Service that kustomize is taught to rewrite
	// (examples/overlay/kustomizeconfig.yaml) also renames the certificate: two overlays with
	// different name prefixes get a key each.
	Curve  string
	Keygen string
	// KeygenAccount names the keygen ServiceAccount, Role and RoleBinding (mutable objects, so
	// their names carry no hash).
	KeygenAccount    string
	ServicesPod      string
	ServicesHostname string
	// DisruptionBudget names the PodDisruptionBudget of the eviction option: the MiniCluster's
	// name (a mutable object, no hash).
	DisruptionBudget string
}

func newNames(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, jobHash, keygenHash, servicesHash string) names {
	job := naming.BrokerJob(mc.Name, jobHash, opts.JobNaming != v1alpha2.JobNamingStable)
	return names{
		Job:                 job,
		Service:             mc.Spec.Network.HeadlessName,
		EntrypointConfigMap: job + "-entrypoint",
		Curve:               mc.Spec.Network.HeadlessName,
		Keygen:              naming.KeygenJob(mc.Name, keygenHash),
		KeygenAccount:       naming.KeygenAccount(mc.Name),
		ServicesPod:         naming.ServicesPod(mc.Name, servicesHash),
		ServicesHostname:    naming.ServicesHostname(mc.Name),
		DisruptionBudget:    mc.Name,
	}
}

// NamedBy is the MiniCluster field an object's name comes from, for a message about the name.
func NamedBy(obj Object) string {
	switch obj.GetLabels()[contract.LabelComponent] {
	case contract.ComponentHeadless, contract.ComponentCurve:
		return "spec.network.headlessName"
	}
	return "metadata.name"
}

// labels are the labels every generated object carries: the contract's, and the recommended ones
// with the same facts.
func labels(mc *v1alpha2.MiniCluster, component string) map[string]string {
	return map[string]string{
		contract.LabelMiniCluster: mc.Name,
		contract.LabelComponent:   component,
		labelName:                 appName,
		labelInstance:             mc.Name,
		labelComponent:            component,
		LabelManagedBy:            managedBy,
	}
}

// podSelector selects the pods that register in the headless Service's DNS: broker pods and the
// services pod. It uses stable labels, not job-name, so it survives hash-suffixed Job names.
func podSelector(mc *v1alpha2.MiniCluster) map[string]string {
	return map[string]string{contract.LabelMiniCluster: mc.Name, subdomainMemberLabel: "true"}
}

// brokerSelector selects the broker pods of one MiniCluster.
func brokerSelector(mc *v1alpha2.MiniCluster) map[string]string {
	return map[string]string{contract.LabelMiniCluster: mc.Name, contract.LabelComponent: contract.ComponentBroker}
}
