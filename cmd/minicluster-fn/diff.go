package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/minicluster-fn/minicluster-fn/fn"
	"github.com/minicluster-fn/minicluster-fn/impact"
)

// The values of diff --output.
const (
	diffText     = "text"
	diffMarkdown = "markdown"
	diffJSON     = "json"
)

type diffOptions struct {
	base     string
	rendered bool
	output   string
	verbose  bool
	failOn   []string
}

func newDiffCmd() *cobra.Command {
	o := diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff OLD NEW | --base REF [PATH...] | --rendered OLD NEW",
		Short: "Say what a change does to each running MiniCluster: unchanged, resized in place, replaced, new certificate, ...",
		Long: `diff renders two revisions of MiniClusters and says, for each MiniCluster, what applying the
new one with a GitOps engine that prunes (Flux CD, Argo CD) does to the running cluster:

  added             a new cluster starts
  removed           its broker Job and running work end; a certificate made for it is deleted
  unchanged         no object changes
  metadata only     labels or annotations are patched; nothing restarts
  updated           objects change, but not the broker Job: the brokers keep running
  resized in place  the broker Job's size is patched (within maxSize): running work goes on
  replaced          the broker Job is recreated: running work ends
  new certificate   the brokers mount another certificate: every broker restarts with a new key

The impact comes from the two renders (which objects are created, pruned or changed, and
whether a change can be patched), never from a list of fields. The causes are the MiniCluster's
changed fields (spec.containers[0].command) that alone have that impact; with --rendered, what
changed in the objects (container flux-sample: image). A rename is a removal and an addition.

What it compares:
  diff OLD NEW               MiniCluster files or directories, as render reads them ("-": stdin)
  diff --base REF [PATH...]  the MiniClusters under PATH (default .) at Git revision REF
                             against the working tree (read with git archive)
  diff --rendered OLD NEW    two rendered outputs, files or directories: what kustomize build,
                             render.sh or kpt wrote, so overlays and patches count`,
		Example: `  # In CI, on a pull request: what merging it does
  git fetch origin main
  minicluster-fn diff --base origin/main hpc/ --output markdown > comment.md

  # Make it a required check
  minicluster-fn diff --base origin/main hpc/ --fail-on replaced,removed,new-certificate

  # Two kustomize builds
  kustomize build --enable-alpha-plugins --enable-exec overlays/prod > new.yaml
  minicluster-fn diff --rendered old.yaml new.yaml -v`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			switch {
			case o.base != "" && o.rendered:
				return errors.New("--base and --rendered: give one of them")
			case o.base == "" && len(args) != 2:
				return fmt.Errorf("expected OLD and NEW, got %d arguments", len(args))
			case o.base == "" && args[0] == "-" && args[1] == "-":
				return errors.New(`only one of OLD and NEW can be "-" (stdin)`)
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			failOn, err := parseFailOn(o.failOn)
			if err != nil {
				return usageErrorf(cmd, "--fail-on: %v", err)
			}
			if !slices.Contains([]string{diffText, diffMarkdown, diffJSON}, o.output) {
				return usageErrorf(cmd, "--output %q: must be %s, %s or %s", o.output, diffText, diffMarkdown, diffJSON)
			}
			return runDiff(o, args, failOn, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.base, "base", "", "compare the MiniClusters under PATH... at this Git revision with the working tree")
	f.BoolVar(&o.rendered, "rendered", false, "OLD and NEW are rendered output (kustomize build, render.sh, kpt), not MiniClusters")
	f.StringVarP(&o.output, "output", "o", diffText, "text, markdown (a table for a pull-request comment) or json")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "also list the objects that change, and how")
	f.StringSliceVar(&o.failOn, "fail-on", nil, "exit 1 when any MiniCluster has one of these impacts (comma-separated: "+impactSlugs()+")")
	return cmd
}

func impactSlugs() string {
	var slugs []string
	for _, k := range impact.Kinds() {
		slugs = append(slugs, k.Slug())
	}
	return strings.Join(slugs, ", ")
}

func parseFailOn(slugs []string) ([]impact.Kind, error) {
	var kinds []impact.Kind
	for _, s := range slugs {
		k, err := impact.ParseKind(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

func runDiff(o diffOptions, args []string, failOn []impact.Kind, stdin io.Reader, out, errOut io.Writer) error {
	var old, new []impact.Set
	var err error
	switch {
	case o.rendered:
		if old, err = readRenderedSets(args[0], stdin); err == nil {
			new, err = readRenderedSets(args[1], stdin)
		}
	case o.base != "":
		old, new, err = gitSets(o.base, args, errOut)
	default:
		if old, err = renderSets([]string{args[0]}, stdin, errOut, nil); err == nil {
			new, err = renderSets([]string{args[1]}, stdin, errOut, nil)
		}
		relativeFiles(old, args[0])
		relativeFiles(new, args[1])
	}
	if err != nil {
		return err
	}
	results := impact.Compare(old, new)
	switch o.output {
	case diffJSON:
		err = writeDiffJSON(out, results)
	case diffMarkdown:
		writeDiffMarkdown(out, results, o.verbose)
	default:
		writeDiffText(out, results, o.verbose)
	}
	if err != nil {
		return err
	}
	return failOnImpacts(results, failOn)
}

// renderSets renders the MiniClusters of the sources. Problems are printed as render prints them,
// each file named by problemFile (nil: as read).
func renderSets(sources []string, stdin io.Reader, errOut io.Writer, problemFile func(string) string) ([]impact.Set, error) {
	nodes, results := readMiniClusters(sources, stdin, false)
	var err error = errInvalidInput
	if len(results) == 0 {
		if len(nodes) == 0 {
			return nil, nil
		}
		rl := &framework.ResourceList{Items: nodes}
		var manifests []fn.ManifestSet
		if manifests, err = (fn.Processor{Standalone: true}).Generate(rl); err == nil {
			return setsOf(manifests)
		}
		results = rl.Results
	}
	for _, r := range results {
		if r.File != nil && problemFile != nil {
			r.File.Path = problemFile(r.File.Path)
		}
	}
	printResults(errOut, results)
	return nil, err
}

// relativeFiles names the files of the MiniClusters read from root by their paths inside it, so
// that a MiniCluster moved to another file says so; the MiniClusters of a file compared with
// another file have none.
func relativeFiles(sets []impact.Set, root string) {
	for i := range sets {
		rel, err := filepath.Rel(root, sets[i].File)
		if err != nil || rel == "." {
			rel = ""
		}
		sets[i].File = rel
	}
}

func setsOf(manifests []fn.ManifestSet) ([]impact.Set, error) {
	sets := make([]impact.Set, 0, len(manifests))
	for _, m := range manifests {
		s, err := impact.FromManifestSet(m)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// gitSets renders the MiniClusters under the paths (default: the current directory) at revision
// ref, read with git archive into a temporary directory, and in the working tree. A path that one
// side lacks holds no MiniCluster there.
func gitSets(ref string, paths []string, errOut io.Writer) (old, new []impact.Set, err error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	if _, err := git("rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return nil, nil, fmt.Errorf("--base %s: not a Git revision here: %w", ref, err)
	}
	var atRef []string
	for _, p := range paths {
		listed, err := git("ls-tree", "--name-only", ref, "--", p)
		if err != nil {
			return nil, nil, err
		}
		if len(bytes.TrimSpace(listed)) > 0 {
			atRef = append(atRef, p)
		}
	}
	tmp, err := os.MkdirTemp("", "minicluster-fn-diff-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	if len(atRef) > 0 {
		archive, err := git(append([]string{"archive", "--format=tar", ref, "--"}, atRef...)...)
		if err != nil {
			return nil, nil, err
		}
		if err := extractTar(archive, tmp); err != nil {
			return nil, nil, fmt.Errorf("reading git archive %s: %w", ref, err)
		}
		var sources []string
		for _, p := range atRef {
			sources = append(sources, filepath.Join(tmp, p))
		}
		// The files of the revision are named as in the working tree, so that a MiniCluster moved
		// to another file says so; problems name the revision.
		relative := func(file string) string {
			rel, err := filepath.Rel(tmp, file)
			if err != nil {
				return file
			}
			return rel
		}
		atRevision := func(file string) string { return ref + ":" + relative(file) }
		if old, err = renderSets(sources, nil, errOut, atRevision); err != nil {
			var results framework.Results
			if errors.Is(err, errInvalidInput) || errors.As(err, &results) {
				return nil, nil, fmt.Errorf("the MiniClusters at %s are invalid (above); compare with a revision where they are valid", ref)
			}
			return nil, nil, err
		}
		for i := range old {
			old[i].File = relative(old[i].File)
		}
	}
	var present []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			present = append(present, p)
		} else if !slices.Contains(atRef, p) {
			return nil, nil, fmt.Errorf("%s is neither in the working tree nor at %s", p, ref)
		}
	}
	if len(present) > 0 {
		if new, err = renderSets(present, nil, errOut, nil); err != nil {
			return nil, nil, err
		}
		for i := range new {
			new[i].File = filepath.Clean(new[i].File)
		}
	}
	return old, new, nil
}

// git runs git in the current directory and returns its output; its error says what git said.
func git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %s", args[0], msg)
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// extractTar writes the regular files and directories of a tar archive under dir.
func extractTar(archive []byte, dir string) error {
	r := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return fmt.Errorf("%s: outside the archive's directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return err
			}
		}
	}
}

// readRenderedSets reads rendered output: a file, "-" (stdin), or every *.yaml and *.yml file
// under a directory, named by its path inside it.
func readRenderedSets(src string, stdin io.Reader) ([]impact.Set, error) {
	var files []impact.RenderedFile
	info, err := os.Stat(src)
	switch {
	case src == "-" || (err == nil && !info.IsDir()):
		data, err := readInput(src, stdin)
		if err != nil {
			return nil, err
		}
		files = append(files, impact.RenderedFile{Path: src, Data: data})
	case err != nil:
		return nil, err
	default:
		err := filepath.WalkDir(src, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (filepath.Ext(file) != ".yaml" && filepath.Ext(file) != ".yml") {
				return err
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(src, file)
			if err != nil {
				return err
			}
			files = append(files, impact.RenderedFile{Path: rel, Data: data})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sets, err := impact.RenderedSets(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if src == "-" || !info.IsDir() {
		relativeFiles(sets, src) // one file compared with another: no moves
	}
	return sets, nil
}

// failOnImpacts is the error of --fail-on: the MiniClusters with an impact it names.
func failOnImpacts(results []impact.Result, failOn []impact.Kind) error {
	var hits []string
	for _, k := range failOn {
		var names []string
		for _, r := range results {
			if r.Impact == k {
				names = append(names, r.ID())
			}
		}
		if len(names) > 0 {
			hits = append(hits, fmt.Sprintf("%s: %s", k, strings.Join(names, ", ")))
		}
	}
	if len(hits) == 0 {
		return nil
	}
	return fmt.Errorf("the change has impacts that --fail-on names: %s", strings.Join(hits, "; "))
}

func writeDiffText(w io.Writer, results []impact.Result, verbose bool) {
	for _, r := range results {
		line := r.ID() + ": " + r.Impact.String()
		if len(r.Causes) > 0 {
			line += ": " + strings.Join(r.Causes, ", ")
		}
		for _, s := range append([]string{r.Effect}, r.Notes...) {
			if s != "" {
				line += "; " + s
			}
		}
		fmt.Fprintln(w, line)
		if verbose {
			for _, c := range r.Objects {
				fmt.Fprintln(w, "    "+describeObjectChange(c))
			}
		}
	}
	fmt.Fprintln(w, impact.Summary(results))
}

// maxFields bounds the fields listed for one object.
const maxFields = 6

func describeObjectChange(c impact.ObjectChange) string {
	s := c.Object + ": " + string(c.Change)
	if len(c.Fields) > 0 {
		fields := c.Fields
		more := ""
		if len(fields) > maxFields {
			more = fmt.Sprintf(" and %d more", len(fields)-maxFields)
			fields = fields[:maxFields]
		}
		s += " (" + strings.Join(fields, ", ") + more + ")"
	}
	return s
}

// writeDiffMarkdown writes a summary line and a table of the MiniClusters that change, for a
// pull-request comment; the unchanged ones are only counted.
func writeDiffMarkdown(w io.Writer, results []impact.Result, verbose bool) {
	fmt.Fprintf(w, "**minicluster-fn diff**: %s\n", impact.Summary(results))
	var changed []impact.Result
	for _, r := range results {
		if r.Impact != impact.Unchanged {
			changed = append(changed, r)
		}
	}
	if len(changed) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| MiniCluster | Impact | Cause | What happens |\n|---|---|---|---|")
	for _, r := range changed {
		var causes []string
		for _, c := range r.Causes {
			causes = append(causes, "`"+c+"`")
		}
		what := strings.Join(slices.DeleteFunc(append([]string{r.Effect}, r.Notes...), func(s string) bool { return s == "" }), "; ")
		fmt.Fprintf(w, "| %s | **%s** | %s | %s |\n", cell(r.ID()), r.Impact, cell(strings.Join(causes, ", ")), cell(what))
	}
	if verbose {
		fmt.Fprint(w, "\n<details><summary>Objects</summary>\n\n")
		for _, r := range changed {
			for _, c := range r.Objects {
				fmt.Fprintf(w, "- %s: %s\n", r.ID(), cell(describeObjectChange(c)))
			}
		}
		fmt.Fprintln(w, "\n</details>")
	}
}

// cell escapes a table cell's pipes.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func writeDiffJSON(w io.Writer, results []impact.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if results == nil {
		results = []impact.Result{}
	}
	return enc.Encode(struct {
		Kind         string          `json:"kind"`
		Summary      string          `json:"summary"`
		MiniClusters []impact.Result `json:"miniClusters"`
	}{"MiniClusterDiff", impact.Summary(results), results})
}
