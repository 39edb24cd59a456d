package fn

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// hpaWarning flags a HorizontalPodAutoscaler that scales a MiniCluster: that needs the operator's
// scale subresource.
func hpaWarning(item *yaml.RNode) *framework.Result {
	if item.GetKind() != "HorizontalPodAutoscaler" {
		return nil
	}
	kind, _ := item.GetString("spec.scaleTargetRef.kind")
	if kind != v1alpha2.Kind {
		return nil
	}
	file, index := fileOf(item)
	r := &framework.Result{
		Severity: framework.Warning,
		Message: "scales a MiniCluster, which needs the operator's scale subresource; without the operator, " +
			"change spec.size in Git (up to spec.maxSize) instead",
		ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: item.GetApiVersion(), Kind: item.GetKind()},
			NameMeta: yaml.NameMeta{Name: item.GetName(), Namespace: item.GetNamespace()}},
		Field: &framework.Field{Path: "spec.scaleTargetRef"},
	}
	if file != "" {
		r.File = &framework.File{Path: file, Index: index}
	}
	return r
}

func (s *source) ref() *yaml.ResourceIdentifier {
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: s.node.GetApiVersion(), Kind: s.node.GetKind()},
		NameMeta: yaml.NameMeta{Name: s.node.GetName(), Namespace: s.node.GetNamespace()},
	}
}

func (s *source) result(sev framework.Severity, fieldPath, msg string, current any) *framework.Result {
	r := &framework.Result{Severity: sev, Message: msg, ResourceRef: s.ref()}
	if fieldPath != "" {
		r.Field = &framework.Field{Path: fieldPath, CurrentValue: current}
	}
	if s.file != "" {
		r.File = &framework.File{Path: s.file, Index: s.index}
	}
	return r
}

func (s *source) fieldResult(e *field.Error) *framework.Result {
	var current any
	if e.BadValue != nil {
		if _, omit := e.BadValue.(field.OmitValueType); !omit {
			current = e.BadValue
		}
	}
	fieldPath := e.Field
	if fieldPath == "<nil>" {
		fieldPath = ""
	}
	return s.result(framework.Error, fieldPath, e.ErrorBody(), current)
}

// withSeverity are the results of one severity.
func withSeverity(rs framework.Results, sev framework.Severity) framework.Results {
	var out framework.Results
	for _, r := range rs {
		if r.Severity == sev {
			out = append(out, r)
		}
	}
	return out
}

// isResults tells whether err is the processor's error results (invalid input) rather than a
// failure to read or write.
func isResults(err error) bool {
	var results framework.Results
	return errors.As(err, &results)
}

// ignoredFunctionConfig warns about a functionConfig that is not a MiniCluster, such as the
// ConfigMap kpt makes of `kpt fn eval ... -- key=value` or of a Kptfile's configMap: the function
// has no settings of its own, so whatever it says has no effect.
func ignoredFunctionConfig(fc *yaml.RNode) *framework.Result {
	if fc == nil || fc.GetKind() == "" || IsMiniCluster(fc) {
		return nil
	}
	return &framework.Result{Severity: framework.Warning, Message: fmt.Sprintf(
		"the functionConfig %s/%s is not a MiniCluster and is ignored: minicluster-fn has no settings; it renders the MiniClusters "+
			"among the items, and options go into their %s annotations", fc.GetKind(), fc.GetName(), v1alpha2.OptionPrefix)}
}
