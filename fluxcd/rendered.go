package fluxcd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// MiniCluster is what a rendered directory holds for one MiniCluster: the objects the Flux CD
// health checks refer to.
type MiniCluster struct {
	Name string
	// BrokerJob is the Indexed Job of Flux brokers.
	BrokerJob string
	// KeygenJob creates the CURVE certificate; empty when the certificate is given
	// (spec.flux.curveCert or the curve-secret option).
	KeygenJob string
	// Curve is the ConfigMap or Secret with the certificate that the broker pods mount.
	CurveKind, Curve string
	// Service is the headless Service the broker pods register in.
	Service string
	// ServicesPod runs spec.services; empty when there are none.
	ServicesPod string
	// Persistent tells why the broker Job never completes on its own; empty when it does.
	Persistent string
	// Dir is the directory of the broker Job's file, relative to the rendered directory ("." for
	// the directory itself): one Flux CD Kustomization applies each such directory.
	Dir string
}

// generatedObject is one object of minicluster-fn output found in the directory.
type generatedObject struct {
	node *yaml.RNode
	file string
}

// ReadRendered reads every YAML file under dir and returns the MiniClusters whose rendered
// manifests it holds, sorted by name. The objects are found by their labels
// (api/contract: minicluster-fn.dev/minicluster: <MiniCluster>), the
// roles of the objects by how the broker Job refers to them. Every problem found is returned,
// each naming its file.
func ReadRendered(dir string) ([]MiniCluster, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: give the directory the MiniClusters were rendered into", dir)
	}
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: give the directory the MiniClusters were rendered into", dir)
	}
	s := scan{dir: dir, seen: map[string]string{}, functionFiles: map[string]bool{}, byInstance: map[string][]generatedObject{}, duplicates: map[duplicate][]string{}}
	if err := filepath.WalkDir(dir, s.visit); err != nil {
		return nil, err
	}
	for _, d := range s.duplicateOrder {
		ids := s.duplicates[d]
		s.problems = append(s.problems, fmt.Errorf("%s: %d objects of MiniCluster %s (%s, ...) are also in %s: render each MiniCluster into the directory once, and remove the stale copy",
			d.file, len(ids), d.instance, ids[0], d.first))
	}
	s.checkKustomizations()
	s.checkSources()
	if len(s.byInstance) == 0 && len(s.problems) == 0 {
		return nil, fmt.Errorf("%s holds no rendered MiniCluster (no object labelled app.kubernetes.io/managed-by: minicluster-fn): render the MiniClusters into it first, e.g. minicluster-fn render minicluster.yaml > %s",
			dir, filepath.Join(dir, "minicluster.yaml"))
	}
	var clusters []MiniCluster
	for _, name := range slices.Sorted(maps.Keys(s.byInstance)) {
		mc, problems := newMiniCluster(dir, name, s.byInstance[name])
		s.problems = append(s.problems, problems...)
		clusters = append(clusters, mc)
	}
	s.problems = append(s.problems, nestedDirs(dir, clusters)...)
	if len(s.problems) > 0 {
		return nil, errors.Join(s.problems...)
	}
	return clusters, nil
}

// nestedDirs reports a directory of MiniClusters below another one: the Kustomization of the
// outer directory would apply the inner one too (kustomize-controller includes subdirectories
// when it generates a kustomization.yaml), and two Kustomizations would own the same objects.
func nestedDirs(root string, clusters []MiniCluster) []error {
	var problems []error
	for _, outer := range clusters {
		for _, inner := range clusters {
			if inner.Dir == outer.Dir || !(outer.Dir == "." || strings.HasPrefix(inner.Dir, outer.Dir+"/")) {
				continue
			}
			problems = append(problems, fmt.Errorf("%s: MiniCluster %s is rendered below the directory of MiniCluster %s (%s): each Flux CD Kustomization applies one directory with its subdirectories, so put the rendered MiniClusters in sibling directories (render.sh writes one directory per MiniCluster file)",
				filepath.Join(root, inner.Dir), inner.Name, outer.Name, filepath.Join(root, outer.Dir)))
			return problems
		}
	}
	return problems
}

// scan collects what ReadRendered needs while it walks the directory.
type scan struct {
	dir      string
	problems []error
	// seen maps kind/name of each generated object to its file, to find objects rendered twice.
	seen       map[string]string
	byInstance map[string][]generatedObject
	// sources are the MiniCluster documents found, with their files.
	sources []sourceDoc
	// functionFiles are the files holding a document with a config.kubernetes.io/function
	// annotation (a KRM function config such as a MiniCluster set up for kustomize).
	functionFiles  map[string]bool
	kustomizations []kustomizationFile
	// duplicates are the objects of a file that an earlier file already has, in the order found.
	duplicates     map[duplicate][]string
	duplicateOrder []duplicate
}

type duplicate struct{ file, first, instance string }

type sourceDoc struct{ name, file string }

type kustomizationFile struct {
	file    string
	plugins map[string][]string // generators, transformers, validators -> entries
}

func (s *scan) visit(path string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if d.IsDir() {
		if path != s.dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		return nil
	}
	if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		s.problems = append(s.problems, fmt.Errorf("%s: YAML does not parse: %w", path, err))
		return nil
	}
	for _, n := range nodes {
		s.add(path, n)
	}
	return nil
}

func (s *scan) add(file string, n *yaml.RNode) {
	if _, ok := n.GetAnnotations()[runtimeutil.FunctionAnnotationKey]; ok {
		s.functionFiles[file] = true
	}
	switch {
	case n.GetKind() == v1alpha2.Kind && n.GetApiVersion() == v1alpha2.APIVersion:
		s.sources = append(s.sources, sourceDoc{name: n.GetName(), file: file})
		return
	case isKustomizeKustomization(file, n):
		k := kustomizationFile{file: file, plugins: map[string][]string{}}
		for _, field := range []string{"generators", "transformers", "validators"} {
			if entries, err := n.GetSlice(field); err == nil {
				for _, e := range entries {
					if entry, ok := e.(string); ok {
						k.plugins[field] = append(k.plugins[field], entry)
					}
				}
			}
		}
		s.kustomizations = append(s.kustomizations, k)
		return
	}
	labels := n.GetLabels()
	instance := labels[contract.LabelMiniCluster]
	if instance == "" || !contract.IsGenerated(labels, instance) {
		return
	}
	id := n.GetKind() + "/" + n.GetName()
	if first, ok := s.seen[id]; ok {
		d := duplicate{file: file, first: first, instance: instance}
		if _, ok := s.duplicates[d]; !ok {
			s.duplicateOrder = append(s.duplicateOrder, d)
		}
		s.duplicates[d] = append(s.duplicates[d], id)
		return
	}
	s.seen[id] = file
	s.byInstance[instance] = append(s.byInstance[instance], generatedObject{node: n, file: file})
}

// isKustomizeKustomization tells a kustomize kustomization file (not a Flux CD Kustomization).
func isKustomizeKustomization(file string, n *yaml.RNode) bool {
	switch filepath.Base(file) {
	case "kustomization.yaml", "kustomization.yml":
		return true
	}
	return n.GetKind() == "Kustomization" && strings.HasPrefix(n.GetApiVersion(), "kustomize.config.k8s.io/")
}

// checkKustomizations reports kustomizations that run KRM functions: kustomize-controller builds
// with plugins disabled (fluxcd/pkg/kustomize Build: krusty.Options{PluginConfig:
// DisabledPluginConfig()}), so such a kustomization fails there with "external plugins disabled".
func (s *scan) checkKustomizations() {
	for _, k := range s.kustomizations {
		for _, field := range []string{"generators", "transformers", "validators"} {
			for _, entry := range k.plugins[field] {
				target := filepath.Join(filepath.Dir(k.file), entry)
				if !s.functionFiles[target] {
					continue
				}
				s.problems = append(s.problems, fmt.Errorf(`%s: %s: %s configures a KRM function, and Flux CD's kustomize-controller runs none: it fails with "external plugins disabled". Render in CI instead (minicluster-fn render %s > rendered.yaml, see examples/fluxcd/render.sh) and list the rendered file under resources:`,
					k.file, field, entry, target))
			}
		}
	}
}

// checkSources reports MiniCluster documents without rendered output: Flux CD cannot generate it.
func (s *scan) checkSources() {
	for _, src := range s.sources {
		if _, ok := s.byInstance[src.name]; ok {
			continue
		}
		s.problems = append(s.problems, fmt.Errorf("%s: MiniCluster %s has no rendered manifests in %s, and Flux CD's kustomize-controller cannot generate them (it runs no KRM functions): render it in CI, e.g. minicluster-fn render %s > %s",
			src.file, src.name, s.dir, src.file, filepath.Join(s.dir, src.name+".yaml")))
	}
}

// newMiniCluster finds the roles of one MiniCluster's objects by what the objects say of
// themselves: the broker and keygen Jobs by their app.kubernetes.io/component label, whether the
// broker Job completes by its minicluster-fn.dev/lifetime label; the Service and the certificate
// are what the broker pods refer to.
func newMiniCluster(root, name string, objs []generatedObject) (MiniCluster, []error) {
	mc := MiniCluster{Name: name}
	var problems []error
	var broker *batchv1.Job
	var brokerFile string
	var keygenJobs []string
	for _, o := range objs {
		switch o.node.GetKind() {
		case "Job":
			switch o.node.GetLabels()[contract.LabelComponent] {
			case contract.ComponentKeygen:
				keygenJobs = append(keygenJobs, o.node.GetName())
			case contract.ComponentBroker:
				job := &batchv1.Job{}
				if err := decode(o.node, job); err != nil {
					problems = append(problems, fmt.Errorf("%s: Job %s: %w", o.file, o.node.GetName(), err))
					continue
				}
				if broker != nil {
					problems = append(problems, fmt.Errorf("%s: MiniCluster %s has two broker Jobs, %s and %s (in %s): remove the output of the earlier render",
						o.file, name, job.Name, broker.Name, brokerFile))
					continue
				}
				broker, brokerFile = job, o.file
			}
		case "Pod":
			mc.ServicesPod = o.node.GetName()
		}
	}
	if broker == nil {
		return mc, append(problems, fmt.Errorf("%s: MiniCluster %s has objects here (%s) but no broker Job (a Job labelled %s: %s): the directory holds part of its manifests; render it again",
			objs[0].file, name, describe(objs), contract.LabelComponent, contract.ComponentBroker))
	}
	// One Kustomization applies the directory of the broker Job: the MiniCluster's other objects
	// must be there too.
	if dir, err := filepath.Rel(root, filepath.Dir(brokerFile)); err == nil {
		mc.Dir = filepath.ToSlash(dir)
	}
	for _, o := range objs {
		if filepath.Dir(o.file) != filepath.Dir(brokerFile) {
			problems = append(problems, fmt.Errorf("%s: %s/%s of MiniCluster %s is not in the directory of its broker Job (%s), so no single Flux CD Kustomization would apply the whole MiniCluster: render each MiniCluster into one file",
				o.file, o.node.GetKind(), o.node.GetName(), name, brokerFile))
			break
		}
	}
	if len(keygenJobs) > 1 {
		problems = append(problems, fmt.Errorf("%s: MiniCluster %s has several keygen Jobs (%s): remove the output of the earlier render",
			brokerFile, name, strings.Join(keygenJobs, ", ")))
	}
	if len(keygenJobs) > 0 {
		mc.KeygenJob = keygenJobs[0]
	}
	switch broker.Labels[contract.LabelLifetime] {
	case contract.LifetimeCompletes:
	case contract.LifetimeUntilDeleted:
		mc.Persistent = broker.Annotations[contract.AnnotationLifetimeReason]
		if mc.Persistent == "" {
			mc.Persistent = "labelled " + contract.LabelLifetime + ": " + contract.LifetimeUntilDeleted
		}
	default:
		problems = append(problems, fmt.Errorf("%s: broker Job %s has no valid %s label (%q), which minicluster-fn writes: render MiniCluster %s again with this version",
			brokerFile, broker.Name, contract.LabelLifetime, broker.Labels[contract.LabelLifetime], name))
	}
	pod := broker.Spec.Template.Spec
	mc.BrokerJob, mc.Service = broker.Name, pod.Subdomain
	for _, v := range pod.Volumes {
		switch {
		case v.Name == v1alpha2.VolumeCurve && v.ConfigMap != nil:
			mc.CurveKind, mc.Curve = "ConfigMap", v.ConfigMap.Name
		case v.Name == v1alpha2.VolumeCurve && v.Secret != nil:
			mc.CurveKind, mc.Curve = "Secret", v.Secret.SecretName
		}
	}
	return mc, problems
}

func decode(n *yaml.RNode, obj any) error {
	data, err := n.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, obj)
}

func describe(objs []generatedObject) string {
	var ids []string
	for _, o := range objs {
		ids = append(ids, o.node.GetKind()+"/"+o.node.GetName())
	}
	return strings.Join(ids, ", ")
}
