package generators

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// The entrypoint ConfigMap: the scripts the broker pods run and the broker config, rendered from
// the embedded templates in templates/ (Go text/template; files named part-*.sh hold the
// {{define}} blocks several scripts share). Every template gets the pod's layout (podLayout,
// layout.go) as .Pod and takes every path from it.
//
// Runtime contract (what the scripts read and write; the podLayout fields in brackets):
//   - env: JOB_COMPLETION_INDEX (Indexed Job; fallback: the hostname's last "-" field),
//     HOSTNAME (fallback: hostname(1)); /etc/hosts for the pods' DNS domain.
//   - flux-init.sh writes the broker config [BrokerConfig], the hostlist [Hostlist], the view
//     [View, ViewSoftware] and the marker [InitDone].
//   - broker-ready.sh (the broker container's startupProbe) tests the joined marker [Joined].
//   - wait-<i>.sh writes the certificate (0600) [CurveCert], the resources [R], the helper scripts
//     [ViewEnv, Connect, LoadFluxion] and the markers [BrokerDone; Joined, once the broker's
//     local socket [Socket] says it runs].
//
// User text in the scripts: values that are data (paths, flux.environment values, wrap, topology,
// archive.path, logs) are single-quoted. The runFlux command is data too: command='<verbatim>',
// split into words at run time by eval into an array, so quotes, escapes and $VAR work as on a
// shell command line (expanded when the broker starts, as the operator's command="..." did) and a
// quote or $ in it can no longer break the script; control operators (&&, |, ;) are not
// supported there (the operator passed them to flux as literal words; use commands.script).
// Shell code stays code: commands.* hooks, commands.prefix, flux.submitCommand and
// flux.optionFlags (words), the sidecar command, and batch lines (inside a quoted here-document).
//
// broker.toml and the hostlist hold two placeholders (podLayout's JobName and DNSSuffix) that
// flux-init.sh replaces at pod start.

// templateFS holds the templates: files named part-*.sh hold the {{define}} blocks the scripts
// share, every other file is a template render executes, by its file name.
//
//go:embed templates
var templateFS embed.FS

// scriptTemplates are the templates render executes. Each is parsed on first use, with the parts,
// so a process parses only the scripts it writes (hello-world writes no start.sh), and one that
// writes none (version, a ResourceList without MiniClusters) parses nothing.
var scriptTemplates = func() map[string]scriptTemplate {
	files, err := fs.ReadDir(templateFS, "templates")
	if err != nil {
		panic(err)
	}
	m := map[string]scriptTemplate{}
	for _, f := range files {
		if name := f.Name(); !strings.HasPrefix(name, "part-") {
			m[name] = newScriptTemplate(name)
		}
	}
	return m
}()

type scriptTemplate struct {
	parsed func() *template.Template
	// size is what render reserves for the output: the template's length and some (the output is
	// mostly the template's text; hello-world's scripts are shorter than their templates).
	size int
}

// partsTemplate is the parts, parsed once, in a template set the scripts' sets are cloned from.
var partsTemplate = sync.OnceValue(parseParts)

func parseParts() *template.Template {
	return template.Must(template.New("entrypoint").
		Option("missingkey=error").
		Funcs(template.FuncMap{"shq": shellQuote, "toml": tomlString}).
		ParseFS(templateFS, "templates/part-*.sh"))
}

// parseScript parses the script template name in a copy of the parts' set.
func parseScript(parts *template.Template, name string) *template.Template {
	return template.Must(template.Must(parts.Clone()).ParseFS(templateFS, "templates/"+name)).Lookup(name)
}

func newScriptTemplate(name string) scriptTemplate {
	info, err := fs.Stat(templateFS, "templates/"+name)
	if err != nil {
		panic(err)
	}
	return scriptTemplate{
		parsed: sync.OnceValue(func() *template.Template { return parseScript(partsTemplate(), name) }),
		size:   int(info.Size()) + 1<<10,
	}
}

// entrypointData returns the entrypoint ConfigMap's data: ConfigMap key -> content. mc is defaulted and valid.
func entrypointData(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, n names) (map[string]string, error) {
	s := &mc.Spec
	common := newScriptCommon(mc, opts)
	hosts := hostlist(mc)
	data := map[string]string{}

	if s.Flux.BrokerConfig != "" {
		data[BrokerConfigKey] = s.Flux.BrokerConfig
	} else {
		out, err := render("broker.toml", newBrokerConfigData(mc, common.Pod, hosts))
		if err != nil {
			return nil, err
		}
		data[BrokerConfigKey] = out
	}

	out, err := render("init.sh", initData{
		scriptCommon:       common,
		ViewName:           s.Flux.Container.Name,
		BrokerOwner:        brokerOwner(mc),
		Hostlist:           hosts.list,
		ServiceFallback:    n.Service,
		CustomBrokerConfig: s.Flux.BrokerConfig != "",
		MainBroker:         mainBrokerOf(hosts, common.Pod),
	})
	if err != nil {
		return nil, err
	}
	data[InitScriptKey] = out

	if out, err = render("ready.sh", readyData{Pod: common.Pod, Wait: int(readyCheckWait.Seconds())}); err != nil {
		return nil, err
	}
	data[ReadyScriptKey] = out

	for i := range s.Containers {
		c := &s.Containers[i]
		switch {
		case c.RunFlux:
			out, err := render("wait.sh", newWaitData(mc, opts, i, common))
			if err != nil {
				return nil, err
			}
			data[WaitScriptKey(i)] = out
		case !c.NoWrapEntrypoint:
			out, err := render("start.sh", newStartData(mc, i, common))
			if err != nil {
				return nil, err
			}
			data[StartScriptKey(i)] = out
		}
	}
	return data, nil
}

func render(name string, data any) (string, error) {
	t := scriptTemplates[name]
	var b strings.Builder
	b.Grow(t.size)
	if err := t.parsed().Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering entrypoint template %s: %w", name, err)
	}
	return b.String(), nil
}

// scriptCommon is what the shared blocks (part-*.sh) need.
type scriptCommon struct {
	Pod          podLayout
	Quiet        bool
	Strict       bool
	ViewDisabled bool
	// ViewFromImage: the view image's volume has the view (view-source ImageVolume).
	ViewFromImage bool
	// InitInBroker: the broker script runs flux-init.sh, and the pod has no init container.
	InitInBroker    bool
	PythonPath      string
	SchedulerSimple bool
	Environment     []envVar // flux.environment, sorted by name
}

type envVar struct{ Name, Value string }

// hook is one commands.* entry: shell code, with the output redirect of quiet mode.
type hook struct{ Name, Code, Redirect string }

// heredoc is a file written verbatim by a quoted here-document.
type heredoc struct{ Path, Body, Delimiter string }

// readyData is what broker-ready.sh needs: the marker's path and how long one check waits for it.
type readyData struct {
	Pod  podLayout
	Wait int // seconds
}

type initData struct {
	scriptCommon
	ViewName string
	// BrokerOwner is "uid[:gid]" of the broker container when it is known and not root.
	BrokerOwner        string
	Hostlist           string // may hold placeholderJobName
	ServiceFallback    string
	CustomBrokerConfig bool
	// MainBroker is the main broker's DNS name with placeholders, when broker.toml names it in
	// an entry of its own (mainBrokerURI); "" otherwise.
	MainBroker string
}

type waitData struct {
	scriptCommon
	Index int
	Key   string
	Timed bool
	// Command is the effective command: containers[i].command, or the commands.script runner.
	Command   string
	Script    *heredoc
	OutputDir string
	Hooks     struct{ Init, Pre, BrokerPre, WorkerPre, Post hook }

	Interactive bool
	// Persistent: the brokers run until the cluster is deleted (MiniCluster.RunsUntilDeleted).
	Persistent     bool
	MainPort       int // the main broker's TBON port, in its bootstrap.hosts entry
	DisableSocket  bool
	ConnectTimeout string
	Topology       string
	Quorum         int32
	Zeromq         bool
	LogLevel       int32
	ArchivePath    string

	Batch    *batchData
	Launcher bool
	NodeSpec string
	// OptionFlags, SubmitCommand and Prefix are shell words the user wrote, inserted as code
	// (like the commands.* hooks): quotes in them work as in a shell.
	OptionFlags     string
	Debug           bool
	SubmitCommand   string
	Prefix          string
	Wrap            string
	CompleteWorkers bool
	// FailWithCommand: the main broker's container exits with its command's failed status, and
	// a worker whose broker failed with ExitPodRetry (failsOnCommand).
	FailWithCommand bool
	// ExitPodRetry is the status that asks the Job for a new pod (exitPodRetry).
	ExitPodRetry int
	// BatchNotRun is the batch job's status when flux batch failed or the batch job ended with an
	// exception, and the most its failed jobs count (batchNotRun).
	BatchNotRun int
	// NoJobCleanupEnv, when set, is the variable that keeps flux-core's rc1 from pushing its
	// cleanup commands on the main broker: see noJobCleanup.
	NoJobCleanupEnv string
}

type batchData struct {
	Raw       bool
	Lines     []batchLine
	Delimiter string
}

type batchLine struct {
	Text          string
	Error, Output string
}

type startData struct {
	scriptCommon
	Index        int
	Key          string
	Name         string
	Command      string
	Script       *heredoc
	NoWaitSocket bool
	Hooks        struct{ Init, ServicePre, Post hook }
}

type brokerConfigData struct {
	Pod         podLayout
	DefaultPort int
	Hosts       []hostEntry
	QueuePolicy string
	// SchedulerSimple selects sched-simple over Fluxion by flux modprobe's alternatives.
	SchedulerSimple bool
}

type hostEntry struct{ Host, Bind, Connect string }

func newScriptCommon(mc *v1alpha2.MiniCluster, opts v1alpha2.Options) scriptCommon {
	f := &mc.Spec.Flux
	c := scriptCommon{
		Pod:             newPodLayout(f.Container.MountPath),
		Quiet:           mc.Spec.Logging.Quiet,
		Strict:          mc.Spec.Logging.Strict,
		ViewDisabled:    f.Container.Disable,
		ViewFromImage:   opts.ViewSource == v1alpha2.ViewSourceImageVolume,
		InitInBroker:    initInBroker(mc, opts),
		PythonPath:      f.Container.PythonPath,
		SchedulerSimple: f.Scheduler.Simple,
	}
	for _, k := range slices.Sorted(maps.Keys(f.Environment)) {
		c.Environment = append(c.Environment, envVar{Name: k, Value: f.Environment[k]})
	}
	return c
}

// brokerOwner is the user ("uid", or "uid:gid" when runAsGroup is set) the runFlux container
// runs as, from its securityContext, else the pod's: "" when that is root or not set (then the
// image decides, which the init container cannot know).
func brokerOwner(mc *v1alpha2.MiniCluster) string {
	pod := &mc.Spec.Pod.SecurityContext
	for _, c := range mc.Spec.Containers {
		if !c.RunFlux {
			continue
		}
		uid, gid := c.SecurityContext.RunAsUser, c.SecurityContext.RunAsGroup
		if uid == nil {
			uid = pod.RunAsUser
		}
		if gid == nil {
			gid = pod.RunAsGroup
		}
		switch {
		case uid == nil || *uid == 0:
			return ""
		case gid == nil:
			return strconv.FormatInt(*uid, 10)
		}
		return strconv.FormatInt(*uid, 10) + ":" + strconv.FormatInt(*gid, 10)
	}
	return ""
}

func newBrokerConfigData(mc *v1alpha2.MiniCluster, pod podLayout, hosts hostlistParts) brokerConfigData {
	d := brokerConfigData{
		Pod:             pod,
		DefaultPort:     v1alpha2.DefaultBrokerPort,
		QueuePolicy:     mc.Spec.Flux.Scheduler.QueuePolicy,
		SchedulerSimple: mc.Spec.Flux.Scheduler.Simple,
	}
	if lb := hosts.lead; lb != nil {
		d.Hosts = append(d.Hosts, hostEntry{
			Host:    lb.Address,
			Bind:    fmt.Sprintf("tcp://eth0:%d", lb.Port),
			Connect: fmt.Sprintf("tcp://%s:%d", lb.Address, lb.Port),
		})
	}
	if hosts.main != "" {
		// The main broker's own entry, with the address the workers connect to spelled out: a
		// worker whose main broker's pod was replaced while the old one is still a name in DNS
		// (its node lost) connects to the one that answers instead (wait.sh, main_address).
		d.Hosts = append(d.Hosts, hostEntry{Host: hosts.main, Connect: mainBrokerURI(pod)})
	}
	if hosts.rest != "" {
		d.Hosts = append(d.Hosts, hostEntry{Host: hosts.rest})
	}
	return d
}

// mainBrokerOf is mainBrokerName when the broker config has the main broker's entry, else "".
func mainBrokerOf(hosts hostlistParts, pod podLayout) string {
	if hosts.main == "" {
		return ""
	}
	return mainBrokerName(pod)
}

// mainBrokerName is the DNS name of the main broker's pod, placeholders and all
// (<job>-0.<pods' DNS domain>), as init.sh writes it for the broker script.
func mainBrokerName(pod podLayout) string {
	return pod.JobName + "-0." + pod.DNSSuffix
}

// mainBrokerURI is the TBON address of the main broker by its DNS name.
func mainBrokerURI(pod podLayout) string {
	return fmt.Sprintf("tcp://%s:%d", mainBrokerName(pod), v1alpha2.DefaultBrokerPort)
}

// hostlistParts is the broker hostlist in rank order: list is the whole (the hostlist file and
// flux R encode --hosts); with a lead broker, the config lists lead and rest as two host entries.
type hostlistParts struct {
	list string
	lead *v1alpha2.FluxBroker
	// main is the main broker's host (<job>-0) when it has an entry of its own: the broker Job's
	// index 0 with neither a lead broker nor a hostlist of the user's. rest is the others.
	main string
	rest string
}

// hostlist is <job>-[0-<maxSize-1>] (placeholder job name), or the lead broker's address and
// <leadBroker.name>-[1-<size-1>], then <cluster>-[0-<size-1>] per bursting cluster;
// flux.bursting.hostlist replaces it when set.
func hostlist(mc *v1alpha2.MiniCluster) hostlistParts {
	b := &mc.Spec.Flux.Bursting
	var parts hostlistParts
	var own, clusters []string // this MiniCluster's hosts, then the bursting clusters'
	parts.lead = b.LeadBroker
	switch {
	case b.Hostlist != "":
		// Verbatim: the lead broker's address, if any, then the user's list.
		parts.rest = b.Hostlist
		parts.list = b.Hostlist
		if parts.lead != nil {
			parts.list = parts.lead.Address + "," + b.Hostlist
		}
		return parts
	case b.LeadBroker != nil:
		if b.LeadBroker.Size > 1 {
			own = append(own, hostRange(b.LeadBroker.Name, 1, b.LeadBroker.Size-1))
		}
	default:
		parts.main = hostRange(placeholderJobName, 0, 1)
		if mc.Spec.MaxSize > 1 {
			own = append(own, hostRange(placeholderJobName, 1, mc.Spec.MaxSize-1))
		}
	}
	for _, c := range b.Clusters {
		clusters = append(clusters, hostRange(c.Name, 0, c.Size))
	}
	parts.rest = strings.Join(append(own, clusters...), ",")
	switch {
	case parts.lead != nil:
		parts.list = strings.Join(append(append([]string{parts.lead.Address}, own...), clusters...), ",")
	default:
		parts.list = strings.Join(append([]string{hostRange(placeholderJobName, 0, mc.Spec.MaxSize)}, clusters...), ",")
	}
	return parts
}

// hostRange is prefix-<start> for one host, else prefix-[<start>-<start+count-1>].
func hostRange(prefix string, start, count int32) string {
	if count == 1 {
		return fmt.Sprintf("%s-%d", prefix, start)
	}
	return fmt.Sprintf("%s-[%d-%d]", prefix, start, start+count-1)
}

func newWaitData(mc *v1alpha2.MiniCluster, opts v1alpha2.Options, i int, common scriptCommon) waitData {
	s := &mc.Spec
	c := &s.Containers[i]
	d := waitData{
		scriptCommon:    common,
		Index:           i,
		Key:             WaitScriptKey(i),
		Timed:           s.Logging.Timed,
		Command:         c.Command,
		OutputDir:       c.Logs,
		Interactive:     s.Interactive,
		Persistent:      mc.RunsUntilDeleted() != "",
		MainPort:        v1alpha2.DefaultBrokerPort,
		DisableSocket:   s.Flux.DisableSocket,
		ConnectTimeout:  s.Flux.ConnectTimeout,
		Topology:        s.Flux.Topology,
		Quorum:          quorum(mc),
		Zeromq:          s.Logging.Zeromq,
		ArchivePath:     s.Archive.Path,
		Launcher:        c.Launcher,
		NodeSpec:        nodeSpec(mc),
		OptionFlags:     strings.TrimSpace(s.Flux.OptionFlags),
		Debug:           s.Logging.Debug,
		SubmitCommand:   strings.TrimSpace(s.Flux.SubmitCommand),
		Prefix:          strings.TrimSpace(c.Commands.Prefix),
		Wrap:            s.Flux.Wrap,
		CompleteWorkers: s.Flux.CompleteWorkers,
		FailWithCommand: failsOnCommand(mc, opts),
		ExitPodRetry:    exitPodRetry,
		BatchNotRun:     batchNotRun,
	}
	if d.OutputDir == "" {
		d.OutputDir = v1alpha2.DefaultOutputDir
	}
	if d.SubmitCommand == "" {
		d.SubmitCommand = "flux submit"
	}
	if s.Flux.LogLevel != nil {
		d.LogLevel = *s.Flux.LogLevel
	}
	if s.Logging.Quiet {
		d.LogLevel = 0
	}
	if c.Commands.Script != "" {
		d.Script = newHeredoc(common.Pod.CustomScript, c.Commands.Script)
		d.Command = "/bin/bash " + common.Pod.CustomScript
	}
	if c.Batch && d.Command != "" {
		d.Batch = newBatch(d.Command, c.BatchRaw, d.OutputDir)
	}
	if noJobCleanup(d) {
		d.NoJobCleanupEnv = fluxDisableJobCleanupEnv
	}
	quietOut, quietAll := quietRedirects(s.Logging.Quiet)
	d.Hooks.Init = newHook("init", c.Commands.Init, quietOut)
	d.Hooks.Pre = newHook("pre", c.Commands.Pre, quietAll)
	d.Hooks.BrokerPre = newHook("brokerPre", c.Commands.BrokerPre, quietAll)
	d.Hooks.WorkerPre = newHook("workerPre", c.Commands.WorkerPre, quietAll)
	d.Hooks.Post = newHook("post", c.Commands.Post, "")
	return d
}

// batchNotRun is the highest exit status: in batch mode (failsOnCommand), the main broker's
// initial program returns it when flux batch failed or the batch job ended with an exception, and
// the batch job's status, the number of its jobs that failed, stops there.
const batchNotRun = 255

// fluxDisableJobCleanupEnv in the main broker's environment keeps flux-core's rc1 from pushing
// the cleanup commands that stop the queue, cancel running jobs and wait for the queue to idle
// when the instance shuts down (etc/modprobe/rc1.py of flux-core 0.88; earlier versions' shell rc1
// test the same variable).
const fluxDisableJobCleanupEnv = "FLUX_DISABLE_JOB_CLEANUP"

// noJobCleanup says whether the main broker can shut down without flux-core's cleanup commands:
// its initial program is a flux submit --watch of the command, or a flux batch followed by flux
// job wait --all, so no job of its own is left when it ends. Not for a launcher (the user's
// command may leave jobs running), a cluster that runs until deleted (the cleanup stops the
// users' jobs when it is), or an archive (its content is restored later and must hold no job
// that was cut off).
func noJobCleanup(d waitData) bool {
	return d.Command != "" && !d.Launcher && !d.Persistent && d.ArchivePath == ""
}

func newStartData(mc *v1alpha2.MiniCluster, i int, common scriptCommon) startData {
	s := &mc.Spec
	c := &s.Containers[i]
	d := startData{
		scriptCommon: common,
		Index:        i,
		Key:          StartScriptKey(i),
		Name:         c.Name,
		Command:      strings.TrimRight(c.Command, "\n"),
		NoWaitSocket: s.Flux.NoWaitSocket,
	}
	if c.Commands.Script != "" {
		d.Script = newHeredoc(common.Pod.CustomScript, c.Commands.Script)
	}
	quietOut, quietAll := quietRedirects(s.Logging.Quiet)
	d.Hooks.Init = newHook("init", c.Commands.Init, quietOut)
	d.Hooks.ServicePre = newHook("servicePre", c.Commands.ServicePre, quietAll)
	d.Hooks.Post = newHook("post", c.Commands.Post, "")
	return d
}

// quietRedirects are the operator's redirects of hook output in quiet mode: commands.init loses
// stdout, the other pre hooks stdout and stderr.
func quietRedirects(quiet bool) (out, all string) {
	if !quiet {
		return "", ""
	}
	return "> /dev/null", "> /dev/null 2>&1"
}

func newHook(name, code, redirect string) hook {
	code = strings.TrimRight(code, " \t\n")
	if strings.TrimSpace(code) == "" {
		return hook{Name: name}
	}
	return hook{Name: name, Code: code, Redirect: redirect}
}

// newBatch turns the command's lines into the batch script: one flux submit per non-empty line,
// numbered by line (job-<line>.out, as the operator does), or the lines verbatim with batchRaw.
func newBatch(command string, raw bool, outputDir string) *batchData {
	b := &batchData{Raw: raw}
	var texts []string
	for i, line := range strings.Split(command, "\n") {
		if line == "" {
			continue
		}
		texts = append(texts, line)
		b.Lines = append(b.Lines, batchLine{
			Text:   line,
			Error:  path.Join(outputDir, fmt.Sprintf("job-%d.err", i)),
			Output: path.Join(outputDir, fmt.Sprintf("job-%d.out", i)),
		})
	}
	b.Delimiter = heredocDelimiter(texts)
	return b
}

func newHeredoc(p, body string) *heredoc {
	body = strings.TrimSuffix(body, "\n")
	return &heredoc{Path: p, Body: body, Delimiter: heredocDelimiter(strings.Split(body, "\n"))}
}

// heredocDelimiter is a here-document delimiter that no line of the body equals.
func heredocDelimiter(lines []string) string {
	used := map[string]bool{}
	for _, l := range lines {
		used[l] = true
	}
	d := "MINICLUSTER_FN_EOF"
	for i := 1; used[d]; i++ {
		d = "MINICLUSTER_FN_EOF_" + strconv.Itoa(i)
	}
	return d
}

// quorum is the operator's broker.quorum: minSize when set, else size when the cluster may grow
// (maxSize > size), else none (all ranks).
func quorum(mc *v1alpha2.MiniCluster) int32 {
	switch {
	case mc.Spec.MinSize != 0:
		return mc.Spec.MinSize
	case mc.Spec.MaxSize != mc.Spec.Size:
		return mc.Spec.Size
	}
	return 0
}

// nodeSpec is the operator's node and task flags: -N <size> -n<tasks> when tasks >= size,
// -n<tasks> when fewer, -N <size> when tasks is 0.
func nodeSpec(mc *v1alpha2.MiniCluster) string {
	size := mc.Spec.Size
	tasks := int32(v1alpha2.DefaultTasks)
	if mc.Spec.Tasks != nil {
		tasks = *mc.Spec.Tasks
	}
	switch {
	case tasks == 0:
		return fmt.Sprintf("-N %d", size)
	case tasks >= size:
		return fmt.Sprintf("-N %d -n%d", size, tasks)
	}
	return fmt.Sprintf("-n%d", tasks)
}

// shellQuote quotes s as one bash word: unchanged when it only has characters bash never treats
// specially, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:=@%+,-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
