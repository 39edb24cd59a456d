package integration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// restrictedNamespace enforces, and warns about, Pod Security "restricted".
var restrictedNamespace = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
	"pod-security.kubernetes.io/warn":            "restricted",
	"pod-security.kubernetes.io/warn-version":    "latest",
}

// testPodSecurity: the keygen Job applies in a namespace that enforces Pod Security "restricted"
// without warnings, and a Pod built from its template passes admission (server dry run). A
// template with one setting removed is rejected, so the check is really enforced.
func (c *cluster) testPodSecurity(t *testing.T) {
	s := c.newKeygenSetup(t, restrictedNamespace, "ServiceAccount", "Role", "RoleBinding", "Service")
	keygen := find(t, s.objs, "Job", "keygen")
	c.warnings.take()
	c.apply(t, s.ns, []*unstructured.Unstructured{keygen})
	if w := c.warnings.take(); len(w) > 0 {
		t.Errorf("applying the keygen Job in a restricted namespace: warnings %q", w)
	}

	tmpl, _, err := unstructured.NestedMap(keygen.Object, "spec", "template")
	if err != nil {
		t.Fatal(err)
	}
	var podTemplate corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &podTemplate); err != nil {
		t.Fatal(err)
	}
	dryRun := func(spec corev1.PodSpec) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "keygen-", Labels: podTemplate.Labels},
			Spec:       spec,
		}
		_, err := c.cs.CoreV1().Pods(s.ns).Create(context.Background(), pod, metav1.CreateOptions{
			DryRun:          []string{metav1.DryRunAll},
			FieldValidation: metav1.FieldValidationStrict,
		})
		return err
	}
	if err := dryRun(podTemplate.Spec); err != nil {
		t.Errorf("a keygen Pod is rejected in a restricted namespace: %v", err)
	}
	if w := c.warnings.take(); len(w) > 0 {
		t.Errorf("dry-run of a keygen Pod: warnings %q", w)
	}

	weakened := *podTemplate.Spec.DeepCopy()
	weakened.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
	err = dryRun(weakened)
	if err == nil || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Errorf("a Pod allowing privilege escalation: err = %v, want a Pod Security rejection", err)
	}
	c.warnings.take()
}
