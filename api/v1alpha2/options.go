package v1alpha2

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// OptionPrefix starts every annotation that sets an option of ours rather than the operator's.
const OptionPrefix = "minicluster-fn.dev/"

// Annotation keys of our options (documented in the README's options table).
const (
	// JobNamingAnnotation: "hash" (default) names the broker Job <name>-<hash> so a changed pod
	// template becomes a new Job; "stable" names it <name> and asks Flux CD / Argo CD to replace it.
	JobNamingAnnotation = OptionPrefix + "job-naming"
	// KeygenImageAnnotation overrides the image the keygen Job runs.
	KeygenImageAnnotation = OptionPrefix + "keygen-image"
	// CurveSecretAnnotation names an existing Secret (key curve.cert) holding the certificate;
	// no keygen objects are generated then.
	CurveSecretAnnotation = OptionPrefix + "curve-secret"
	// CurveKindAnnotation is the kind of the certificate object that the keygen Job creates, or
	// that carries spec.flux.curveCert: "Secret" (default) or "ConfigMap" (as the operator does).
	CurveKindAnnotation = OptionPrefix + "curve-kind"
	// ViewMediumAnnotation says where the broker pods keep the view volume (their copy of the flux
	// view, and the broker's config, run and state directories): "Memory" or "Disk". Unset, the
	// generator chooses (see generators.viewMedium).
	ViewMediumAnnotation = OptionPrefix + "view-medium"
	// ViewSourceAnnotation says how the broker containers get the flux view: "Copy" (default),
	// copied by the init container into the view volume as the operator does, or "ImageVolume",
	// mounted read-only from an image volume of the view image (the node must support them).
	ViewSourceAnnotation = OptionPrefix + "view-source"
	// FailedCommandAnnotation says what a failed command does to the broker Job: "Fail" (default),
	// it fails the Job, or "Complete", the Job completes whatever the command returned, as with the
	// operator.
	FailedCommandAnnotation = OptionPrefix + "failed-command"
	// BrokerSpreadAnnotation says how strictly the brokers are spread one per node: "Preferred"
	// (default, as the operator), or "Required", where a broker that finds no node without one
	// stays Pending.
	BrokerSpreadAnnotation = OptionPrefix + "broker-spread"
	// EvictionAnnotation says whether the brokers of a MiniCluster whose command runs may be
	// evicted (kubectl drain, a cluster autoscaler's scale-down): "Allow" (default, as the
	// operator), or "WaitForCommand", where a PodDisruptionBudget refuses to evict a Ready broker,
	// so that a drain waits until the command has ended and the pods have completed.
	EvictionAnnotation = OptionPrefix + "eviction"
)

// knownOptions are the keys ParseOptions reads, as its error for an unknown key lists them.
var knownOptions = []string{JobNamingAnnotation, KeygenImageAnnotation, CurveSecretAnnotation, CurveKindAnnotation, ViewMediumAnnotation, ViewSourceAnnotation, FailedCommandAnnotation, BrokerSpreadAnnotation, EvictionAnnotation}

// ViewSource is how the broker containers get the flux view.
type ViewSource string

const (
	// ViewSourceCopy: every broker pod's init container copies the view into the view volume.
	ViewSourceCopy ViewSource = "Copy"
	// ViewSourceImageVolume: the pods mount the view image as an image volume (Kubernetes 1.35 or
	// later, 1.33 and 1.34 with the ImageVolume feature gate, and a runtime that mounts them, such
	// as containerd 2.1 or later); nothing is copied.
	ViewSourceImageVolume ViewSource = "ImageVolume"
)

// FailedCommand is what a failed command of the main broker does to the broker Job.
type FailedCommand string

const (
	// FailedCommandFail: the main broker's container exits with the command's status and the Job
	// fails, once.
	FailedCommandFail FailedCommand = "Fail"
	// FailedCommandComplete: the broker script goes on after a failed command and exits 0, so the
	// Job completes, as the operator's does.
	FailedCommandComplete FailedCommand = "Complete"
)

// BrokerSpread is how strictly the brokers are spread one per node.
type BrokerSpread string

const (
	// BrokerSpreadPreferred: the scheduler puts each broker on a node without one where it can,
	// and beside another broker where it cannot.
	BrokerSpreadPreferred BrokerSpread = "Preferred"
	// BrokerSpreadRequired: never two brokers of a MiniCluster on one node.
	BrokerSpreadRequired BrokerSpread = "Required"
)

// Eviction is whether the brokers of a running command may be evicted.
type Eviction string

const (
	// EvictionAllow: no PodDisruptionBudget; an evicted broker's pod is replaced, and the command
	// that ran on it fails.
	EvictionAllow Eviction = "Allow"
	// EvictionWaitForCommand: a PodDisruptionBudget with maxUnavailable 0 over the broker pods:
	// the eviction of a Ready broker is refused until the pods have completed; one that is not
	// Ready may be evicted (unhealthyPodEvictionPolicy AlwaysAllow), so a broken cluster never
	// blocks a drain.
	EvictionWaitForCommand Eviction = "WaitForCommand"
)

// ViewMedium is the medium of the broker pods' view volume.
type ViewMedium string

const (
	// ViewMediumMemory: a tmpfs emptyDir. Its pages count as the pod's memory.
	ViewMediumMemory ViewMedium = "Memory"
	// ViewMediumDisk: an emptyDir on the node's disk, as the operator's.
	ViewMediumDisk ViewMedium = "Disk"
)

// CurveKind is the kind of object that holds the certificate.
type CurveKind string

const (
	// CurveKindSecret: the namespace's view role cannot read it, and the file holds the secret key.
	CurveKindSecret    CurveKind = "Secret"
	CurveKindConfigMap CurveKind = "ConfigMap"
)

type JobNaming string

const (
	JobNamingHash   JobNaming = "hash"
	JobNamingStable JobNaming = "stable"
)

// Options are our settings, read from the MiniCluster's annotations.
type Options struct {
	JobNaming   JobNaming `json:"jobNaming"`
	KeygenImage string    `json:"keygenImage,omitempty"`
	CurveSecret string    `json:"curveSecret,omitempty"`
	// CurveKind is not hashed into the broker Job's name: the pod template, which is, mounts the
	// certificate from an object of this kind, so the kind changes the name anyway. Left out, a
	// MiniCluster with curve-kind ConfigMap keeps the broker Job name it had before the option
	// existed, and an upgrade does not replace its running cluster.
	CurveKind CurveKind `json:"-"`
	// ViewMedium is "" unless the annotation sets it. Not hashed either: it changes the pod
	// template's view volume, which is.
	ViewMedium ViewMedium `json:"-"`
	// ViewSource is not hashed either: it changes the pod template's volumes and the init script.
	ViewSource ViewSource `json:"-"`
	// FailedCommand is not hashed either: it changes the broker script and the pod template's
	// restartPolicy, which are. The zero value is FailedCommandFail.
	FailedCommand FailedCommand `json:"-"`
	// BrokerSpread is not hashed either: it changes the pod template's affinity, which is.
	BrokerSpread BrokerSpread `json:"-"`
	// Eviction is not hashed: it adds or removes the PodDisruptionBudget, an object of its own,
	// and changes nothing of the Job.
	Eviction Eviction `json:"-"`
}

// ParseOptions reads our annotations. Unknown keys under OptionPrefix are errors: a typo in an
// option must not silently fall back to a default.
func (m *MiniCluster) ParseOptions() (Options, field.ErrorList) {
	var errs field.ErrorList
	opts := Options{JobNaming: JobNamingHash, CurveKind: CurveKindSecret, ViewSource: ViewSourceCopy, FailedCommand: FailedCommandFail,
		BrokerSpread: BrokerSpreadPreferred, Eviction: EvictionAllow}
	base := field.NewPath("metadata", "annotations")
	keys := make([]string, 0, len(m.Annotations))
	for k := range m.Annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, OptionPrefix) {
			continue
		}
		v := m.Annotations[k]
		p := base.Key(k)
		switch k {
		case JobNamingAnnotation:
			errs = append(errs, setOneOf(&opts.JobNaming, p, v, JobNamingHash, JobNamingStable)...)
		case KeygenImageAnnotation:
			if strings.TrimSpace(v) == "" {
				errs = append(errs, field.Invalid(p, v, "must be an image reference"))
			} else {
				errs = append(errs, validateImage(v, p)...)
			}
			opts.KeygenImage = v
		case CurveSecretAnnotation:
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(p, v, msg))
			}
			opts.CurveSecret = v
		case CurveKindAnnotation:
			errs = append(errs, setOneOf(&opts.CurveKind, p, v, CurveKindSecret, CurveKindConfigMap)...)
		case ViewMediumAnnotation:
			errs = append(errs, setOneOf(&opts.ViewMedium, p, v, ViewMediumMemory, ViewMediumDisk)...)
		case ViewSourceAnnotation:
			errs = append(errs, setOneOf(&opts.ViewSource, p, v, ViewSourceCopy, ViewSourceImageVolume)...)
		case FailedCommandAnnotation:
			errs = append(errs, setOneOf(&opts.FailedCommand, p, v, FailedCommandFail, FailedCommandComplete)...)
		case BrokerSpreadAnnotation:
			errs = append(errs, setOneOf(&opts.BrokerSpread, p, v, BrokerSpreadPreferred, BrokerSpreadRequired)...)
		case EvictionAnnotation:
			errs = append(errs, setOneOf(&opts.Eviction, p, v, EvictionAllow, EvictionWaitForCommand)...)
		default:
			errs = append(errs, field.Invalid(p, v, "unknown option; known options are "+strings.Join(knownOptions, ", ")))
		}
	}
	if reason := m.UserNamedHosts(); reason != "" {
		// The user's host list names the pods as the operator does, <name>-<index>.
		switch m.Annotations[JobNamingAnnotation] {
		case "":
			opts.JobNaming = JobNamingStable
		case string(JobNamingHash):
			errs = append(errs, field.Invalid(base.Key(JobNamingAnnotation), string(JobNamingHash),
				reason+" names the broker pods "+m.Name+"-<index>, but hash naming makes them "+m.Name+"-<hash>-<index>; use "+string(JobNamingStable)))
		}
	}
	if opts.CurveSecret != "" && m.Spec.Flux.CurveCert != "" {
		errs = append(errs, field.Forbidden(base.Key(CurveSecretAnnotation), "spec.flux.curveCert is set too; give the certificate one way only"))
	}
	if opts.CurveSecret != "" && opts.CurveKind == CurveKindConfigMap {
		errs = append(errs, field.Forbidden(base.Key(CurveKindAnnotation),
			CurveSecretAnnotation+" mounts that Secret; the certificate cannot also be a ConfigMap"))
	}
	if opts.ViewSource == ViewSourceImageVolume && m.Spec.Flux.Container.Disable {
		errs = append(errs, field.Forbidden(base.Key(ViewSourceAnnotation),
			"spec.flux.container.disable is set: there is no view image to mount; the application image brings flux"))
	}
	if opts.BrokerSpread == BrokerSpreadRequired && m.Spec.Network.DisableAffinity {
		errs = append(errs, field.Forbidden(base.Key(BrokerSpreadAnnotation),
			"spec.network.disableAffinity is true: the brokers are not spread at all; drop one of the two"))
	}
	if opts.Eviction == EvictionWaitForCommand {
		if reason := m.NeverCompletes(); reason != "" {
			errs = append(errs, field.Forbidden(base.Key(EvictionAnnotation),
				reason+": a drain of one of its nodes would wait forever; drop the option, or give the MiniCluster a command that ends"))
		}
	}
	return opts, errs
}

// setOneOf sets *dst to v when v is one of allowed (spelled exactly so), and otherwise leaves it
// and returns the error at p that lists the allowed values.
func setOneOf[T ~string](dst *T, p *field.Path, v string, allowed ...T) field.ErrorList {
	if i := slices.Index(allowed, T(v)); i >= 0 {
		*dst = allowed[i]
		return nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return field.ErrorList{field.NotSupported(p, v, names)}
}

// UserNamedHosts returns the field that writes the broker host list by hand (and so names the
// broker pods <name>-<index>, as the operator's Job does), or "" when we write it.
func (m *MiniCluster) UserNamedHosts() string {
	f := &m.Spec.Flux
	switch {
	case f.BrokerConfig != "":
		return "spec.flux.brokerConfig"
	case f.Bursting.Hostlist != "":
		return "spec.flux.bursting.hostlist"
	case f.Bursting.LeadBroker != nil:
		return "spec.flux.bursting.leadBroker"
	}
	return ""
}
