package generators

import (
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// File modes of mounted ConfigMap/Secret items.
const (
	scriptMode = int32(0o644) // scripts are run with /bin/bash, they need not be executable
	curveMode  = int32(0o400) // Flux rejects a certificate readable by group/other
)

// fluxVolumes are the volumes every broker pod has: the view (with the view image's /opt/software),
// scratch space, the scripts and the certificate; with view-source ImageVolume, the view image too.
func fluxVolumes(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) []corev1.Volume {
	vols := []corev1.Volume{
		{Name: volumeHome, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: mc.Spec.Flux.Container.Name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: viewMedium(mc, opts)}}},
		{Name: volumeEntrypoint, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: n.EntrypointConfigMap},
			DefaultMode:          ptr.To(scriptMode),
		}}},
		curveVolume(opts, n),
	}
	if opts.ViewSource == v1alpha2.ViewSourceImageVolume {
		fc := &mc.Spec.Flux.Container
		vols = append(vols, corev1.Volume{Name: volumeViewImage, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{
			Reference: fc.Image, PullPolicy: pullPolicy(fc.PullAlways, ""),
		}}})
	}
	return vols
}

// viewMedium is the medium of the view volume, where every broker pod's init container copies the
// view image's flux and software. On the live cluster of tests/live that copy was most of the time
// to ready: the pods of one node copy at once, and 16 copies of the stand-in view's 91 MB took 8.6 s
// to the node's ext4 disk (median, init container start to exit) against 0.84 s to tmpfs
// (docs/benchmarks.md). Memory is the choice unless the option says otherwise, or where tmpfs
// could hurt: its pages are charged to the pod's memory and cannot be reclaimed, so a container
// with a memory limit could be OOM-killed for the view's size, and the pods of a Job that runs
// until deleted keep the brokers' state (the KVS's content store, job output included) there for
// as long as they run.
func viewMedium(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) corev1.StorageMedium {
	switch opts.ViewMedium {
	case v1alpha2.ViewMediumMemory:
		return corev1.StorageMediumMemory
	case v1alpha2.ViewMediumDisk:
		return corev1.StorageMediumDefault
	}
	if mc.NeverCompletes() != "" || memoryLimited(mc) {
		return corev1.StorageMediumDefault
	}
	return corev1.StorageMediumMemory
}

// memoryLimited says whether a container of the broker pod (the init container included) has a
// memory limit.
func memoryLimited(mc *v1alpha2.MiniCluster) bool {
	if _, ok := mc.Spec.Flux.Container.Resources.Limits[corev1.ResourceMemory]; ok {
		return true
	}
	for _, c := range mc.Spec.Containers {
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			return true
		}
	}
	return false
}

// curveVolume mounts the shared certificate. It is never optional: kubelet keeps the pods waiting
// until the keygen Job has created it, so one apply converges in any tool. Only the key curve.cert
// is projected, whatever else the object holds. Secret and ConfigMap volumes set the file's mode
// and group (fsGroup) the same way, so the broker sees the same file from either.
func curveVolume(opts v1alpha2.Options, n names) corev1.Volume {
	items := []corev1.KeyToPath{{Key: CurveCertKey, Path: CurveCertKey, Mode: ptr.To(curveMode)}}
	secret := func(name string) corev1.Volume {
		return corev1.Volume{Name: volumeCurve, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, Items: items, DefaultMode: ptr.To(curveMode),
		}}}
	}
	switch {
	case opts.CurveSecret != "":
		return secret(opts.CurveSecret)
	case opts.CurveKind == v1alpha2.CurveKindConfigMap:
		return corev1.Volume{Name: volumeCurve, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: n.Curve}, Items: items, DefaultMode: ptr.To(curveMode),
		}}}
	}
	return secret(n.Curve)
}

// userVolumes are the pod volumes for containers' `volumes`, one per key, sorted by key. The
// volume is named after its key (the operator named ConfigMap volumes after the ConfigMap and
// mounted them by key, so they never matched).
func userVolumes(containers []v1alpha2.MiniClusterContainer) []corev1.Volume {
	byKey := map[string]v1alpha2.ContainerVolume{}
	for _, c := range containers {
		for k, v := range c.Volumes {
			if _, seen := byKey[k]; !seen {
				byKey[k] = v
			}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vols := make([]corev1.Volume, 0, len(keys))
	for _, k := range keys {
		vols = append(vols, corev1.Volume{Name: k, VolumeSource: volumeSource(byKey[k])})
	}
	return vols
}

func volumeSource(v v1alpha2.ContainerVolume) corev1.VolumeSource {
	switch v.VolumeSource() {
	case "csiDriver":
		return corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
			Driver: v.CSIDriver, ReadOnly: ptr.To(v.ReadOnly), VolumeAttributes: v.CSIDriverAttributes,
		}}
	case "secretName":
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: v.SecretName, Items: keyToPaths(v.Items)}}
	case "emptyDir":
		ed := &corev1.EmptyDirVolumeSource{}
		if strings.EqualFold(v.EmptyDirMedium, "memory") {
			ed.Medium = corev1.StorageMediumMemory
		}
		if v.EmptyDirSizeLimit != "" {
			ed.SizeLimit = ptr.To(resource.MustParse(v.EmptyDirSizeLimit))
		}
		return corev1.VolumeSource{EmptyDir: ed}
	case "hostPath":
		return corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: v.HostPath, Type: ptr.To(corev1.HostPathDirectory)}}
	case "configMapName":
		return corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: v.ConfigMapName}, Items: keyToPaths(v.Items),
		}}
	case "claimName":
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: v.ClaimName, ReadOnly: v.ReadOnly}}
	}
	// A volume with only a path: scratch space (the operator made a claim with an empty name).
	return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
}

func keyToPaths(items map[string]string) []corev1.KeyToPath {
	keys := slices.Sorted(maps.Keys(items))
	if len(keys) == 0 {
		return nil
	}
	out := make([]corev1.KeyToPath, 0, len(keys))
	for _, k := range keys {
		out = append(out, corev1.KeyToPath{Key: k, Path: items[k]})
	}
	return out
}

// userMounts are the mounts of one container's own volumes, sorted by key (the operator let mounts
// of earlier containers leak into later ones).
func userMounts(c v1alpha2.MiniClusterContainer) []corev1.VolumeMount {
	var mounts []corev1.VolumeMount
	for _, k := range slices.Sorted(maps.Keys(c.Volumes)) {
		v := c.Volumes[k]
		mounts = append(mounts, corev1.VolumeMount{Name: k, MountPath: v.MountPath(), ReadOnly: v.ReadOnly})
	}
	return mounts
}
