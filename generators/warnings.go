package generators

import (
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
		if cert := s.Flux.Container.MountPath + "/config/curve/curve.cert"; !strings.Contains(bc, cert) {
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
