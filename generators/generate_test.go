package generators

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// miniCluster decodes, defaults and validates a MiniCluster the way fn does.
func miniCluster(t *testing.T, doc string) (*v1alpha2.MiniCluster, v1alpha2.Options) {
	t.Helper()
	mc, errs := v1alpha2.Decode([]byte(doc))
	if len(errs) > 0 {
		t.Fatalf("decode: %v", errs)
	}
	mc.Default()
	opts, errs := mc.ParseOptions()
	errs = append(errs, mc.Validate(opts)...)
	if len(errs) > 0 {
		t.Fatalf("validate: %v", errs)
	}
	return mc, opts
}

func generate(t *testing.T, doc string) ([]Object, []Warning) {
	t.Helper()
	mc, opts := miniCluster(t, doc)
	objs, warns, err := Generate(mc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return objs, warns
}

func find[T Object](objs []Object, pred func(T) bool) []T {
	var out []T
	for _, o := range objs {
		if typed, ok := o.(T); ok && (pred == nil || pred(typed)) {
			out = append(out, typed)
		}
	}
	return out
}

func brokerJobOf(t *testing.T, objs []Object) *batchv1.Job {
	t.Helper()
	jobs := find(objs, func(j *batchv1.Job) bool { return j.Labels[contract.LabelComponent] == contract.ComponentBroker })
	if len(jobs) != 1 {
		t.Fatalf("want one broker Job, got %d", len(jobs))
	}
	return jobs[0]
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const helloWorld = `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
  size: 4
  logging: {quiet: true}
  containers:
    - image: ubuntu:noble
      command: echo hello world
`

func TestBrokerJobShape(t *testing.T) {
	t.Parallel()
	objs, _ := generate(t, helloWorld)
	job := brokerJobOf(t, objs)
	if *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Completions != 4 || *job.Spec.Parallelism != 4 {
		t.Errorf("want an Indexed Job with completions = parallelism = 4, got %s", toJSON(t, job.Spec))
	}
	if !regexp.MustCompile(`^flux-sample-[0-9a-f]{8}$`).MatchString(job.Name) {
		t.Errorf("job name %q is not <name>-<hash>", job.Name)
	}
	if job.Spec.TTLSecondsAfterFinished != nil {
		t.Error("no TTL: GitOps would re-create a deleted Job")
	}
	pod := job.Spec.Template.Spec
	if pod.Subdomain != "flux-sample" || *pod.SetHostnameAsFQDN || *pod.AutomountServiceAccountToken {
		t.Errorf("subdomain %q, setHostnameAsFQDN %v, automount %v", pod.Subdomain, *pod.SetHostnameAsFQDN, *pod.AutomountServiceAccountToken)
	}
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != "flux-view" {
		t.Errorf("want the flux-view init container, got %s", toJSON(t, pod.InitContainers))
	}
	broker := pod.Containers[0]
	if broker.Name != "flux-sample" || !slices.Equal(broker.Command, []string{"/bin/bash", "/flux_operator/wait-0.sh"}) {
		t.Errorf("broker container %q runs %v", broker.Name, broker.Command)
	}
	svcs := find(objs, func(s *corev1.Service) bool { return s.Labels[contract.LabelComponent] == contract.ComponentHeadless })
	if len(svcs) != 1 || svcs[0].Spec.ClusterIP != corev1.ClusterIPNone || !svcs[0].Spec.PublishNotReadyAddresses {
		t.Fatalf("want one headless Service publishing not-ready addresses, got %s", toJSON(t, svcs))
	}
	for k, v := range svcs[0].Spec.Selector {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not match the broker pods", k, v)
		}
	}
	if _, ok := svcs[0].Spec.Selector["job-name"]; ok {
		t.Error("the Service must not select on job-name: the Job name changes with its hash")
	}
}

func TestEveryObjectHasRecommendedLabelsAndWave(t *testing.T) {
	t.Parallel()
	objs, _ := generate(t, strings.Replace(helloWorld, "  containers:", "  services:\n    - {name: db, image: postgres}\n  containers:", 1))
	waves := map[string]string{}
	for _, o := range objs {
		l := o.GetLabels()
		for _, k := range []string{contract.LabelMiniCluster, contract.LabelComponent, labelName, labelInstance, labelComponent, LabelManagedBy} {
			if l[k] == "" {
				t.Errorf("%T %s has no %s label", o, o.GetName(), k)
			}
		}
		if !contract.IsGenerated(l, "flux-sample") {
			t.Errorf("%T %s is not recognisable as generated", o, o.GetName())
		}
		waves[l[contract.LabelComponent]] = o.GetAnnotations()[argoSyncWave]
		if o.GetNamespace() != "" {
			t.Errorf("%T %s has namespace %q; output must be namespace-agnostic", o, o.GetName(), o.GetNamespace())
		}
	}
	if waves[contract.ComponentKeygen] != "-1" || waves[contract.ComponentEntrypoint] != "0" || waves[contract.ComponentBroker] != "1" {
		t.Errorf("sync waves must put keygen first and brokers last: %v", waves)
	}
}

func TestJobNameHash(t *testing.T) {
	t.Parallel()
	name := func(doc string) (string, string) {
		job := brokerJobOf(t, must(generate(t, doc)))
		for _, v := range job.Spec.Template.Spec.Volumes {
			if v.Name == volumeEntrypoint {
				return job.Name, v.ConfigMap.Name
			}
		}
		t.Fatal("the broker Job has no entrypoint volume")
		return "", ""
	}
	base, baseCM := name(helloWorld)
	if again, _ := name(helloWorld); again != base {
		t.Errorf("same input, different names %s %s", base, again)
	}
	for what, doc := range map[string]string{
		"command": strings.Replace(helloWorld, "echo hello world", "echo bye", 1),
		"image":   strings.Replace(helloWorld, "ubuntu:noble", "ubuntu:jammy", 1),
		"logging": strings.Replace(helloWorld, "quiet: true", "quiet: false", 1),
	} {
		if got, _ := name(doc); got == base {
			t.Errorf("changing the %s must give the Job a new name", what)
		}
	}
	elastic := strings.Replace(helloWorld, "size: 4", "size: 2\n  maxSize: 8", 1)
	grown := strings.Replace(helloWorld, "size: 4", "size: 6\n  maxSize: 8", 1)
	a, aCM := name(elastic)
	b, bCM := name(grown)
	if a != b || aCM != bCM {
		t.Errorf("a size change within maxSize must keep the Job and ConfigMap names: %s/%s vs %s/%s", a, aCM, b, bCM)
	}
	if baseCM != base+"-entrypoint" {
		t.Errorf("the entrypoint ConfigMap %q is named after the Job %q", baseCM, base)
	}
}

func TestStableJobName(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(helloWorld, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/job-naming: stable", 1)
	job := brokerJobOf(t, must(generate(t, doc)))
	if job.Name != "flux-sample" {
		t.Errorf("stable naming: job name %q", job.Name)
	}
	if job.Annotations[fluxcdForce] != "enabled" || job.Annotations[argoSyncOptions] != "Force=true,Replace=true" {
		t.Errorf("stable naming must ask Flux CD and Argo CD to replace the Job: %v", job.Annotations)
	}
}

// Operator bug 1: env, volumes, items and node affinity came out in Go map order.
func TestDeterministicMapOrder(t *testing.T) {
	t.Parallel()
	doc := `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: maps}
spec:
  pod:
    nodeAffinity: {zone: [a, b], arch: [amd64], disk: [ssd]}
  containers:
    - image: ubuntu
      environment: {Z: "1", A: "2", M: "3", B: "4", Y: "5"}
      secrets: {S2: {name: s, key: b}, S1: {name: s, key: a}}
      volumes:
        vz: {path: /z, hostPath: /z}
        va: {path: /a, hostPath: /a}
        vm: {path: /m, configMapName: cm, items: {k3: p3, k1: p1, k2: p2}}
`
	first := toJSON(t, must(generate(t, doc)))
	for range 30 {
		if got := toJSON(t, must(generate(t, doc))); got != first {
			t.Fatal("output changed between runs: map order leaks into the manifests")
		}
	}
	job := brokerJobOf(t, must(generate(t, doc)))
	var env []string
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env = append(env, e.Name)
	}
	if !slices.IsSorted(env[:5]) || !slices.Equal(env[5:], []string{"S1", "S2"}) {
		t.Errorf("env not sorted: %v", env)
	}
}

// Operator bug 2: a ConfigMap volume was named after the ConfigMap but mounted by key.
func TestConfigMapVolumeNamedByKey(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(helloWorld, "      command: echo hello world", `      command: echo hello world
      volumes:
        inputs: {path: /inputs, configMapName: lammps-config}`, 1)
	pod := brokerJobOf(t, must(generate(t, doc))).Spec.Template.Spec
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "inputs" {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil || vol.ConfigMap == nil || vol.ConfigMap.Name != "lammps-config" {
		t.Fatalf("want volume inputs from ConfigMap lammps-config, got %s", toJSON(t, pod.Volumes))
	}
	if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "inputs" && m.MountPath == "/inputs" }) {
		t.Error("the mount must use the same name as the volume")
	}
}

// Operator bug 3: a volume with only a path became a claim with an empty claimName.
func TestPathOnlyVolumeIsEmptyDir(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(helloWorld, "      command: echo hello world", `      command: echo hello world
      volumes:
        out: {path: /tmp/fluxout}`, 1)
	objs, warns := generate(t, doc)
	for _, v := range brokerJobOf(t, objs).Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Errorf("volume %s became a claim", v.Name)
		}
		if v.Name == "out" && v.EmptyDir == nil {
			t.Errorf("path-only volume must be an emptyDir, got %s", toJSON(t, v))
		}
	}
	if !slices.ContainsFunc(warns, func(w Warning) bool { return w.Field == "spec.containers[0].volumes[out]" }) {
		t.Errorf("want a warning about the path-only volume, got %v", warns)
	}
}

// Operator bug 4: container N also mounted the volumes of containers 0..N-1.
func TestMountsDoNotLeakAcrossContainers(t *testing.T) {
	t.Parallel()
	doc := `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: leak}
spec:
  containers:
    - image: ubuntu
      runFlux: true
      volumes: {data: {path: /data, hostPath: /data}}
    - image: nginx
      name: web
      volumes: {www: {path: /www, hostPath: /www}}
`
	pod := brokerJobOf(t, must(generate(t, doc))).Spec.Template.Spec
	has := func(c corev1.Container, name string) bool {
		return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name })
	}
	if !has(pod.Containers[0], "data") || has(pod.Containers[0], "www") {
		t.Error("broker container mounts: want data, not www")
	}
	if !has(pod.Containers[1], "www") || has(pod.Containers[1], "data") {
		t.Error("sidecar mounts: want www, not data")
	}
	if has(pod.Containers[1], volumeCurve) {
		t.Error("only the broker container mounts the certificate")
	}
}

// TestKeygenImage: by default the keygen Job runs the view image, which every broker pod pulls,
// with the script and a memory-backed emptyDir for the certificate; with flux.container.disable,
// the runFlux container's image, which holds flux then, with flux and python3 from its PATH; with
// the keygen-image option, the project image's keygen publish, as before.
func TestKeygenImage(t *testing.T) {
	withAnnotation := func(doc, annotation string) string {
		return strings.Replace(doc, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    "+annotation, 1)
	}
	private := strings.Replace(helloWorld, "    - image: ubuntu:noble\n",
		"    - image: registry.example/app:v1\n      imagePullSecret: app-pull\n      pullAlways: true\n", 1)
	disabled := strings.Replace(private, "  logging: {quiet: true}\n", "  logging: {quiet: true}\n  flux: {container: {image: ubuntu:focal, disable: true}}\n", 1)
	keygenPod := func(doc string) corev1.PodSpec {
		t.Helper()
		objs, _ := generate(t, doc)
		jobs := find(objs, func(j *batchv1.Job) bool { return j.Labels[contract.LabelComponent] == contract.ComponentKeygen })
		if len(jobs) != 1 {
			t.Fatalf("want one keygen Job, got %d", len(jobs))
		}
		return jobs[0].Spec.Template.Spec
	}
	script, err := keygenScript()
	if err != nil {
		t.Fatal(err)
	}
	memoryDir := []corev1.Volume{{Name: volumeKeygen, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}}}
	for name, tc := range map[string]struct {
		doc         string
		image       string
		policy      corev1.PullPolicy
		command     []string
		firstArgs   []string
		volumes     []corev1.Volume
		pullSecrets []corev1.LocalObjectReference
	}{
		"the view image": {private, "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", corev1.PullIfNotPresent,
			[]string{"/bin/sh", "-c", script, "keygen"}, []string{"--view", "/opt/view", "--work-dir", "/keygen"}, memoryDir,
			[]corev1.LocalObjectReference{{Name: "app-pull"}}},
		"flux.container.disable: the runFlux image": {disabled, "registry.example/app:v1", corev1.PullAlways,
			[]string{"/bin/sh", "-c", script, "keygen"}, []string{"--path", "--work-dir", "/keygen"}, memoryDir,
			[]corev1.LocalObjectReference{{Name: "app-pull"}}},
		"keygen-image": {withAnnotation(disabled, "minicluster-fn.dev/keygen-image: registry.example/keygen:v1"), "registry.example/keygen:v1", corev1.PullIfNotPresent,
			nil, []string{"keygen", "publish", "--output", "secret", "--name", "flux-sample"}, nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			pod := keygenPod(tc.doc)
			c := pod.Containers[0]
			if c.Image != tc.image || c.ImagePullPolicy != tc.policy {
				t.Errorf("image %s (%s), want %s (%s)", c.Image, c.ImagePullPolicy, tc.image, tc.policy)
			}
			if !slices.Equal(c.Command, tc.command) {
				t.Errorf("command %q, want %q", c.Command, tc.command)
			}
			if len(c.Args) < len(tc.firstArgs) || !slices.Equal(c.Args[:len(tc.firstArgs)], tc.firstArgs) {
				t.Errorf("args %q, want them to start with %q", c.Args, tc.firstArgs)
			}
			if toJSON(t, pod.Volumes) != toJSON(t, tc.volumes) || toJSON(t, pod.ImagePullSecrets) != toJSON(t, tc.pullSecrets) {
				t.Errorf("volumes %s, pull secrets %s; want %s, %s", toJSON(t, pod.Volumes), toJSON(t, pod.ImagePullSecrets), toJSON(t, tc.volumes), toJSON(t, tc.pullSecrets))
			}
			if len(tc.volumes) > 0 && (len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != volumeKeygen || c.VolumeMounts[0].MountPath != keygenWorkDir || c.VolumeMounts[0].ReadOnly) {
				t.Errorf("volume mounts %s, want the emptyDir writable at %s", toJSON(t, c.VolumeMounts), keygenWorkDir)
			}
			if !*c.SecurityContext.ReadOnlyRootFilesystem {
				t.Error("the keygen container's root file system is writable")
			}
		})
	}
}

// TestKeygenLeastPrivilege: the keygen Role may create the certificate object and read its owner
// Service. With a Secret (the default) it may not read any Secret back, not even the certificate:
// that would let it create a token Secret under that name and read the token.
func TestKeygenLeastPrivilege(t *testing.T) {
	t.Parallel()
	configMap := strings.Replace(helloWorld, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/curve-kind: ConfigMap", 1)
	getService := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{"flux-sample"}, Verbs: []string{"get"}}
	for name, tc := range map[string]struct {
		doc   string
		rules []rbacv1.PolicyRule
	}{
		"Secret": {helloWorld, []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			getService,
		}},
		"ConfigMap": {configMap, []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"flux-sample"}, Verbs: []string{"get"}},
			getService,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			objs, _ := generate(t, tc.doc)
			roles := find[*rbacv1.Role](objs, nil)
			if len(roles) != 1 {
				t.Fatalf("want one Role, got %d", len(roles))
			}
			if toJSON(t, roles[0].Rules) != toJSON(t, tc.rules) {
				t.Errorf("keygen Role rules:\n got %s\nwant %s", toJSON(t, roles[0].Rules), toJSON(t, tc.rules))
			}
			jobs := find(objs, func(j *batchv1.Job) bool { return j.Labels[contract.LabelComponent] == contract.ComponentKeygen })
			if len(jobs) != 1 {
				t.Fatalf("want one keygen Job, got %d", len(jobs))
			}
			pod := jobs[0].Spec.Template.Spec
			c := pod.Containers[0]
			if !*pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
				*c.SecurityContext.AllowPrivilegeEscalation || !slices.Equal(c.SecurityContext.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("keygen pod is not Pod Security restricted: %s", toJSON(t, pod))
			}
			wantArgs := []string{"--view", "/opt/view", "--work-dir", "/keygen", "--serviceaccount", "/var/run/secrets/kubernetes.io/serviceaccount",
				"--kind", name, "--name", "flux-sample", "--owner-service", "flux-sample",
				"--owner-job", "$(KEYGEN_JOB_NAME)", "--owner-job-uid", "$(KEYGEN_JOB_UID)", "--cert-name", "flux-sample",
				"--label", "app.kubernetes.io/component", "curve", "--label", "app.kubernetes.io/instance", "flux-sample",
				"--label", "app.kubernetes.io/managed-by", "minicluster-fn", "--label", "app.kubernetes.io/name", "minicluster",
				"--label", "minicluster-fn.dev/component", "curve", "--label", "minicluster-fn.dev/minicluster", "flux-sample"}
			if !slices.Equal(c.Args, wantArgs) {
				t.Errorf("keygen args %v, want %v", c.Args, wantArgs)
			}
			// The Job's name and UID come from the labels the Job controller puts on its pods; the
			// pod needs no right to read its Job.
			wantEnv := map[string]string{"KEYGEN_JOB_NAME": "metadata.labels['batch.kubernetes.io/job-name']",
				"KEYGEN_JOB_UID": "metadata.labels['batch.kubernetes.io/controller-uid']"}
			gotEnv := map[string]string{}
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
					gotEnv[e.Name] = e.ValueFrom.FieldRef.FieldPath
				}
			}
			if !maps.Equal(gotEnv, wantEnv) || len(c.Env) != len(wantEnv) {
				t.Errorf("keygen env %s, want the fields %v", toJSON(t, c.Env), wantEnv)
			}
			for _, sa := range find[*corev1.ServiceAccount](objs, nil) {
				if *sa.AutomountServiceAccountToken {
					t.Error("the ServiceAccount must not mount tokens by default")
				}
			}
			if len(find[*rbacv1.ClusterRole](objs, nil)) > 0 {
				t.Error("nothing cluster-wide")
			}
		})
	}
}

// TestViewMedium: the view volume is tmpfs for a cluster that ends with its command and has no
// memory limit; on disk when the broker Job runs until deleted or a container has a memory limit;
// the option decides over both.
func TestViewMedium(t *testing.T) {
	t.Parallel()
	annotate := func(doc, medium string) string {
		return strings.Replace(doc, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/view-medium: "+medium, 1)
	}
	interactive := strings.Replace(helloWorld, "  size: 4", "  size: 4\n  interactive: true", 1)
	noCommand := strings.Replace(helloWorld, "      command: echo hello world\n", "", 1)
	limited := func(resources string) string {
		return strings.Replace(helloWorld, "      command: echo hello world", "      command: echo hello world\n      resources: {limits: {"+resources+"}}", 1)
	}
	sidecar := strings.Replace(helloWorld, "      command: echo hello world\n", "      command: echo hello world\n      runFlux: true\n    - image: nginx\n      name: web\n", 1)
	initLimited := strings.Replace(helloWorld, "  size: 4", "  size: 4\n  flux:\n    container:\n      resources: {limits: {memory: 200Mi}}", 1)
	for name, tc := range map[string]struct {
		doc  string
		want corev1.StorageMedium
	}{
		"ends with its command":              {helloWorld, corev1.StorageMediumMemory},
		"interactive":                        {interactive, corev1.StorageMediumDefault},
		"a sidecar keeps the pods running":   {sidecar, corev1.StorageMediumDefault},
		"no command":                         {noCommand, corev1.StorageMediumDefault},
		"memory limit":                       {limited("memory: 1Gi"), corev1.StorageMediumDefault},
		"cpu limit only":                     {limited("cpu: 1"), corev1.StorageMediumMemory},
		"memory limit on the init container": {initLimited, corev1.StorageMediumDefault},
		"Memory over interactive":            {annotate(interactive, "Memory"), corev1.StorageMediumMemory},
		"Memory over a memory limit":         {annotate(limited("memory: 1Gi"), "Memory"), corev1.StorageMediumMemory},
		"Disk":                               {annotate(helloWorld, "Disk"), corev1.StorageMediumDefault},
	} {
		t.Run(name, func(t *testing.T) {
			objs, _ := generate(t, tc.doc)
			pod := brokerJobOf(t, objs).Spec.Template.Spec
			for _, v := range pod.Volumes {
				if v.Name == pod.InitContainers[0].VolumeMounts[0].Name {
					if v.EmptyDir == nil || v.EmptyDir.Medium != tc.want || v.EmptyDir.SizeLimit != nil {
						t.Errorf("view volume %s, want an emptyDir of medium %q", toJSON(t, v), tc.want)
					}
					return
				}
			}
			t.Fatal("no view volume")
		})
	}
}

// TestViewSource: with view-source ImageVolume the broker pod has an image volume of the view
// image, which every container mounts read-only in the view volume, and all but the init
// container also its software at /opt/software. A pod with sidecars keeps its init container; a
// lone broker's pod has none (its broker script does that work). By default there is no image
// volume.
func TestViewSource(t *testing.T) {
	t.Parallel()
	const view = "ghcr.io/converged-computing/flux-view-rocky:tag-9"
	doc := strings.Replace(helloWorld, "  size: 4", "  size: 4\n  flux:\n    container:\n      image: "+view+"\n      pullAlways: true", 1)
	sidecar := strings.Replace(doc, "      command: echo hello world\n", "      command: echo hello world\n      runFlux: true\n    - image: nginx\n      name: web\n", 1)
	imageVolume := func(doc string) string {
		return strings.Replace(doc, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/view-source: ImageVolume", 1)
	}
	imageMounts := func(c corev1.Container) []corev1.VolumeMount {
		var out []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if m.Name == "flux-view-image" {
				out = append(out, m)
			}
		}
		return out
	}
	t.Run("Copy", func(t *testing.T) {
		objs, _ := generate(t, sidecar)
		pod := brokerJobOf(t, objs).Spec.Template.Spec
		for _, v := range pod.Volumes {
			if v.Image != nil {
				t.Errorf("image volume %s without the option", toJSON(t, v))
			}
		}
	})
	t.Run("ImageVolume", func(t *testing.T) {
		objs, _ := generate(t, imageVolume(sidecar))
		pod := brokerJobOf(t, objs).Spec.Template.Spec
		var volume *corev1.ImageVolumeSource
		for _, v := range pod.Volumes {
			if v.Name == "flux-view-image" {
				volume = v.Image
			}
		}
		if volume == nil || volume.Reference != view || volume.PullPolicy != corev1.PullAlways {
			t.Fatalf("volumes %s, want flux-view-image: the image %s, pulled always", toJSON(t, pod.Volumes), view)
		}
		whole := corev1.VolumeMount{Name: "flux-view-image", MountPath: "/mnt/flux/view-image", ReadOnly: true}
		if len(pod.InitContainers) != 1 {
			t.Fatalf("%d init containers, want 1: the sidecar starts beside the broker and expects the view ready", len(pod.InitContainers))
		}
		if got := imageMounts(pod.InitContainers[0]); !equality.Semantic.DeepEqual(got, []corev1.VolumeMount{whole}) {
			t.Errorf("the init container mounts %s, want %s", toJSON(t, got), toJSON(t, whole))
		}
		want := []corev1.VolumeMount{
			whole,
			{Name: "flux-view-image", MountPath: "/opt/software", SubPath: "opt/software", ReadOnly: true},
		}
		for _, c := range pod.Containers {
			if got := imageMounts(c); !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("container %s mounts %s, want %s", c.Name, toJSON(t, got), toJSON(t, want))
			}
			for _, m := range c.VolumeMounts {
				if m.MountPath == "/opt/software" && m.Name != "flux-view-image" {
					t.Errorf("container %s also mounts %s at /opt/software", c.Name, m.Name)
				}
			}
		}
	})
	t.Run("ImageVolume, the broker alone", func(t *testing.T) {
		objs, _ := generate(t, imageVolume(doc))
		pod := brokerJobOf(t, objs).Spec.Template.Spec
		if len(pod.InitContainers) != 0 || len(pod.Containers) != 1 {
			t.Fatalf("%d init containers and %d containers, want the broker container alone", len(pod.InitContainers), len(pod.Containers))
		}
		if got := imageMounts(pod.Containers[0]); len(got) != 2 {
			t.Errorf("the broker container mounts %s, want the image and its software", toJSON(t, got))
		}
	})
}

// TestCurveSources: where the broker pods get the certificate from, for each way of giving it.
func TestCurveSources(t *testing.T) {
	t.Parallel()
	// A test key (minicluster-fn keygen), used nowhere else.
	inline := strings.Replace(helloWorld, "  size: 4", "  size: 4\n  flux:\n    curveCert: |\n      metadata\n          name = \"x\"\n"+
		"      curve\n          public-key = \"c}NG4WENO2G^QC(hmSa^X{2e@*[:Jsy-?4E+0hm&\"\n          secret-key = \"2>z28r<BA2.pj0i)fwwlZvr}a!@d0dLl>ycW$eWI\"\n", 1)
	withKind := func(doc, kind string) string {
		return strings.Replace(doc, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/curve-kind: "+kind, 1)
	}
	// curveVolume is the broker pods' certificate volume, which must give the file mode 0400.
	curveVolume := func(t *testing.T, objs []Object) corev1.Volume {
		t.Helper()
		for _, v := range brokerJobOf(t, objs).Spec.Template.Spec.Volumes {
			if v.Name == volumeCurve {
				return v
			}
		}
		t.Fatal("no certificate volume")
		return corev1.Volume{}
	}
	keygenRuns := func(objs []Object) bool { return len(find[*rbacv1.Role](objs, nil)) == 1 }
	secretNamed := func(name string) func(*corev1.Secret) bool {
		return func(s *corev1.Secret) bool { return s.Name == name }
	}
	configMapNamed := func(name string) func(*corev1.ConfigMap) bool {
		return func(c *corev1.ConfigMap) bool { return c.Name == name }
	}

	t.Run("keygen, Secret by default", func(t *testing.T) {
		objs, _ := generate(t, helloWorld)
		v := curveVolume(t, objs)
		if !keygenRuns(objs) || v.Secret == nil || v.Secret.SecretName != "flux-sample" || *v.Secret.DefaultMode != 0o400 || *v.Secret.Items[0].Mode != 0o400 {
			t.Errorf("keygen objects %v, curve volume %s; want the keygen Job and Secret flux-sample, mode 0400", keygenRuns(objs), toJSON(t, v))
		}
	})
	t.Run("keygen, ConfigMap", func(t *testing.T) {
		objs, _ := generate(t, withKind(helloWorld, "ConfigMap"))
		v := curveVolume(t, objs)
		if !keygenRuns(objs) || v.ConfigMap == nil || v.ConfigMap.Name != "flux-sample" || *v.ConfigMap.DefaultMode != 0o400 || *v.ConfigMap.Items[0].Mode != 0o400 {
			t.Errorf("keygen objects %v, curve volume %s; want the keygen Job and ConfigMap flux-sample, mode 0400", keygenRuns(objs), toJSON(t, v))
		}
	})
	t.Run("inline, Secret by default", func(t *testing.T) {
		objs, _ := generate(t, inline)
		secrets := find(objs, secretNamed("flux-sample"))
		if keygenRuns(objs) || len(secrets) != 1 || secrets[0].Type != corev1.SecretTypeOpaque ||
			!strings.Contains(string(secrets[0].Data[CurveCertKey]), `name = "x"`) || len(find(objs, configMapNamed("flux-sample"))) != 0 {
			t.Errorf("want the inline certificate in Secret flux-sample only, got %s", toJSON(t, secrets))
		}
		if v := curveVolume(t, objs); v.Secret == nil || v.Secret.SecretName != "flux-sample" {
			t.Errorf("curve volume %s, want Secret flux-sample", toJSON(t, v))
		}
	})
	t.Run("inline, ConfigMap", func(t *testing.T) {
		objs, _ := generate(t, withKind(inline, "ConfigMap"))
		cms := find(objs, configMapNamed("flux-sample"))
		if keygenRuns(objs) || len(cms) != 1 || !strings.Contains(cms[0].Data[CurveCertKey], `name = "x"`) || len(find(objs, secretNamed("flux-sample"))) != 0 {
			t.Errorf("want the inline certificate in ConfigMap flux-sample only, got %s", toJSON(t, cms))
		}
		if v := curveVolume(t, objs); v.ConfigMap == nil || v.ConfigMap.Name != "flux-sample" {
			t.Errorf("curve volume %s, want ConfigMap flux-sample", toJSON(t, v))
		}
	})
	t.Run("the user's Secret", func(t *testing.T) {
		secret := strings.Replace(helloWorld, "  name: flux-sample", "  name: flux-sample\n  annotations:\n    minicluster-fn.dev/curve-secret: my-cert", 1)
		objs, _ := generate(t, secret)
		if keygenRuns(objs) || len(find(objs, configMapNamed("flux-sample"))) != 0 || len(find(objs, secretNamed("flux-sample"))) != 0 {
			t.Error("a referenced Secret needs no keygen objects and no certificate object")
		}
		if v := curveVolume(t, objs); v.Secret == nil || v.Secret.SecretName != "my-cert" || *v.Secret.Items[0].Mode != 0o400 {
			t.Errorf("curve volume: %s", toJSON(t, v))
		}
	})
}

func TestServicesPodAndPortServices(t *testing.T) {
	t.Parallel()
	doc := `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: svc}
spec:
  services:
    - {name: registry, image: registry, ports: [5000]}
  containers:
    - {image: ubuntu, runFlux: true}
    - {image: nginx, name: nginx, noWrapEntrypoint: true, ports: [80, 443]}
`
	objs, _ := generate(t, doc)
	pods := find[*corev1.Pod](objs, nil)
	if len(pods) != 1 || pods[0].Spec.Hostname != "svc-services" || pods[0].Spec.Subdomain != "svc" {
		t.Fatalf("services pod: %s", toJSON(t, pods))
	}
	if pods[0].Spec.Containers[0].Command != nil {
		t.Error("services keep their image's entrypoint")
	}
	// Named after the MiniCluster too, so two MiniClusters with an nginx sidecar do not collide.
	port := find(objs, func(s *corev1.Service) bool { return s.Name == "svc-nginx" })
	if len(port) != 1 || len(port[0].Spec.Ports) != 2 || port[0].Spec.ClusterIP != "" {
		t.Errorf("want ClusterIP Service svc-nginx with two ports, got %s", toJSON(t, port))
	}
	job := brokerJobOf(t, objs)
	if job.Spec.Template.Spec.Containers[1].Command != nil {
		t.Error("noWrapEntrypoint keeps the image's entrypoint")
	}
}

func TestMinimalService(t *testing.T) {
	t.Parallel()
	doc := strings.Replace(helloWorld, "  size: 4", "  size: 4\n  flux: {minimalService: true}", 1)
	svcs := find(must(generate(t, doc)), func(s *corev1.Service) bool { return s.Labels[contract.LabelComponent] == contract.ComponentHeadless })
	if svcs[0].Spec.Selector[jobCompletionIndexLabel] != "0" || svcs[0].Spec.Ports[0].Port != 8050 {
		t.Errorf("minimal service must select rank 0 on port 8050: %s", toJSON(t, svcs[0].Spec))
	}
}

func TestCleanupWarns(t *testing.T) {
	t.Parallel()
	_, warns := generate(t, strings.Replace(helloWorld, "  size: 4", "  size: 4\n  cleanup: true", 1))
	if !slices.ContainsFunc(warns, func(w Warning) bool { return w.Field == "spec.cleanup" && strings.Contains(w.Message, "Git") }) {
		t.Errorf("want a warning that says what to do instead of cleanup, got %v", warns)
	}
}

func must[T any, U any](v T, _ U) T { return v }

// TestScriptsNotSubstitutedByFluxCD: Flux CD's postBuild substitution replaces ${var} with the
// empty string when var is not defined, which would break every script; the objects that hold
// scripts (the entrypoint ConfigMap, the keygen Job) opt out, and no other object has ${ in it to
// protect.
func TestScriptsNotSubstitutedByFluxCD(t *testing.T) {
	t.Parallel()
	objs, _ := generate(t, helloWorld)
	optedOut := 0
	for _, obj := range objs {
		if got := obj.GetAnnotations()[fluxcdSubstitute]; got == fluxcdSubstituteDisabled {
			optedOut++
			continue
		}
		if text := toJSON(t, obj); strings.Contains(text, "${") {
			t.Errorf("%T %s has ${ in it but no %s: %s annotation", obj, obj.GetName(), fluxcdSubstitute, fluxcdSubstituteDisabled)
		}
	}
	if optedOut != 2 {
		t.Errorf("%d objects opt out of Flux CD's substitution, want the entrypoint ConfigMap and the keygen Job", optedOut)
	}
}

// TestServicesPodPullSecrets: the operator gives the services Pod spec.containers' pull secrets,
// ours took only services[].imagePullSecret; a private services image must pull under both.
func TestServicesPodPullSecrets(t *testing.T) {
	t.Parallel()
	doc := `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: svc}
spec:
  services:
    - {name: registry, image: private.example/registry, imagePullSecret: svc-pull}
  containers:
    - {image: private.example/app, runFlux: true, imagePullSecret: app-pull}
    - {image: nginx, name: nginx, imagePullSecret: svc-pull}
`
	objs, _ := generate(t, doc)
	pods := find[*corev1.Pod](objs, nil)
	if len(pods) != 1 {
		t.Fatalf("want one services pod, got %d", len(pods))
	}
	var got []string
	for _, s := range pods[0].Spec.ImagePullSecrets {
		got = append(got, s.Name)
	}
	if want := []string{"app-pull", "svc-pull"}; !slices.Equal(got, want) {
		t.Errorf("services pod imagePullSecrets = %v, want %v", got, want)
	}
}

// TestStdinTTY: the operator's containers have stdin and a TTY (kubectl attach -it; line-buffered
// output of programs under flux start); ours too, in the broker pods and the services Pod.
func TestStdinTTY(t *testing.T) {
	t.Parallel()
	doc := `
apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata: {name: tty}
spec:
  services:
    - {name: registry, image: registry}
  containers:
    - {image: ubuntu, runFlux: true}
    - {image: nginx, name: nginx, noWrapEntrypoint: true}
`
	objs, _ := generate(t, doc)
	spec := brokerJobOf(t, objs).Spec.Template.Spec
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	for _, p := range find[*corev1.Pod](objs, nil) {
		containers = append(containers, p.Spec.Containers...)
	}
	if len(containers) != 4 {
		t.Fatalf("want 4 containers (view, broker, sidecar, service), got %d", len(containers))
	}
	for _, c := range containers {
		if !c.Stdin || !c.TTY {
			t.Errorf("container %s: stdin %v, tty %v; want both true as with the operator", c.Name, c.Stdin, c.TTY)
		}
	}
}

// TestNotesSayWhenASizeChangeReplacesTheCluster: a MiniCluster that runs until deleted gets a note
// exactly when a change of its size renames the broker Job (GitOps prune then replaces the running
// cluster); a MiniCluster that runs a command gets none, since its new Job reruns the command.
func TestNotesSayWhenASizeChangeReplacesTheCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec       string
		persistent, note bool
	}{
		{"interactive", "  interactive: true\n  containers: [{image: a, command: hostname}]\n", true, true},
		{"no command", "  containers: [{image: a}]\n", true, true},
		{"script", "  containers: [{image: a, commands: {script: hostname}}]\n", false, false},
		{"interactive with maxSize", "  maxSize: 8\n  interactive: true\n  containers: [{image: a}]\n", true, false},
		{"command", "  containers: [{image: a, command: hostname}]\n", false, false},
		{"hand-written host list", "  interactive: true\n  flux: {bursting: {hostlist: 's-[0-7]'}}\n  containers: [{image: a}]\n", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := func(size int) string {
				return fmt.Sprintf("apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: s}\nspec:\n  size: %d\n%s", size, tc.spec)
			}
			notes := Notes(miniCluster(t, doc(4)))
			if got := len(notes) == 1 && notes[0].Field == "spec.maxSize" && strings.Contains(notes[0].Message, "set spec.maxSize"); got != tc.note {
				t.Errorf("want a note on spec.maxSize: %v, got %v", tc.note, notes)
			}
			renamed := brokerJobOf(t, must(generate(t, doc(4)))).Name != brokerJobOf(t, must(generate(t, doc(5)))).Name
			if tc.note != (renamed && tc.persistent) {
				t.Errorf("size 4 to 5 renames the Job: %v; the note must say so exactly for a cluster that runs until deleted", renamed)
			}
		})
	}

	// With stable names the Job keeps its name, but the host list that running brokers read at
	// start changes in place: the note says that instead.
	stable := func(size int) string {
		return fmt.Sprintf("apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: s\n  annotations: {minicluster-fn.dev/job-naming: stable}\n"+
			"spec:\n  size: %d\n  interactive: true\n  containers: [{image: a}]\n", size)
	}
	notes := Notes(miniCluster(t, stable(4)))
	if len(notes) != 1 || !strings.Contains(notes[0].Message, "host list") || strings.Contains(notes[0].Message, "rename") {
		t.Errorf("stable names: want a note on the host list, got %v", notes)
	}
	entrypoint := func(size int) string {
		cms := find(must(generate(t, stable(size))), func(c *corev1.ConfigMap) bool {
			return c.Labels[contract.LabelComponent] == contract.ComponentEntrypoint
		})
		return cms[0].Name + "\n" + cms[0].Data[BrokerConfigKey]
	}
	if brokerJobOf(t, must(generate(t, stable(4)))).Name != "s" || entrypoint(4) == entrypoint(5) ||
		!strings.HasPrefix(entrypoint(5), "s-entrypoint\n") {
		t.Errorf("stable names: want the Job and ConfigMap names kept and broker.toml changed from size 4 to 5:\n%s\n%s", entrypoint(4), entrypoint(5))
	}
}

// A failed command fails the broker Job (failed-command Fail, the default): its pods are never
// restarted in place, and the pod failure policy fails the Job on the broker container's status
// unless the pod was disrupted or the status is exitPodRetry. The option Complete, and a cluster
// that runs until deleted, keep the operator's Job.
func TestFailedCommandJob(t *testing.T) {
	t.Parallel()
	withAnnotation := func(v string) string {
		return strings.Replace(helloWorld, "  name: flux-sample\n", "  name: flux-sample\n  annotations:\n    "+v1alpha2.FailedCommandAnnotation+": "+v+"\n", 1)
	}
	interactive := strings.Replace(helloWorld, "  size: 4\n", "  size: 4\n  interactive: true\n", 1)
	wantPolicy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionCount, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: new("flux-sample"), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{143},
		}},
	}}
	for _, tc := range []struct {
		name    string
		doc     string
		policy  *batchv1.PodFailurePolicy
		restart corev1.RestartPolicy
		message corev1.TerminationMessagePolicy
	}{
		{name: "default", doc: helloWorld, policy: wantPolicy, restart: corev1.RestartPolicyNever, message: corev1.TerminationMessageFallbackToLogsOnError},
		{name: "Fail", doc: withAnnotation("Fail"), policy: wantPolicy, restart: corev1.RestartPolicyNever, message: corev1.TerminationMessageFallbackToLogsOnError},
		{name: "Complete", doc: withAnnotation("Complete"), restart: corev1.RestartPolicyOnFailure},
		{name: "interactive", doc: interactive, restart: corev1.RestartPolicyOnFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := brokerJobOf(t, func() []Object { objs, _ := generate(t, tc.doc); return objs }())
			if !equality.Semantic.DeepEqual(job.Spec.PodFailurePolicy, tc.policy) {
				t.Errorf("podFailurePolicy %s, want %s", toJSON(t, job.Spec.PodFailurePolicy), toJSON(t, tc.policy))
			}
			pod := job.Spec.Template.Spec
			if pod.RestartPolicy != tc.restart {
				t.Errorf("restartPolicy %q, want %q", pod.RestartPolicy, tc.restart)
			}
			broker := pod.Containers[0]
			if broker.TerminationMessagePolicy != tc.message {
				t.Errorf("terminationMessagePolicy %q, want %q", broker.TerminationMessagePolicy, tc.message)
			}
			if tc.message != "" && broker.TerminationMessagePath != terminationLogPath {
				t.Errorf("terminationMessagePath %q, want %q, where the broker script writes", broker.TerminationMessagePath, terminationLogPath)
			}
		})
	}
	if a, b := brokerJobOf(t, func() []Object { o, _ := generate(t, helloWorld); return o }()), brokerJobOf(t, func() []Object { o, _ := generate(t, withAnnotation("Complete")); return o }()); a.Name == b.Name {
		t.Errorf("the option does not change the broker Job's name %s (its podFailurePolicy is immutable)", a.Name)
	}
}

// The brokers are spread one per node: preferred by default, as the operator, required with the
// broker-spread option Required; the option renames the Job (the affinity is in its pod template).
func TestBrokerSpread(t *testing.T) {
	t.Parallel()
	required := strings.Replace(helloWorld, "  name: flux-sample\n", "  name: flux-sample\n  annotations:\n    "+v1alpha2.BrokerSpreadAnnotation+": Required\n", 1)
	preferredJob := brokerJobOf(t, must(generate(t, helloWorld)))
	requiredJob := brokerJobOf(t, must(generate(t, required)))
	for _, tc := range []struct {
		name               string
		job                *batchv1.Job
		preferred, require int
	}{
		{"default", preferredJob, 1, 0},
		{"Required", requiredJob, 0, 1},
	} {
		anti := tc.job.Spec.Template.Spec.Affinity.PodAntiAffinity
		if len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != tc.preferred || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != tc.require {
			t.Errorf("%s: pod anti-affinity %s, want %d preferred and %d required terms", tc.name, toJSON(t, anti), tc.preferred, tc.require)
			continue
		}
		var term corev1.PodAffinityTerm
		if tc.preferred > 0 {
			term = anti.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
		} else {
			term = anti.RequiredDuringSchedulingIgnoredDuringExecution[0]
		}
		if term.TopologyKey != corev1.LabelHostname || !subsetOf(term.LabelSelector.MatchLabels, tc.job.Spec.Template.Labels) {
			t.Errorf("%s: the one-per-node term %s does not select the broker pods (%v) per hostname", tc.name, toJSON(t, term), tc.job.Spec.Template.Labels)
		}
	}
	if preferredJob.Name == requiredJob.Name {
		t.Errorf("the option does not change the broker Job's name %s (its pod template is immutable)", preferredJob.Name)
	}
}

// The eviction option WaitForCommand renders a PodDisruptionBudget that lets no Ready broker pod
// of this MiniCluster be evicted and lets an unready one go; the default renders none. The budget
// is an object of its own: the broker Job keeps its name.
func TestEvictionWaitForCommand(t *testing.T) {
	t.Parallel()
	waiting := strings.Replace(helloWorld, "  name: flux-sample\n", "  name: flux-sample\n  annotations:\n    "+v1alpha2.EvictionAnnotation+": WaitForCommand\n", 1)
	if pdbs := find(must(generate(t, helloWorld)), func(*policyv1.PodDisruptionBudget) bool { return true }); len(pdbs) != 0 {
		t.Errorf("the default renders %d PodDisruptionBudgets, want none", len(pdbs))
	}
	objs := must(generate(t, waiting))
	pdbs := find(objs, func(*policyv1.PodDisruptionBudget) bool { return true })
	if len(pdbs) != 1 {
		t.Fatalf("WaitForCommand renders %d PodDisruptionBudgets, want 1", len(pdbs))
	}
	pdb, job := pdbs[0], brokerJobOf(t, objs)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 0 || pdb.Spec.MinAvailable != nil {
		t.Errorf("maxUnavailable %v, minAvailable %v: want maxUnavailable 0 alone", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
		t.Errorf("unhealthyPodEvictionPolicy %v, want AlwaysAllow", p)
	}
	if sel := pdb.Spec.Selector; sel == nil || len(sel.MatchExpressions) != 0 || !subsetOf(sel.MatchLabels, job.Spec.Template.Labels) {
		t.Errorf("the budget's selector %s does not select the broker pods (%v)", toJSON(t, sel), job.Spec.Template.Labels)
	}
	if pdb.Labels[contract.LabelComponent] != contract.ComponentDisruptionBudget || pdb.Labels[contract.LabelMiniCluster] != "flux-sample" {
		t.Errorf("labels %v, want component %s of MiniCluster flux-sample", pdb.Labels, contract.ComponentDisruptionBudget)
	}
	if a := brokerJobOf(t, must(generate(t, helloWorld))); a.Name != job.Name {
		t.Errorf("the option renames the broker Job %s to %s", a.Name, job.Name)
	}
}

// subsetOf tells whether every label of sub is in labels.
func subsetOf(sub, labels map[string]string) bool {
	for k, v := range sub {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestJoinReportsAreTheContracts: the broker script prints the join reports that status looks
// for in a broker's log (api/contract), word for word.
func TestJoinReportsAreTheContracts(t *testing.T) {
	t.Parallel()
	cms := find(must(generate(t, helloWorld)), func(c *corev1.ConfigMap) bool {
		return c.Labels[contract.LabelComponent] == contract.ComponentEntrypoint
	})
	script := cms[0].Data[WaitScriptKey(0)]
	for _, report := range []string{contract.NotJoinedReport, contract.NotStartedReport} {
		if !strings.Contains(script, report) {
			t.Errorf("the broker script %s does not print %q", WaitScriptKey(0), report)
		}
	}
}
