package objyaml

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestMarshalNumbers: integers are written as plain YAML integers however large (a JSON number
// read as float64 would print 1000000 as 1e+06), strings that look like numbers stay quoted, and
// neither status nor an unset creationTimestamp is written.
func TestMarshalNumbers(t *testing.T) {
	job := &batchv1.Job{}
	job.APIVersion, job.Kind, job.Name = "batch/v1", "Job", "big"
	job.Labels = map[string]string{"size": "1000000"}
	job.Annotations = map[string]string{"a": "b"}
	job.Spec.ActiveDeadlineSeconds = ptr.To[int64](1000000)
	job.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](9007199254740993)}
	text, err := Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"activeDeadlineSeconds: 1000000\n",
		"fsGroup: 9007199254740993\n",
		`size: "1000000"` + "\n",
		"a: b\n",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("Marshal output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(string(text), "creationTimestamp") {
		t.Errorf("Marshal wrote the unset creationTimestamp:\n%s", text)
	}
	if strings.Contains(string(text), "status:") {
		t.Errorf("Marshal wrote a status:\n%s", text)
	}
}
