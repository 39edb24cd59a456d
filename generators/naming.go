package generators

import (
	"fmt"

	"github.com/minicluster-fn/minicluster-fn/api/naming"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// Every object name, label and ConfigMap key of the generated manifests comes from this file
// (object names with length rules are built with api/naming); every path inside the pods from
// layout.go.

const (
	// managedBy marks every object this function generates; fn uses it to find earlier output.
	managedBy = "minicluster-fn"

	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// appName is the value of app.kubernetes.io/name on everything we generate.
	appName = "minicluster"

	// Values of LabelComponent. Consumers (the fluxcd command, GitOps health rules) find an
	// object's role by them: ComponentBroker is the Indexed Job of brokers, ComponentKeygen the Job
	// that creates the certificate.
	ComponentBroker     = "broker"
	componentEntrypoint = "entrypoint"
	componentHeadless   = "headless-service"
	ComponentKeygen     = "keygen"
	componentCurve      = "curve"
	componentServices   = "services"
	componentPort       = "port-service"

	// LabelLifetime on the broker Job says whether its pods end on their own: LifetimeCompletes
	// (the lead broker runs the command, and the Job completes when it ends) or
	// LifetimeUntilDeleted (the Job never completes; AnnotationLifetimeReason says why). A label,
	// so that `kubectl get jobs -l` selects by it; GitOps health checks are chosen by it.
	LabelLifetime            = "minicluster-fn.dev/lifetime"
	LifetimeCompletes        = "completes"
	LifetimeUntilDeleted     = "until-deleted"
	AnnotationLifetimeReason = "minicluster-fn.dev/lifetime-reason"

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
	}
}

// NamedBy is the MiniCluster field an object's name comes from, for a message about the name.
func NamedBy(obj Object) string {
	switch obj.GetLabels()[LabelComponent] {
	case componentHeadless, componentCurve:
		return "spec.network.headlessName"
	}
	return "metadata.name"
}

// labels are the recommended labels every generated object carries.
func labels(mc *v1alpha2.MiniCluster, component string) map[string]string {
	return map[string]string{
		LabelName:      appName,
		LabelInstance:  mc.Name,
		LabelComponent: component,
		LabelManagedBy: managedBy,
	}
}

// podSelector selects the pods that register in the headless Service's DNS: broker pods and the
// services pod. It uses stable labels, not job-name, so it survives hash-suffixed Job names.
func podSelector(mc *v1alpha2.MiniCluster) map[string]string {
	return map[string]string{LabelName: appName, LabelInstance: mc.Name, subdomainMemberLabel: "true"}
}

// IsGenerated tells whether an object's labels mark it as output of this function for the
// MiniCluster called name.
func IsGenerated(objLabels map[string]string, name string) bool {
	return objLabels[LabelManagedBy] == managedBy && objLabels[LabelInstance] == name
}
