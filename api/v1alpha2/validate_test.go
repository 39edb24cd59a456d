package v1alpha2

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

const base = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
`

// check decodes, defaults and validates doc the way the function does and returns the field
// paths of every problem.
func check(t *testing.T, doc string) []string {
	t.Helper()
	mc, errs := Decode([]byte(doc))
	if mc != nil {
		mc.Default()
		opts, optErrs := mc.ParseOptions()
		errs = append(append(errs, optErrs...), mc.Validate(opts)...)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Field)
	}
	return paths
}

func TestBadInputNamesTheField(t *testing.T) {
	for name, tc := range map[string]struct {
		spec string
		want []string
	}{
		"size zero":          {"  size: 0\n  containers: [{image: a}]", []string{"spec.size"}},
		"size negative":      {"  size: -1\n  containers: [{image: a}]", []string{"spec.size"}},
		"maxSize below size": {"  size: 3\n  maxSize: 2\n  containers: [{image: a}]", []string{"spec.maxSize"}},
		"minSize above size": {"  size: 2\n  minSize: 3\n  containers: [{image: a}]", []string{"spec.minSize"}},
		"no image":           {"  containers: [{command: x}]", []string{"spec.containers[0].image"}},
		"no containers":      {"  size: 2", []string{"spec.containers"}},
		"unknown field":      {"  sizee: 2\n  containers: [{image: a}]", []string{"spec.sizee"}},
		"nested unknown":     {"  containers: [{image: a, volumes: {d: {path: /d, hostpath: /d}}}]", []string{"spec.containers[0].volumes[d].hostpath"}},
		"two runFlux":        {"  containers: [{image: a, name: a, runFlux: true}, {image: b, name: b, runFlux: true}]", []string{"spec.containers"}},
		"no runFlux of two":  {"  containers: [{image: a, name: a}, {image: b, name: b}]", []string{"spec.containers"}},
		"sidecar no name":    {"  containers: [{image: a, runFlux: true}, {image: b}]", []string{"spec.containers[1].name"}},
		"launcher and batch": {"  containers: [{image: a, launcher: true, batch: true}]", []string{"spec.containers[0].batch"}},
		"script and command": {"  containers: [{image: a, command: x, commands: {script: run}}]", []string{"spec.containers[0].commands.script"}},
		"claim and hostPath": {"  containers: [{image: a, volumes: {d: {claimName: c, hostPath: /d}}}]", []string{"spec.containers[0].volumes[d]", "spec.containers[0].volumes[d].path"}},
		"relative path":      {"  containers: [{image: a, volumes: {d: {path: data, hostPath: /d}}}]", []string{"spec.containers[0].volumes[d].path"}},
		"reserved volume":    {"  containers: [{image: a, volumes: {flux-view: {path: /x, emptyDir: true}}}]", []string{"spec.containers[0].volumes[flux-view]"}},
		"same volume twice":  {"  containers: [{image: a, runFlux: true, volumes: {d: {path: /d, hostPath: /a}}}, {image: b, name: b, volumes: {d: {path: /d, hostPath: /b}}}]", []string{"spec.containers[1].volumes[d]"}},
		"hostlist+clusters":  {"  flux: {bursting: {hostlist: h, clusters: [{name: c, size: 1}]}}\n  containers: [{image: a}]", []string{"spec.flux.bursting.hostlist"}},
		"same burst name":    {"  flux: {bursting: {clusters: [{name: b, size: 1}, {name: b, size: 2}]}}\n  containers: [{image: a}]", []string{"spec.flux.bursting.clusters[1].name"}},
		"burst-N taken":      {"  flux: {bursting: {clusters: [{size: 1}, {name: burst-0, size: 2}]}}\n  containers: [{image: a}]", []string{"spec.flux.bursting.clusters[1].name"}},
		"service pre":        {"  services: [{name: s, image: a, commands: {pre: x}}]\n  containers: [{image: a}]", []string{"spec.services[0].commands.pre"}},
		"restartPolicy":      {"  pod: {restartPolicy: Always}\n  containers: [{image: a}]", []string{"spec.pod.restartPolicy"}},
		"bad port":           {"  containers: [{image: a, runFlux: true}, {image: b, name: b, ports: [70000]}]", []string{"spec.containers[1].ports[0]"}},
		"headless name":      {"  network: {headlessName: 1svc}\n  containers: [{image: a}]", []string{"spec.network.headlessName"}},
		"wrong type":         {"  size: four\n  containers: [{image: a}]", []string{"spec.size"}},
		"wrong type in list": {"  containers: [{image: a}, {image: [b], name: b}]", []string{"spec.containers[1].image"}},
		"wrong type in map":  {"  containers: [{image: a, volumes: {d: {path: /d, hostPath: /d}}}, {image: b, name: b, volumes: {d: {path: /d, readOnly: \"yes\"}}}]", []string{"spec.containers[1].volumes[d].readOnly"}},
		"logLevel":           {"  flux: {logLevel: 9}\n  containers: [{image: a}]", []string{"spec.flux.logLevel"}},
		"secret without key": {"  containers: [{image: a, secrets: {TOKEN: {name: s}}}]", []string{"spec.containers[0].secrets[TOKEN].key"}},
		"hook not bash":      {"  containers: [{image: a, commands: {pre: \"if true; then echo\"}}]", []string{"spec.containers[0].commands.pre"}},
		"prefix not bash":    {"  containers: [{image: a, commands: {prefix: \"time (\"}}]", []string{"spec.containers[0].commands.prefix"}},
		"sidecar not bash":   {"  containers: [{image: a, runFlux: true}, {image: b, name: b, command: \"echo 'x\"}]", []string{"spec.containers[1].command"}},
		"broker not words":   {"  containers: [{image: a, command: \"echo a | wc\"}]", []string{"spec.containers[0].command"}},
		"service hook":       {"  services: [{name: s, image: a, commands: {servicePre: \"echo 'x\"}}]\n  containers: [{image: a}]", []string{"spec.services[0].commands.servicePre"}},
		"submit not bash":    {"  flux: {submitCommand: \"flux submit |\"}\n  containers: [{image: a}]", []string{"spec.flux.submitCommand"}},
		"brokerConfig TOML":  {"  flux: {brokerConfig: \"[bootstrap\"}\n  containers: [{image: a}]", []string{"spec.flux.brokerConfig"}},
		"curveCert broken":   {"  flux: {curveCert: \"metadata\\n    name = \\\"x\\\"\\n\"}\n  containers: [{image: a}]", []string{"spec.flux.curveCert"}},
		"leadBroker missing": {"  flux: {bursting: {leadBroker: {name: l}}}\n  containers: [{image: a}]", []string{"spec.flux.bursting.leadBroker.address", "spec.flux.bursting.leadBroker.size"}},
		"image uppercase":    {"  containers: [{image: \"Ubuntu:Noble\"}]", []string{"spec.containers[0].image"}},
		"image with a space": {"  containers: [{image: a, runFlux: true}, {image: \"ubuntu noble\", name: b}]", []string{"spec.containers[1].image"}},
		"service image":      {"  services: [{name: s, image: \"registry:5000/Team/app\"}]\n  containers: [{image: a}]", []string{"spec.services[0].image"}},
		"flux view image":    {"  flux: {container: {image: \"ghcr.io/org/view:tag with space\"}}\n  containers: [{image: a}]", []string{"spec.flux.container.image"}},
		"jobLabels key":      {"  jobLabels: {\"team a\": x}\n  containers: [{image: a}]", []string{"spec.jobLabels[team a]"}},
		"jobLabels value":    {"  jobLabels: {team: \"a b\"}\n  containers: [{image: a}]", []string{"spec.jobLabels[team]"}},
		"Kueue queue name":   {"  jobLabels: {kueue.x-k8s.io/queue-name: Team_A}\n  containers: [{image: a}]", []string{"spec.jobLabels[kueue.x-k8s.io/queue-name]"}},
		"Kueue priority":     {"  jobLabels: {kueue.x-k8s.io/priority-class: High}\n  containers: [{image: a}]", []string{"spec.jobLabels[kueue.x-k8s.io/priority-class]"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := check(t, base+tc.spec+"\n")
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("want an error at %s, got %v", w, got)
				}
			}
		})
	}
}

func TestHostnameLength(t *testing.T) {
	long := strings.Repeat("a", 53)
	doc := strings.Replace(base, "flux-sample", long, 1) + "  size: 10\n  containers: [{image: a}]\n"
	if got := check(t, doc); !slices.Contains(got, "metadata.name") {
		t.Errorf("53 + 1 + 8 + 1 + 1 characters is too long for a hostname, got %v", got)
	}
	stable := strings.Replace(doc, "metadata:\n", "metadata:\n  annotations: {minicluster-fn.dev/job-naming: stable}\n", 1)
	if got := check(t, stable); len(got) != 0 {
		t.Errorf("with stable names the hostname is 55 characters and fine, got %v", got)
	}
}

func TestNotAMiniCluster(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":       "  \n",
		"not yaml":    "a: [b\n",
		"other kind":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"old version": "apiVersion: flux-framework.org/v1alpha1\nkind: MiniCluster\nmetadata: {name: x}\n",
		"a list":      "- a\n- b\n",
	} {
		if mc, errs := Decode([]byte(doc)); mc != nil || len(errs) == 0 {
			t.Errorf("%s: want an error and no MiniCluster", name)
		}
	}
}

func TestOperatorDefaults(t *testing.T) {
	mc, errs := Decode([]byte(base + "  containers: [{image: a}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mc.Default()
	s := mc.Spec
	if s.Size != 1 || s.MaxSize != 1 || *s.Tasks != 1 || s.DeadlineSeconds != 31500000 || s.BackoffLimit != 100 {
		t.Errorf("size/maxSize/tasks/deadline/backoff defaults wrong: %+v", s)
	}
	f := s.Flux
	if f.ConnectTimeout != "5s" || *f.LogLevel != 6 || f.Scheduler.QueuePolicy != "fcfs" || f.Container.Name != "flux-view" ||
		f.Container.MountPath != "/mnt/flux" || f.Container.Image != DefaultViewImage {
		t.Errorf("flux defaults wrong: %+v", f)
	}
	if s.Network.HeadlessName != "flux-sample" || !s.Containers[0].RunFlux || s.Pod.RestartPolicy != "OnFailure" {
		t.Error("headlessName, single-container runFlux or restartPolicy default missing")
	}
	explicit, _ := Decode([]byte(base + "  tasks: 0\n  flux: {logLevel: 0}\n  containers: [{image: a}]\n"))
	explicit.Default()
	if *explicit.Spec.Tasks != 0 || *explicit.Spec.Flux.LogLevel != 0 {
		t.Error("explicit zero tasks and logLevel must stay zero")
	}
}

// TestUnnamedBurstClustersAreNumbered: the operator's API names an unnamed bursting cluster
// burst-N (N its index); its examples rely on that, so two unnamed clusters are two host ranges.
func TestUnnamedBurstClustersAreNumbered(t *testing.T) {
	mc, errs := Decode([]byte(base + "  flux: {bursting: {clusters: [{size: 2}, {name: remote}, {}]}}\n  containers: [{image: a}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mc.Default()
	var got []string
	for _, c := range mc.Spec.Flux.Bursting.Clusters {
		got = append(got, c.Name)
	}
	if want := []string{"burst-0", "remote", "burst-2"}; !slices.Equal(got, want) {
		t.Errorf("bursting cluster names = %v, want %v", got, want)
	}
	if errs := mc.Validate(Options{}); len(errs) > 0 {
		t.Errorf("distinct burst names refused: %v", errs)
	}
}

// TestUserNamedHostsNeedStableNames: a host list the user wrote names the pods <name>-<index>, so
// the Job gets the operator's name unless the user asked for hash naming, which is then an error.
func TestUserNamedHostsNeedStableNames(t *testing.T) {
	for name, spec := range map[string]string{
		"brokerConfig":        "  flux: {brokerConfig: \"[bootstrap]\"}\n",
		"bursting.hostlist":   "  flux: {bursting: {hostlist: \"flux-sample-[0-1]\"}}\n",
		"bursting.leadBroker": "  flux: {bursting: {leadBroker: {name: flux-sample, address: 10.0.0.1, size: 2}}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			doc := base + spec + "  containers: [{image: a}]\n"
			mc, errs := Decode([]byte(doc))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			mc.Default()
			if opts, errs := mc.ParseOptions(); len(errs) > 0 || opts.JobNaming != JobNamingStable {
				t.Errorf("without the annotation: naming %q, errors %v; want stable, none", opts.JobNaming, errs)
			}
			hashed := strings.Replace(doc, "  name: flux-sample\n", "  name: flux-sample\n  annotations: {minicluster-fn.dev/job-naming: hash}\n", 1)
			got := check(t, hashed)
			if want := "metadata.annotations[minicluster-fn.dev/job-naming]"; !slices.Contains(got, want) {
				t.Errorf("with job-naming: hash: errors at %v, want one at %s", got, want)
			}
		})
	}
}

// TestCurveCertProblemsHideTheKey: a broken inline certificate is named, and no part of its
// secret key is in the message.
func TestCurveCertProblemsHideTheKey(t *testing.T) {
	const secret = "2>z28r<BA2.pj0i)fwwlZvr}a!@d0dLl>ycW$eWX" // wrong last character: not the public key's
	doc := base + "  flux:\n    curveCert: |\n      metadata\n          name = \"x\"\n      curve\n" +
		"          public-key = \"c}NG4WENO2G^QC(hmSa^X{2e@*[:Jsy-?4E+0hm&\"\n          secret-key = \"" + secret + "\"\n  containers: [{image: a}]\n"
	mc, errs := Decode([]byte(doc))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mc.Default()
	errs = mc.Validate(Options{JobNaming: JobNamingHash})
	if len(errs) != 1 || errs[0].Field != "spec.flux.curveCert" {
		t.Fatalf("want one error at spec.flux.curveCert, got %v", errs)
	}
	if msg := errs[0].Error(); strings.Contains(msg, secret[:10]) || strings.Contains(msg, secret[30:]) {
		t.Errorf("the message shows the secret key: %s", msg)
	}
}

// TestBrokerCommandProblems: a runFlux command that the broker script cannot split into words is
// refused with where and why, in the command's own lines and columns. generators'
// TestBrokerCommandSplitting runs the script on such commands.
func TestBrokerCommandProblems(t *testing.T) {
	for command, want := range map[string]string{
		"hostname":                     "",
		`bash -c "echo a && echo b"`:   "",
		"echo a # a comment":           "",
		"echo a\necho $(hostname) `a`": "",
		"echo a && echo b":             `1:8: "&&" is shell syntax, not a word`,
		"echo a\necho b | wc":          `2:8: "|" is shell syntax, not a word`,
		"echo a; echo b":               `1:7: ";" is shell syntax, not a word`,
		"echo a 2>&1":                  `1:9: ">&" is shell syntax, not a word`,
		"echo 'a":                      "1:6: reached EOF without closing quote '",
		"echo a)":                      "a quote or a parenthesis is unbalanced: ) can only be used to close a subshell",
		"echo $(hostname":              "a quote or a parenthesis is unbalanced: reached EOF without matching ( with )",
		"echo ${":                      `1:6: "${ stmts;}" is a mksh feature; tried parsing as bash`,
		"echo @(a|b)":                  "1:6: @(...) is an extended glob, which the script's bash does not enable",
		// bash accepts these two, but the first would run "echo b" as shell code and the second
		// would replace the word "echo" by "y".
		"echo a) && (echo b": `1:7: ")" is shell syntax, not a word`,
		"echo [0]=y":         "1:7: a word of the form [index]=value sets an element of the script's word list; quote it",
	} {
		if got := brokerCommandProblem(command); got != want {
			t.Errorf("%q: %q, want %q", command, got, want)
		}
	}
}

// TestSizeProblems: size and maxSize are bounded by what the API server accepts for the broker
// Job, and an invalid size is reported once, not again through maxSize or minSize.
func TestSizeProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		spec string
		want []string
	}{
		"largest size":              {"  size: 100000", nil},
		"size above the Job limit":  {"  size: 100001", []string{"spec.size: Invalid value: 100001: must not exceed 100000, the largest parallelism Kubernetes accepts for an Indexed Job"}},
		"maxSize above the limit":   {"  size: 2\n  maxSize: 100001", []string{"spec.maxSize: Invalid value: 100001: must not exceed 100000, the largest parallelism Kubernetes accepts for an Indexed Job (the Job grows to spec.maxSize in place)"}},
		"both above the limit":      {"  size: 200000\n  maxSize: 300000", []string{"spec.size: Invalid value: 200000: must not exceed 100000, the largest parallelism Kubernetes accepts for an Indexed Job"}},
		"negative size":             {"  size: -2", []string{"spec.size: Invalid value: -2: must be at least 1"}},
		"negative size and minSize": {"  size: -2\n  minSize: 1\n  maxSize: 4", []string{"spec.size: Invalid value: -2: must be at least 1"}},
		"negative maxSize":          {"  size: 2\n  maxSize: -1", []string{"spec.maxSize: Invalid value: -1: must be at least spec.size (2)"}},
		"negative minSize":          {"  size: 2\n  minSize: -1", []string{"spec.minSize: Invalid value: -1: must not be negative"}},
		"negative everything":       {"  size: -2\n  minSize: -3\n  maxSize: -1", []string{"spec.minSize: Invalid value: -3: must not be negative", "spec.size: Invalid value: -2: must be at least 1"}},
		"negative burst size":       {"  size: -2\n  flux: {bursting: {clusters: [{name: b}]}}", []string{"spec.size: Invalid value: -2: must be at least 1"}},
	} {
		t.Run(name, func(t *testing.T) {
			mc, errs := Decode([]byte(base + tc.spec + "\n  containers: [{image: a}]\n"))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			mc.Default()
			var got []string
			for _, e := range mc.Validate(Options{JobNaming: JobNamingStable}) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// optionsOf parses the options of a MiniCluster with these annotations (flow-style YAML map
// entries) and checks that the only error, if errAt is set, is at that field.
func optionsOf(t *testing.T, annotations, errAt string) Options {
	t.Helper()
	doc := base + "  containers: [{image: a, command: hostname}]\n"
	if annotations != "" {
		doc = strings.Replace(doc, "  name: flux-sample\n", "  name: flux-sample\n  annotations: {"+annotations+"}\n", 1)
	}
	mc, errs := Decode([]byte(doc))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mc.Default()
	opts, errs := mc.ParseOptions()
	var at []string
	for _, e := range errs {
		at = append(at, e.Field)
	}
	if errAt == "" && len(errs) > 0 || errAt != "" && !slices.Equal(at, []string{errAt}) {
		t.Fatalf("errors %v, want one at %q (none if empty)", errs, errAt)
	}
	return opts
}

// TestCurveKindOption: the certificate is a Secret unless the option asks for a ConfigMap; any
// other value, and a ConfigMap together with a user's Secret, are errors at the annotation.
func TestCurveKindOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/curve-kind]"
	for name, tc := range map[string]struct {
		annotations string
		want        CurveKind
		errAt       string
	}{
		"default":               {"", CurveKindSecret, ""},
		"Secret":                {"minicluster-fn.dev/curve-kind: Secret", CurveKindSecret, ""},
		"ConfigMap":             {"minicluster-fn.dev/curve-kind: ConfigMap", CurveKindConfigMap, ""},
		"lower case":            {"minicluster-fn.dev/curve-kind: secret", CurveKindSecret, field},
		"user Secret":           {"minicluster-fn.dev/curve-secret: mine, minicluster-fn.dev/curve-kind: Secret", CurveKindSecret, ""},
		"user Secret ConfigMap": {"minicluster-fn.dev/curve-secret: mine, minicluster-fn.dev/curve-kind: ConfigMap", CurveKindConfigMap, field},
	} {
		t.Run(name, func(t *testing.T) {
			opts := optionsOf(t, tc.annotations, tc.errAt)
			if tc.errAt == "" && opts.CurveKind != tc.want {
				t.Errorf("CurveKind = %q, want %q", opts.CurveKind, tc.want)
			}
		})
	}
}

// TestViewMediumOption: the option is Memory or Disk, spelled so; unset, it stays "" for the
// generator to choose.
func TestViewMediumOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/view-medium]"
	for name, tc := range map[string]struct {
		annotations string
		want        ViewMedium
		errAt       string
	}{
		"unset":      {"", "", ""},
		"Memory":     {"minicluster-fn.dev/view-medium: Memory", ViewMediumMemory, ""},
		"Disk":       {"minicluster-fn.dev/view-medium: Disk", ViewMediumDisk, ""},
		"lower case": {"minicluster-fn.dev/view-medium: memory", "", field},
		"emptyDir":   {"minicluster-fn.dev/view-medium: \"\"", "", field},
	} {
		t.Run(name, func(t *testing.T) {
			opts := optionsOf(t, tc.annotations, tc.errAt)
			if opts.ViewMedium != tc.want {
				t.Errorf("ViewMedium = %q, want %q", opts.ViewMedium, tc.want)
			}
		})
	}
}

// TestViewSourceOption: the view is copied unless the option asks for an image volume; the option
// spelled otherwise, or an image volume with no view image (flux.container.disable), are errors
// at the annotation, and the image volume's name is then reserved.
func TestViewSourceOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/view-source]"
	for name, tc := range map[string]struct {
		annotations string
		want        ViewSource
		errAt       string
	}{
		"unset":       {"", ViewSourceCopy, ""},
		"Copy":        {"minicluster-fn.dev/view-source: Copy", ViewSourceCopy, ""},
		"ImageVolume": {"minicluster-fn.dev/view-source: ImageVolume", ViewSourceImageVolume, ""},
		"lower case":  {"minicluster-fn.dev/view-source: imagevolume", ViewSourceCopy, field},
		"image":       {"minicluster-fn.dev/view-source: image", ViewSourceCopy, field},
	} {
		t.Run(name, func(t *testing.T) {
			if opts := optionsOf(t, tc.annotations, tc.errAt); opts.ViewSource != tc.want {
				t.Errorf("ViewSource = %q, want %q", opts.ViewSource, tc.want)
			}
		})
	}
	imageVolume := strings.Replace(base, "  name: flux-sample\n", "  name: flux-sample\n  annotations: {minicluster-fn.dev/view-source: ImageVolume}\n", 1)
	for name, tc := range map[string]struct {
		doc  string
		want []string
	}{
		"no view image": {imageVolume + "  flux: {container: {disable: true}}\n  containers: [{image: a}]\n", []string{field}},
		"its volume name": {imageVolume + "  containers: [{image: a, volumes: {flux-view-image: {path: /x, emptyDir: true}}}]\n",
			[]string{"spec.containers[0].volumes[flux-view-image]"}},
		"the volume name without the option": {base + "  containers: [{image: a, volumes: {flux-view-image: {path: /x, emptyDir: true}}}]\n", nil},
	} {
		t.Run(name, func(t *testing.T) {
			if got := check(t, tc.doc); !slices.Equal(got, tc.want) {
				t.Errorf("errors at %v, want %v", got, tc.want)
			}
		})
	}
}

// TestImageReferences: every image a MiniCluster names (containers, services, the flux view and
// the keygen-image option) must parse as the kubelet parses it before a pull; the ones it cannot
// pull are refused at their field with the parser's reason, and the valid forms pass.
func TestImageReferences(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	doc := func(image string) string {
		return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n" +
			"  annotations: {minicluster-fn.dev/keygen-image: " + strconv.Quote(image) + "}\n" +
			"spec:\n  flux: {container: {image: " + strconv.Quote(image) + "}}\n" +
			"  services: [{name: s, image: " + strconv.Quote(image) + "}]\n" +
			"  containers: [{image: " + strconv.Quote(image) + ", runFlux: true}, {name: b, image: " + strconv.Quote(image) + "}]\n"
	}
	fields := []string{"metadata.annotations[minicluster-fn.dev/keygen-image]", "spec.containers[0].image", "spec.containers[1].image",
		"spec.flux.container.image", "spec.services[0].image"}
	for _, image := range []string{"ubuntu", "ubuntu:noble", "library/ubuntu:24.04", "docker.io/library/ubuntu:noble",
		"localhost:5000/team/app:v1.2", "registry.example.com:443/a/b/c:tag_1.0-rc", "ghcr.io/org/app@" + digest,
		"ghcr.io/org/app:v1@" + digest, "[::1]:5000/app:v1"} {
		if got := check(t, doc(image)); len(got) > 0 {
			t.Errorf("%s: errors at %v, want none", image, got)
		}
	}
	for image, reason := range map[string]string{
		"Ubuntu:Noble":            "must be lowercase",
		"ubuntu noble":            "invalid reference format",
		" ubuntu":                 "invalid reference format",
		"ubuntu:":                 "invalid reference format",
		"ubuntu:no/ble":           "invalid reference format",
		"ubuntu@sha256:abc":       "invalid reference format",
		"ubuntu@" + digest[:47]:   "invalid checksum digest length",
		"ghcr.io/org/app:v1:v2":   "invalid reference format",
		"https://ghcr.io/org/app": "invalid reference format",
		strings.Repeat("a", 64):   "cannot specify 64-byte hexadecimal strings",
	} {
		mc, errs := Decode([]byte(doc(image)))
		if len(errs) > 0 {
			t.Fatalf("%q: %v", image, errs)
		}
		mc.Default()
		opts, optErrs := mc.ParseOptions()
		errs = append(optErrs, mc.Validate(opts)...)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
			if e.BadValue != image || !strings.Contains(e.Detail, "not an image reference") || !strings.Contains(e.Detail, reason) {
				t.Errorf("%q: %v; want the value and %q", image, e, reason)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, fields) {
			t.Errorf("%q: errors at %v, want one at each of %v", image, got, fields)
		}
	}
}

// TestFailedCommandOption: a failed command fails the Job unless the option says Complete,
// spelled so.
func TestFailedCommandOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/failed-command]"
	for name, tc := range map[string]struct {
		annotations string
		want        FailedCommand
		errAt       string
	}{
		"default":    {"", FailedCommandFail, ""},
		"Fail":       {"minicluster-fn.dev/failed-command: Fail", FailedCommandFail, ""},
		"Complete":   {"minicluster-fn.dev/failed-command: Complete", FailedCommandComplete, ""},
		"lower case": {"minicluster-fn.dev/failed-command: complete", FailedCommandFail, field},
	} {
		t.Run(name, func(t *testing.T) {
			opts := optionsOf(t, tc.annotations, tc.errAt)
			if opts.FailedCommand != tc.want {
				t.Errorf("FailedCommand = %q, want %q", opts.FailedCommand, tc.want)
			}
		})
	}
}

// TestBrokerSpreadOption: brokers are spread one per node where the scheduler can (Preferred) unless
// the option says Required, spelled so; Required with spreading disabled is a contradiction.
func TestBrokerSpreadOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/broker-spread]"
	for name, tc := range map[string]struct {
		annotations string
		want        BrokerSpread
		errAt       string
	}{
		"default":    {"", BrokerSpreadPreferred, ""},
		"Preferred":  {"minicluster-fn.dev/broker-spread: Preferred", BrokerSpreadPreferred, ""},
		"Required":   {"minicluster-fn.dev/broker-spread: Required", BrokerSpreadRequired, ""},
		"lower case": {"minicluster-fn.dev/broker-spread: required", BrokerSpreadPreferred, field},
	} {
		t.Run(name, func(t *testing.T) {
			opts := optionsOf(t, tc.annotations, tc.errAt)
			if opts.BrokerSpread != tc.want {
				t.Errorf("BrokerSpread = %q, want %q", opts.BrokerSpread, tc.want)
			}
		})
	}
	mc := &MiniCluster{}
	mc.Name = "spread"
	mc.Annotations = map[string]string{BrokerSpreadAnnotation: string(BrokerSpreadRequired)}
	mc.Spec.Network.DisableAffinity = true
	_, errs := mc.ParseOptions()
	if len(errs) != 1 || errs[0].Field != field || !strings.Contains(errs[0].Detail, "spec.network.disableAffinity is true") {
		t.Errorf("Required with spec.network.disableAffinity: %v, want one error at %s naming disableAffinity", errs, field)
	}
}

// TestEvictionOption: brokers may be evicted (Allow) unless the option says WaitForCommand, spelled
// so; WaitForCommand for a MiniCluster that never completes would hold a drain forever.
func TestEvictionOption(t *testing.T) {
	const field = "metadata.annotations[minicluster-fn.dev/eviction]"
	for name, tc := range map[string]struct {
		annotations string
		want        Eviction
		errAt       string
	}{
		"default":        {"", EvictionAllow, ""},
		"Allow":          {"minicluster-fn.dev/eviction: Allow", EvictionAllow, ""},
		"WaitForCommand": {"minicluster-fn.dev/eviction: WaitForCommand", EvictionWaitForCommand, ""},
		"lower case":     {"minicluster-fn.dev/eviction: waitforcommand", EvictionAllow, field},
	} {
		t.Run(name, func(t *testing.T) {
			opts := optionsOf(t, tc.annotations, tc.errAt)
			if opts.Eviction != tc.want {
				t.Errorf("Eviction = %q, want %q", opts.Eviction, tc.want)
			}
		})
	}
	for name, tc := range map[string]struct {
		edit func(*MiniCluster)
		want string
	}{
		"interactive": {func(mc *MiniCluster) { mc.Spec.Interactive = true }, "spec.interactive keeps the brokers running"},
		"no command":  {func(mc *MiniCluster) { mc.Spec.Containers[0].Command = "" }, "without a command the brokers run until"},
		"sidecar": {func(mc *MiniCluster) {
			mc.Spec.Containers = append(mc.Spec.Containers, MiniClusterContainer{Name: "side"})
		}, "container side runs no broker"},
		"command that ends": {func(*MiniCluster) {}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			mc := &MiniCluster{}
			mc.Name = "evict"
			mc.Annotations = map[string]string{EvictionAnnotation: string(EvictionWaitForCommand)}
			mc.Spec.Containers = []MiniClusterContainer{{Name: "main", Command: "hostname", RunFlux: true}}
			tc.edit(mc)
			_, errs := mc.ParseOptions()
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("WaitForCommand for a command that ends: %v", errs)
			case tc.want != "" && (len(errs) != 1 || errs[0].Field != field || !strings.Contains(errs[0].Detail, tc.want) || !strings.Contains(errs[0].Detail, "wait forever")):
				t.Errorf("WaitForCommand: %v, want one error at %s saying %q and that a drain would wait forever", errs, field, tc.want)
			}
		})
	}
}
