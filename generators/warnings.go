package generators

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"maps"
	"slices"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// warnings name what renders but does not behave as with the operator, and what to do instead.
func warnings(mc *v1alpha2.MiniCluster) []Warning {
	s := &mc.Spec
	var out []Warning
	if s.Cleanup {
		out = append(out, Warning{"spec.cleanup", "ignored: without the operator nothing deletes the MiniCluster when rank 0 finishes; " +
			"remove the MiniCluster from Git (prune deletes its objects) or delete the Job by hand"})
	}
	if bc := s.Flux.BrokerConfig; bc != "" {
		// A verbatim config must point at the certificate where the broker script copies it.
		if cert := newPodLayout(s.Flux.Container.MountPath).CurveCert; !strings.Contains(bc, cert) {
			out = append(out, Warning{"spec.flux.brokerConfig", "is used verbatim and does not name the certificate file " + cert +
				" (bootstrap.curve_cert), where the broker script puts it; the brokers will not find it"})
		}
	}
	if reason := mc.UserNamedHosts(); reason != "" && mc.Annotations[v1alpha2.JobNamingAnnotation] == "" {
		out = append(out, Warning{reason, "names the broker pods " + mc.Name + "-<index>, so the broker Job is named " + mc.Name +
			" (job-naming: stable, set it to silence this): a change of its pod template needs the Job replaced, " +
			"which the generated Argo CD/Flux CD annotations ask for"})
	}
	if len(s.Pod.Resources) > 0 && s.Pod.RuntimeClassName == "" {
		out = append(out, Warning{"spec.pod.resources", "becomes the pod overhead, as with the operator; the API server rejects an overhead " +
			"without a RuntimeClass that defines one (set spec.pod.runtimeClassName), use containers[].resources for requests and limits"})
	}
	if s.Flux.MungeSecret != "" {
		out = append(out, Warning{"spec.flux.mungeSecret", "ignored: the operator's v1alpha2 does not use it either"})
	}
	if s.Flux.Arch != "" {
		out = append(out, Warning{"spec.flux.arch", "ignored: choose the view image with spec.flux.container.image instead"})
	}
	if s.Flux.Container.ImagePullSecret != "" {
		out = append(out, Warning{"spec.flux.container.imagePullSecret", "ignored, as by the operator: pull secrets come from containers[].imagePullSecret"})
	}
	for i, c := range s.Containers {
		for _, k := range slices.Sorted(maps.Keys(c.Volumes)) {
			if c.Volumes[k].VolumeSource() == "path" {
				out = append(out, Warning{
					Field:   field.NewPath("spec", "containers").Index(i).Child("volumes").Key(k).String(),
					Message: "has only a path: mounted as an emptyDir (the operator made a claim with an empty name, which never binds); set claimName or hostPath for shared storage",
				})
			}
		}
	}
	return out
}

// Notes are facts about what a later edit of mc would do to a running cluster, for the user to
// know before the edit lands (info results). mc must be defaulted.
func Notes(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) []Warning {
	s := &mc.Spec
	reason := mc.RunsUntilDeleted()
	if reason == "" || s.MaxSize != s.Size || mc.UserNamedHosts() != "" {
		// (A host list the user writes changes only as the user writes it.)
		return nil
	}
	// Without room to grow, the scripts' host list is rendered for size (resolveNames). For a
	// MiniCluster that runs a command, a new Job reruns the command at the new size, which is what
	// such an edit asks for; a cluster that runs until deleted would lose its running instance.
	effect := "a change of spec.size will rename the broker Job, so a GitOps sync with prune deletes the running cluster and starts a new one"
	if opts.JobNaming == v1alpha2.JobNamingStable {
		effect = "a change of spec.size rewrites the brokers' host list in place, and running brokers read it only when they start, " +
			"so ranks added to the running cluster are not in its host list"
	}
	return []Warning{{"spec.maxSize", fmt.Sprintf("equals spec.size (%d), as it does when unset, and %s: %s; "+
		"to change the size in place later, set spec.maxSize to the largest size it may grow to", s.Size, reason, effect)}}
}
