package impact

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kueueconstants "sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// objectID is an object's identity for a GitOps engine: group, kind, namespace and name.
func objectID(u *unstructured.Unstructured) string {
	return u.GroupVersionKind().GroupKind().String() + "/" + id(u.GetNamespace(), u.GetName())
}

// displayID is Kind/name, or Kind/namespace/name.
func displayID(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + id(u.GetNamespace(), u.GetName())
}

func isBrokerJob(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Job" && u.GetLabels()[contract.LabelComponent] == contract.ComponentBroker
}

func isKeygenJob(u *unstructured.Unstructured) bool {
	return u.GetKind() == "Job" && u.GetLabels()[contract.LabelComponent] == contract.ComponentKeygen
}

// mutableJobSpec are the fields of a Job's spec that the API server lets an update change
// (k8s.io/kubernetes pkg/apis/batch/validation ValidateJobSpecUpdate; completions of an Indexed
// Job together with parallelism). A change of any other field of a Job's spec, its pod template
// above all, is refused as immutable: the Job must be deleted and created again.
var mutableJobSpec = []string{"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "suspend", "ttlSecondsAfterFinished", "maxFailedIndexes"}

// objectChange is what happens to an object present in both renders; "" for nothing.
func objectChange(old, new *unstructured.Unstructured) (Change, []string) {
	if reflect.DeepEqual(old.Object, new.Object) {
		return "", nil
	}
	fields := changedPaths(old.Object, new.Object)
	if !slices.ContainsFunc(fields, func(f string) bool {
		return !strings.HasPrefix(f, "metadata.labels") && !strings.HasPrefix(f, "metadata.annotations")
	}) {
		return Relabel, fields
	}
	switch new.GetKind() {
	case "Job":
		for _, f := range fields {
			if strings.HasPrefix(f, "spec.") && !slices.ContainsFunc(mutableJobSpec, func(m string) bool { return f == "spec."+m }) {
				return Recreate, fields
			}
		}
	case "Pod":
		// A pod's spec cannot change but for its containers' images and a few scheduling fields:
		// a GitOps engine replaces it.
		if slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, "spec.") }) {
			return Recreate, fields
		}
	}
	return Patched, fields
}

// certificate is what the broker pods mount as the CURVE certificate, and who makes it.
type certificate struct {
	object string // Kind/namespace/name
	origin string // how it is made
	// content is a digest of the certificate's data when it is in the render.
	content string
}

func (c certificate) String() string { return c.object + " (" + c.origin + ")" }

// certificateOf finds the certificate that the broker Job's pods mount, by the broker pods' own
// volume, and how it comes to be: rendered (spec.flux.curveCert), made in the cluster by a keygen
// Job of the render, or an object of the user's.
func certificateOf(objs []*unstructured.Unstructured, broker *unstructured.Unstructured) certificate {
	volumes, _, _ := unstructured.NestedSlice(broker.Object, "spec", "template", "spec", "volumes")
	var c certificate
	for _, v := range volumes {
		vol, _ := v.(map[string]any)
		if vol["name"] != v1alpha2.VolumeCurve {
			continue
		}
		if name, ok, _ := unstructured.NestedString(vol, "secret", "secretName"); ok {
			c.object = "Secret/" + id(broker.GetNamespace(), name)
		}
		if name, ok, _ := unstructured.NestedString(vol, "configMap", "name"); ok {
			c.object = "ConfigMap/" + id(broker.GetNamespace(), name)
		}
	}
	c.origin = "yours, not rendered"
	for _, o := range objs {
		switch {
		case o.GetKind()+"/"+id(o.GetNamespace(), o.GetName()) == c.object:
			data, _ := json.Marshal([]any{o.Object["data"], o.Object["stringData"]})
			c.origin, c.content = "rendered", fmt.Sprintf("%x", sha256.Sum256(data))
			return c
		case isKeygenJob(o):
			c.origin = "made by the keygen Job"
		}
	}
	return c
}

// verdict is the outcome of comparing one MiniCluster's two renders.
type verdict struct {
	kind    Kind
	effect  string
	objects []ObjectChange
	// oldBroker, newBroker are the broker Jobs; renamed maps the names of the objects that a
	// change of the broker Job's name renamed (its entrypoint ConfigMap) old to new.
	oldBroker, newBroker *unstructured.Unstructured
	oldCert, newCert     certificate
}

// classify compares one MiniCluster's objects at two revisions.
func classify(old, new []*unstructured.Unstructured, maxSize int) verdict {
	v := verdict{}
	newByID := make(map[string]*unstructured.Unstructured, len(new))
	for _, o := range new {
		newByID[objectID(o)] = o
	}
	oldIDs := make(map[string]bool, len(old))
	var brokerChange Change
	var changed, relabelled int
	for _, o := range old {
		oid := objectID(o)
		oldIDs[oid] = true
		if isBrokerJob(o) {
			v.oldBroker = o
		}
		n, ok := newByID[oid]
		if !ok {
			v.objects = append(v.objects, ObjectChange{Object: displayID(o), Change: Pruned})
			changed++
			continue
		}
		change, fields := objectChange(o, n)
		switch change {
		case "":
			continue
		case Relabel:
			relabelled++
		default:
			changed++
		}
		if isBrokerJob(o) && isBrokerJob(n) {
			brokerChange = change
		}
		v.objects = append(v.objects, ObjectChange{Object: displayID(o), Change: change, Fields: fields})
	}
	for _, n := range new {
		if isBrokerJob(n) {
			v.newBroker = n
		}
		if !oldIDs[objectID(n)] {
			v.objects = append(v.objects, ObjectChange{Object: displayID(n), Change: Created})
			changed++
		}
	}
	if v.oldBroker == nil || v.newBroker == nil {
		// Not minicluster-fn's output of one version: say what the objects do.
		v.kind, v.effect = Updated, "no broker Job on one side: the objects change as listed"
		return v
	}
	v.oldCert, v.newCert = certificateOf(old, v.oldBroker), certificateOf(new, v.newBroker)
	oldJob, newJob := v.oldBroker.GetName(), v.newBroker.GetName()
	oldSize, _, _ := unstructured.NestedInt64(v.oldBroker.Object, "spec", "parallelism")
	newSize, _, _ := unstructured.NestedInt64(v.newBroker.Object, "spec", "parallelism")
	renamed := objectID(v.oldBroker) != objectID(v.newBroker)
	replacement := fmt.Sprintf("broker Job %s is pruned and %s created", oldJob, newJob)
	if !renamed {
		replacement = fmt.Sprintf("broker Job %s is deleted and created again (its pod template cannot change in place)", oldJob)
	}
	switch {
	case v.oldCert != v.newCert:
		v.kind = NewCertificate
		v.effect = fmt.Sprintf("the brokers mount %s instead of %s: %s, every broker restarts with a new key and running work ends", v.newCert, v.oldCert, replacement)
	case renamed || brokerChange == Recreate:
		v.kind = Replaced
		v.effect = replacement + ": running work ends"
	case brokerChange == Patched && oldSize != newSize:
		v.kind = ResizedInPlace
		within := ""
		if maxSize > 0 {
			within = fmt.Sprintf(", within maxSize %d", maxSize)
		}
		v.effect = fmt.Sprintf("%d → %d%s: the same Job %s is patched, running work goes on", oldSize, newSize, within, oldJob)
		if queue := v.newBroker.GetLabels()[kueueconstants.QueueLabel]; queue != "" {
			v.kind = Requeued
			v.effect = fmt.Sprintf("%d → %d%s: the same Job %s is patched, and Kueue (LocalQueue %s) requeues it: it suspends the Job, "+
				"ending running work, and starts every broker again once it admits the new size", oldSize, newSize, within, oldJob, queue)
		}
	case changed > 0:
		v.kind = Updated
		v.effect = fmt.Sprintf("broker Job %s stays, running work goes on; %s", oldJob, describeChanges(v.objects))
	case relabelled > 0:
		v.kind = MetadataOnly
		v.effect = "labels or annotations are patched; nothing restarts"
	default:
		v.kind = Unchanged
	}
	return v
}

// describeChanges lists the objects that change but the ones only relabelled.
func describeChanges(changes []ObjectChange) string {
	var parts []string
	for _, c := range changes {
		if c.Change != Relabel {
			parts = append(parts, c.Object+" "+string(c.Change))
		}
	}
	return strings.Join(parts, ", ")
}
