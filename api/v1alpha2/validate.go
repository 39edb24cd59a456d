package v1alpha2

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kueueconstants "sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/minicluster-fn/minicluster-fn/api/naming"
)

// Names of the volumes every broker pod has besides flux.container.name (generators use these);
// containers' volumes cannot take them.
const (
	VolumeSoftware   = "spack-software"
	VolumeHome       = "flux-operator-home"
	VolumeEntrypoint = "flux-entrypoint"
	VolumeCurve      = "flux-curve"
	// VolumeViewImage is the image volume of the view image (the view-source option ImageVolume).
	VolumeViewImage = "flux-view-image"
)

// maxIndexedJobParallelism is the largest parallelism the Kubernetes API server accepts for an
// Indexed Job (maxParallelismForIndexedJob in k8s.io/kubernetes pkg/apis/batch/validation). The
// broker Job's completions and parallelism are both spec.size, raised up to spec.maxSize to grow
// in place. (Completions have a limit of their own only with backoffLimitPerIndex, which the
// broker Job does not set.)
const maxIndexedJobParallelism = 100_000

var indexedJobLimitDetail = fmt.Sprintf("must not exceed %d, the largest parallelism Kubernetes accepts for an Indexed Job", maxIndexedJobParallelism)

// PortServiceName names the Service of a sidecar container with ports. The operator names it after
// the container alone; the MiniCluster's name in front keeps two MiniClusters with a sidecar of
// the same name from generating the same Service.
func PortServiceName(miniCluster, container string) string { return miniCluster + "-" + container }

// Validate checks a defaulted MiniCluster: the operator's Validate() rules and our stricter ones.
// It returns every problem, not just the first.
func (m *MiniCluster) Validate(opts Options) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	spec := field.NewPath("spec")
	s := &m.Spec

	if m.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), m.APIVersion, []string{APIVersion}))
	}
	if m.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), m.Kind, []string{Kind}))
	}
	if m.Name == "" {
		errs = append(errs, field.Required(meta.Child("name"), "a MiniCluster needs a name"))
	} else {
		for _, msg := range validation.IsDNS1123Label(m.Name) {
			errs = append(errs, field.Invalid(meta.Child("name"), m.Name, msg+" (pod hostnames are built from it)"))
		}
	}
	if m.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(m.Namespace) {
			errs = append(errs, field.Invalid(meta.Child("namespace"), m.Namespace, msg))
		}
	}

	// Sizes. maxSize and minSize are compared with size only when size itself is valid: measured
	// against an invalid size (or defaulted from it) they would only repeat its error.
	sizeOK := false
	switch {
	case s.Size < 1:
		errs = append(errs, field.Invalid(spec.Child("size"), s.Size, "must be at least 1"))
	case s.Size > maxIndexedJobParallelism:
		errs = append(errs, field.Invalid(spec.Child("size"), s.Size, indexedJobLimitDetail))
	default:
		sizeOK = true
	}
	if sizeOK && s.MaxSize < s.Size {
		errs = append(errs, field.Invalid(spec.Child("maxSize"), s.MaxSize, fmt.Sprintf("must be at least spec.size (%d)", s.Size)))
	} else if sizeOK && s.MaxSize > maxIndexedJobParallelism {
		errs = append(errs, field.Invalid(spec.Child("maxSize"), s.MaxSize, indexedJobLimitDetail+" (the Job grows to spec.maxSize in place)"))
	}
	if s.MinSize < 0 {
		errs = append(errs, field.Invalid(spec.Child("minSize"), s.MinSize, "must not be negative"))
	} else if sizeOK && s.MinSize > s.Size {
		errs = append(errs, field.Invalid(spec.Child("minSize"), s.MinSize, fmt.Sprintf("must not exceed spec.size (%d)", s.Size)))
	}
	if s.Tasks != nil && *s.Tasks < 0 {
		errs = append(errs, field.Invalid(spec.Child("tasks"), *s.Tasks, "must not be negative"))
	}
	if s.BackoffLimit < 0 {
		errs = append(errs, field.Invalid(spec.Child("backoffLimit"), s.BackoffLimit, "must not be negative"))
	}
	if s.DeadlineSeconds < 0 {
		errs = append(errs, field.Invalid(spec.Child("deadlineSeconds"), s.DeadlineSeconds, "must not be negative"))
	}

	// Hostnames must be DNS labels (63 characters at most): measured on the names generation makes
	// (the hash of a hashed Job name is as long as any).
	if m.Name != "" && sizeOK && s.MaxSize >= s.Size {
		hashed := opts.JobNaming != JobNamingStable
		how := "<name>-<index>"
		if hashed {
			how = "<name>-<hash>-<index>"
		}
		job := naming.BrokerJob(m.Name, strings.Repeat("0", naming.HashSuffixLength), hashed)
		longest := len(naming.Hostname(job, int(min(s.MaxSize, maxIndexedJobParallelism)-1)))
		if longest > validation.DNS1123LabelMaxLength {
			errs = append(errs, field.TooLong(meta.Child("name"), m.Name,
				len(m.Name)-(longest-validation.DNS1123LabelMaxLength)).WithOrigin("hostname"))
			errs[len(errs)-1].Detail = fmt.Sprintf("pod hostname %s would be %d characters; hostnames allow 63", how, longest)
		}
		if host := naming.ServicesHostname(m.Name); len(s.Services) > 0 && len(host) > validation.DNS1123LabelMaxLength {
			errs = append(errs, field.Invalid(meta.Child("name"), m.Name,
				fmt.Sprintf("services pod hostname %s would be longer than 63 characters", strings.Replace(host, m.Name, "<name>", 1))))
		}
	}

	if s.Network.HeadlessName != m.Name || len(validation.IsDNS1123Label(m.Name)) == 0 {
		// (A headless name defaulted from an invalid metadata.name is reported once, above.)
		errs = append(errs, validateNetwork(&s.Network, spec.Child("network"))...)
	}
	errs = append(errs, validateFlux(&s.Flux, s.Size, spec.Child("flux"))...)
	errs = append(errs, validatePod(&s.Pod, spec.Child("pod"))...)
	errs = append(errs, validateJobLabels(s.JobLabels, spec.Child("jobLabels"))...)
	if s.Archive.Path != "" && !path.IsAbs(s.Archive.Path) {
		errs = append(errs, field.Invalid(spec.Child("archive", "path"), s.Archive.Path, "must be an absolute path"))
	}

	// Containers.
	cp := spec.Child("containers")
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(cp, "at least one container is needed"))
	}
	reservedVolumes := []string{VolumeSoftware, VolumeHome, VolumeEntrypoint, VolumeCurve, s.Flux.Container.Name}
	if opts.ViewSource == ViewSourceImageVolume {
		reservedVolumes = append(reservedVolumes, VolumeViewImage)
	}
	var runFlux []string
	names := map[string]string{
		s.Flux.Container.Name: "spec.flux.container.name (the flux-view init container)",
		m.Name:                "the broker container (named after the MiniCluster)",
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		p := cp.Index(i)
		if c.RunFlux {
			runFlux = append(runFlux, p.String())
			if c.Command != "" && c.Commands.Script != "" {
				errs = append(errs, field.Invalid(p.Child("commands", "script"), "<script>", "set either command or commands.script on the runFlux container, not both"))
			} else if c.Command != "" && !c.Batch {
				// (A batch command's lines are written into a batch script as they are.)
				errs = append(errs, validateBrokerCommand(c.Command, p.Child("command"))...)
			}
		} else {
			if c.Name == "" {
				errs = append(errs, field.Required(p.Child("name"), "containers without runFlux need a name"))
			}
			if !c.NoWrapEntrypoint && c.Commands.Script == "" {
				// The sidecar's start script runs its command as shell code.
				errs = append(errs, validateShell(c.Command, p.Child("command"))...)
			}
		}
		name := c.Name
		if c.RunFlux {
			// The operator renames the broker container to the MiniCluster name, checked above.
			name = ""
		}
		errs = append(errs, validateContainer(c, p, name, names, reservedVolumes)...)
		// (Names that are not DNS labels at all are reported once, above.)
		if !c.RunFlux && len(c.Ports) > 0 && len(validation.IsDNS1123Label(m.Name)) == 0 && len(validation.IsDNS1123Label(c.Name)) == 0 {
			svc := PortServiceName(m.Name, c.Name)
			for _, msg := range validation.IsDNS1035Label(svc) {
				errs = append(errs, field.Invalid(p.Child("name"), c.Name,
					fmt.Sprintf("with ports, the container gets the Service <metadata.name>-<name> %q, which must be a DNS-1035 label: %s", svc, msg)))
			}
		}
	}
	if len(s.Containers) > 0 && len(runFlux) != 1 {
		if len(runFlux) == 0 {
			errs = append(errs, field.Required(cp, "exactly one container needs runFlux: true (with several containers it is not inferred)"))
		} else {
			errs = append(errs, field.Invalid(cp, strings.Join(runFlux, ", "), "exactly one container may set runFlux: true"))
		}
	}

	// Services run in their own pod.
	sp := spec.Child("services")
	svcNames := map[string]string{}
	for i := range s.Services {
		c := &s.Services[i]
		p := sp.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "services need a name"))
		}
		if c.RunFlux {
			errs = append(errs, field.Forbidden(p.Child("runFlux"), "services do not run a Flux broker"))
		}
		for field_, v := range map[string]string{"pre": c.Commands.Pre, "brokerPre": c.Commands.BrokerPre, "workerPre": c.Commands.WorkerPre} {
			if v != "" {
				errs = append(errs, field.Forbidden(p.Child("commands", field_), "not supported for services"))
			}
		}
		errs = append(errs, validateContainer(c, p, c.Name, svcNames, nil)...)
	}
	errs = append(errs, validateFluxText(&s.Flux, spec.Child("flux"))...)
	errs = append(errs, validateSharedVolumes(s.Containers, cp)...)
	errs = append(errs, validateSharedVolumes(s.Services, sp)...)
	sortErrors(errs)
	return errs
}

func validateNetwork(n *Network, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(n.HeadlessName) {
		errs = append(errs, field.Invalid(p.Child("headlessName"), n.HeadlessName, msg+" (it names the headless Service, defaulting to metadata.name)"))
	}
	return errs
}

// specSize is spec.size, which bursting clusters' sizes default to.
func validateFlux(f *FluxSpec, specSize int32, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.LogLevel != nil && (*f.LogLevel < 0 || *f.LogLevel > 7) {
		errs = append(errs, field.Invalid(p.Child("logLevel"), *f.LogLevel, "must be a syslog level from 0 to 7"))
	}
	if strings.ContainsAny(f.ConnectTimeout, " \t\n'\"") {
		errs = append(errs, field.Invalid(p.Child("connectTimeout"), f.ConnectTimeout, "must be a Flux duration such as 5s"))
	}
	for _, msg := range validation.IsDNS1123Label(f.Container.Name) {
		errs = append(errs, field.Invalid(p.Child("container", "name"), f.Container.Name, msg))
	}
	if !path.IsAbs(f.Container.MountPath) {
		errs = append(errs, field.Invalid(p.Child("container", "mountPath"), f.Container.MountPath, "must be an absolute path"))
	}
	if strings.TrimSpace(f.Container.Image) == "" {
		errs = append(errs, field.Required(p.Child("container", "image"), ""))
	} else {
		errs = append(errs, validateImage(f.Container.Image, p.Child("container", "image"))...)
	}
	b := &f.Bursting
	bp := p.Child("bursting")
	if b.Hostlist != "" && len(b.Clusters) > 0 {
		errs = append(errs, field.Forbidden(bp.Child("hostlist"), "set either bursting.hostlist or bursting.clusters, not both"))
	}
	if lb := b.LeadBroker; lb != nil {
		lp := bp.Child("leadBroker")
		if lb.Address == "" {
			errs = append(errs, field.Required(lp.Child("address"), ""))
		}
		if lb.Name == "" {
			errs = append(errs, field.Required(lp.Child("name"), ""))
		}
		if lb.Size < 1 {
			errs = append(errs, field.Invalid(lp.Child("size"), lb.Size, "must be at least 1"))
		}
		if lb.Port < 1 || lb.Port > 65535 {
			errs = append(errs, field.Invalid(lp.Child("port"), lb.Port, "must be a TCP port"))
		}
	}
	// Two clusters of one name would list the same hostnames twice in broker.toml (ranks that
	// can never all connect); the operator accepts that silently.
	seen := map[string]int{}
	for i, c := range b.Clusters {
		if j, dup := seen[c.Name]; dup {
			errs = append(errs, field.Duplicate(bp.Child("clusters").Index(i).Child("name"),
				fmt.Sprintf("%s (also the name of bursting.clusters[%d]; an unnamed cluster is named burst-<index>)", c.Name, j)))
		}
		seen[c.Name] = i
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(bp.Child("clusters").Index(i).Child("name"), c.Name, msg))
		}
		// A size equal to an invalid spec.size was (most likely) defaulted from it, reported there.
		if c.Size < 1 && c.Size != specSize {
			errs = append(errs, field.Invalid(bp.Child("clusters").Index(i).Child("size"), c.Size, "must be at least 1"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
		for _, msg := range validation.IsEnvVarName(k) {
			errs = append(errs, field.Invalid(p.Child("environment").Key(k), k, msg))
		}
	}
	return errs
}

func validatePod(ps *PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch ps.RestartPolicy {
	case "OnFailure", "Never":
	default:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), ps.RestartPolicy, []string{"OnFailure", "Never"}))
	}
	switch ps.DNSPolicy {
	case "", "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None":
	default:
		errs = append(errs, field.NotSupported(p.Child("dnsPolicy"), ps.DNSPolicy, []string{"ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"}))
	}
	if ps.ServiceAccountName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(ps.ServiceAccountName) {
			errs = append(errs, field.Invalid(p.Child("serviceAccountName"), ps.ServiceAccountName, msg))
		}
	}
	for i, t := range ps.Tolerations {
		switch corev1.TolerationOperator(t.Operator) {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			errs = append(errs, field.NotSupported(p.Child("tolerations").Index(i).Child("operator"), t.Operator, []string{"Equal", "Exists"}))
		}
		switch corev1.TaintEffect(t.Effect) {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(p.Child("tolerations").Index(i).Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	return append(errs, validateLabels(ps.Labels, p.Child("labels"))...)
}

// validateLabels: keys and values the API server takes as labels.
func validateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Key(k), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(p.Key(k), labels[k], msg))
		}
	}
	return errs
}

// validateJobLabels: spec.jobLabels are labels of the broker Job; Kueue's webhook also rejects a
// Job whose queue or priority class label does not name an object (a DNS-1123 subdomain).
func validateJobLabels(labels map[string]string, p *field.Path) field.ErrorList {
	errs := validateLabels(labels, p)
	for _, k := range []string{kueueconstants.QueueLabel, kueueconstants.WorkloadPriorityClassLabel} {
		if v, ok := labels[k]; ok && len(validation.IsValidLabelValue(v)) == 0 {
			for _, msg := range validation.IsDNS1123Subdomain(v) {
				errs = append(errs, field.Invalid(p.Key(k), v, "Kueue takes it as the name of a "+kueueObject[k]+": "+msg))
			}
		}
	}
	return errs
}

// kueueObject is what each of Kueue's labels names.
var kueueObject = map[string]string{
	kueueconstants.QueueLabel:                 "LocalQueue",
	kueueconstants.WorkloadPriorityClassLabel: "WorkloadPriorityClass",
}

// validateContainer checks one entry of containers[] or services[]; seen tracks container names
// within one pod (names must be unique there).
func validateContainer(c *MiniClusterContainer, p *field.Path, name string, seen map[string]string, reserved []string) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(c.Image) == "" {
		errs = append(errs, field.Required(p.Child("image"), "every container needs an image"))
	} else {
		errs = append(errs, validateImage(c.Image, p.Child("image"))...)
	}
	if name != "" {
		for _, msg := range validation.IsDNS1123Label(name) {
			errs = append(errs, field.Invalid(p.Child("name"), name, msg))
		}
		if other, dup := seen[name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), name+" (also used by "+other+")"))
		}
		seen[name] = p.String()
	}
	errs = append(errs, validateCommands(&c.Commands, p.Child("commands"))...)
	if c.Launcher && c.Batch {
		errs = append(errs, field.Forbidden(p.Child("batch"), "launcher and batch cannot both be true"))
	}
	switch c.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy, []string{"Always", "IfNotPresent", "Never"}))
	}
	for i, port := range c.Ports {
		if port < 1 || port > 65535 {
			errs = append(errs, field.Invalid(p.Child("ports").Index(i), port, "must be a TCP port from 1 to 65535"))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Environment)) {
		for _, msg := range validation.IsEnvVarName(k) {
			errs = append(errs, field.Invalid(p.Child("environment").Key(k), k, msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Secrets)) {
		sec := c.Secrets[k]
		sp := p.Child("secrets").Key(k)
		for _, msg := range validation.IsEnvVarName(k) {
			errs = append(errs, field.Invalid(sp, k, msg))
		}
		if sec.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), "the Secret to read"))
		}
		if sec.Key == "" {
			errs = append(errs, field.Required(sp.Child("key"), "the key in the Secret"))
		}
	}
	if c.Logs != "" && !path.IsAbs(c.Logs) {
		errs = append(errs, field.Invalid(p.Child("logs"), c.Logs, "must be an absolute path"))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Volumes)) {
		errs = append(errs, validateVolume(c.Volumes[k], p.Child("volumes").Key(k), k)...)
		if slices.Contains(reserved, k) {
			errs = append(errs, field.Invalid(p.Child("volumes").Key(k), k, "this volume name is used by the generated pod itself; choose another key"))
		}
	}
	return errs
}

// EmptyDirDefaultPath is where an emptyDir volume without a path is mounted, as the operator does.
const EmptyDirDefaultPath = "/dev/shm"

// MountPath is where the volume is mounted in the container.
func (v ContainerVolume) MountPath() string {
	if v.Path == "" && v.EmptyDir {
		return EmptyDirDefaultPath
	}
	return v.Path
}

// VolumeSource says which kind of source a container volume uses, resolving the operator's
// precedence (csiDriver > secretName > emptyDir > hostPath > configMapName > claimName). A volume
// with only a path is an emptyDir here; the operator made a claim with an empty name of it.
func (v ContainerVolume) VolumeSource() string {
	switch {
	case v.CSIDriver != "":
		return "csiDriver"
	case v.SecretName != "":
		return "secretName"
	case v.EmptyDir:
		return "emptyDir"
	case v.HostPath != "":
		return "hostPath"
	case v.ConfigMapName != "":
		return "configMapName"
	case v.ClaimName != "":
		return "claimName"
	}
	return "path"
}

func validateVolume(v ContainerVolume, p *field.Path, key string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(key) {
		errs = append(errs, field.Invalid(p, key, msg+" (the key names the pod volume)"))
	}
	var sources []string
	for name, set := range map[string]bool{
		"csiDriver": v.CSIDriver != "", "secretName": v.SecretName != "", "emptyDir": v.EmptyDir,
		"hostPath": v.HostPath != "", "configMapName": v.ConfigMapName != "", "claimName": v.ClaimName != "",
	} {
		if set {
			sources = append(sources, name)
		}
	}
	sort.Strings(sources)
	if len(sources) > 1 {
		errs = append(errs, field.Invalid(p, strings.Join(sources, "+"), "set exactly one volume source, found "+strings.Join(sources, " and ")))
	}
	if v.Path == "" && !v.EmptyDir {
		// The operator requires a path for claims and host paths; every source but emptyDir (which
		// the operator always mounts at /dev/shm) needs one to be mounted.
		errs = append(errs, field.Required(p.Child("path"), "where the volume is mounted in the container"))
	} else if v.Path != "" && !path.IsAbs(v.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), v.Path, "must be an absolute path"))
	}
	if v.HostPath != "" && !path.IsAbs(v.HostPath) {
		errs = append(errs, field.Invalid(p.Child("hostPath"), v.HostPath, "must be an absolute path"))
	}
	if len(v.Items) > 0 && v.ConfigMapName == "" && v.SecretName == "" {
		errs = append(errs, field.Forbidden(p.Child("items"), "items only apply to configMapName or secretName volumes"))
	}
	for _, k := range slices.Sorted(maps.Keys(v.Items)) {
		if it := v.Items[k]; it == "" || path.IsAbs(it) || strings.Contains(it, "..") {
			errs = append(errs, field.Invalid(p.Child("items").Key(k), it, "must be a relative path without '..'"))
		}
	}
	switch strings.ToLower(v.EmptyDirMedium) {
	case "", "memory":
	default:
		errs = append(errs, field.NotSupported(p.Child("emptyDirMedium"), v.EmptyDirMedium, []string{"memory"}))
	}
	if v.EmptyDirSizeLimit != "" {
		if _, err := resource.ParseQuantity(v.EmptyDirSizeLimit); err != nil {
			errs = append(errs, field.Invalid(p.Child("emptyDirSizeLimit"), v.EmptyDirSizeLimit, "must be a quantity such as 64Gi"))
		}
	}
	if (v.EmptyDirMedium != "" || v.EmptyDirSizeLimit != "") && !v.EmptyDir {
		errs = append(errs, field.Invalid(p.Child("emptyDir"), false, "emptyDirMedium and emptyDirSizeLimit need emptyDir: true"))
	}
	if len(v.CSIDriverAttributes) > 0 && v.CSIDriver == "" {
		errs = append(errs, field.Forbidden(p.Child("csiDriverAttributes"), "only apply with csiDriver"))
	}
	return errs
}

// validateSharedVolumes rejects one volume key defined two different ways in the same pod: the
// operator de-duplicates by key and silently keeps one of them.
func validateSharedVolumes(cs []MiniClusterContainer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := map[string]int{}
	for i, c := range cs {
		for _, k := range slices.Sorted(maps.Keys(c.Volumes)) {
			j, seen := first[k]
			if !seen {
				first[k] = i
				continue
			}
			a, b := cs[j].Volumes[k], c.Volumes[k]
			a.Path, b.Path, a.ReadOnly, b.ReadOnly = "", "", false, false
			if !reflect.DeepEqual(a, b) {
				errs = append(errs, field.Invalid(p.Index(i).Child("volumes").Key(k), k,
					fmt.Sprintf("volume %q is defined differently in %s; one pod volume cannot have two sources", k, p.Index(j).Child("volumes").Key(k))))
			}
		}
	}
	return errs
}

func sortErrors(errs field.ErrorList) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
}
