// Package contract is what the objects minicluster-fn generates say about themselves: the labels
// and annotations that generators write and that every reader uses (the KRM function finding its
// earlier output, the fluxcd command, the Argo CD health rule, status and wait). No reader looks
// at an object's name, a script or a volume to learn what it is.
//
// The keys are ours (minicluster-fn.dev/), never a well-known key that a GitOps engine writes: Argo
// CD's label and annotation+label resource tracking overwrite app.kubernetes.io/instance on every
// object with the Application's name, and Helm writes app.kubernetes.io/managed-by. The
// well-known app.kubernetes.io/* labels stay on every object, for people and their tools.
//
// docs/generated-objects.md lists the contract for users.
package contract

// Labels on every generated object, and on the pods of the generated Jobs.
const (
	// LabelMiniCluster is the name of the MiniCluster an object was generated for: the same value
	// on all its objects and pods, so `kubectl get jobs,pods -l minicluster-fn.dev/minicluster=NAME`
	// selects one MiniCluster. The Services select their pods with it. Over kustomize's
	// namePrefix/nameSuffix, examples/overlay/kustomizeconfig.yaml makes it follow the headless
	// Service's name, so that two overlays of one MiniCluster in one namespace stay two.
	LabelMiniCluster = "minicluster-fn.dev/minicluster"
	// LabelComponent is the object's role in the MiniCluster: one of the Component values.
	LabelComponent = "minicluster-fn.dev/component"
)

// Values of LabelComponent.
const (
	// ComponentBroker: the Indexed Job of Flux brokers, and its pods.
	ComponentBroker = "broker"
	// ComponentKeygen: the Job that creates the certificate, its pods and its ServiceAccount,
	// Role and RoleBinding.
	ComponentKeygen = "keygen"
	// ComponentEntrypoint: the ConfigMap of the broker pods' scripts.
	ComponentEntrypoint = "entrypoint"
	// ComponentHeadless: the headless Service the broker pods register in.
	ComponentHeadless = "headless-service"
	// ComponentCurve: the certificate object (Secret or ConfigMap), whether the keygen Job created
	// it or it was rendered from spec.flux.curveCert.
	ComponentCurve = "curve"
	// ComponentServices: the services pod of spec.services.
	ComponentServices = "services"
	// ComponentPort: a Service of a sidecar container's ports.
	ComponentPort = "port-service"
	// ComponentDisruptionBudget: the PodDisruptionBudget of the broker pods (the eviction option).
	ComponentDisruptionBudget = "disruption-budget"
)

// LabelLifetime on the broker Job says whether its pods end on their own: LifetimeCompletes (the
// main broker runs the command and the Job completes when it ends) or LifetimeUntilDeleted (the Job
// never completes; AnnotationLifetimeReason says why). A label, so that `kubectl get jobs -l`
// selects by it; the GitOps health checks are chosen by it.
const (
	LabelLifetime        = "minicluster-fn.dev/lifetime"
	LifetimeCompletes    = "completes"
	LifetimeUntilDeleted = "until-deleted"
)

// Annotations on the broker Job.
const (
	// AnnotationLifetimeReason says why a broker Job labelled LifetimeUntilDeleted never completes.
	AnnotationLifetimeReason = "minicluster-fn.dev/lifetime-reason"
	// AnnotationMaxSize is spec.maxSize, the most brokers the MiniCluster can grow to in place.
	// Its size is the Job's spec.parallelism, which a size change patches.
	AnnotationMaxSize = "minicluster-fn.dev/max-size"
	// AnnotationViewImage is the Flux view image (spec.flux.container.image) the broker pods pull.
	AnnotationViewImage = "minicluster-fn.dev/view-image"
	// AnnotationViewSource is how the broker pods get the view: "Copy" or "ImageVolume" (the
	// view-source option as resolved).
	AnnotationViewSource = "minicluster-fn.dev/view-source"
)

// IsGenerated tells whether an object's labels mark it as generated for the MiniCluster called name.
func IsGenerated(labels map[string]string, name string) bool {
	return name != "" && labels[LabelMiniCluster] == name
}

// NotJoinedReport is in the line a broker's script prints, from 30 s on and every minute after,
// while its broker has not joined the instance (the main broker: while the instance has not
// started). status finds the line in the pod's log to say why a broker is not Ready.
// generators' tests check that the scripts print it.
const NotJoinedReport = "has not joined the main broker after"

// NotStartedReport is the main broker's line of the same kind: the other brokers have not joined it.
const NotStartedReport = "the instance has not started after"
