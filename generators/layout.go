package generators

import (
	"path"

	corev1 "k8s.io/api/core/v1"
)

// Every path inside the pods comes from this file: the mount points of the pod specs (job.go) and
// the files the scripts read and write, which every script template gets as .Pod (a podLayout).

// The volumes' mount points, and other fixed paths.
const (
	EntrypointMountPath = "/flux_operator" // the entrypoint ConfigMap's keys are its files
	CurveMountPath      = "/flux_operator_curve"
	softwareMountPath   = "/opt/software"
	viewSoftwareDir     = "software" // in the view volume: the view image's /opt/software
	homeMountPath       = "/home/flux-operator"

	// The view image's flux install: /opt/view links to /opt/views/._view/<hash>.
	viewImageLink = "/opt/view"
	viewImageDirs = "/opt/views/._view"
	// The image volume of the view image (view-source ImageVolume): its /opt/software, mounted at
	// softwareMountPath, and the whole image, mounted in the view volume at viewImageDir.
	// Mounted there rather than at /opt/views, where an application image built with spack has a
	// view of its own.
	viewImageSoftwareSubPath = "opt/software"
	viewImageDir             = "view-image"

	// The keygen pod: kubelet's mount of its ServiceAccount token, CA and namespace (where
	// client-go's in-cluster configuration reads them), and the memory-backed emptyDir that flux
	// keygen writes the certificate into. A view image holds flux and its Python in viewImageLink.
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	keygenWorkDir     = "/keygen"

	// terminationLogPath is the broker container's termination message file (Kubernetes' default
	// path): why the main broker's command failed.
	terminationLogPath = corev1.TerminationMessagePathDefault

	// customScriptPath is where commands.script is written in a container.
	customScriptPath = "/tmp/custom-entrypoint.sh"

	// The placeholders of broker.toml and of the hostlist that flux-init.sh replaces at pod start
	// (nothing in the scripts or the config depends on the render-time namespace or Job name):
	//   - placeholderJobName: the broker Job's name, the pod hostname without "-<index>";
	//   - placeholderDNSSuffix: the pods' DNS domain, read from /etc/hosts.
	placeholderJobName   = "@JOB_NAME@"
	placeholderDNSSuffix = "@DNS_SUFFIX@"
)

// entrypointFile is where a key of the entrypoint ConfigMap is in a container.
func entrypointFile(key string) string { return EntrypointMountPath + "/" + key }

// podLayout is where things are in a broker pod: the fixed mount points, and the shared volume
// flux.container.mountPath (Base), which the init container fills and every container mounts.
// All paths are absolute.
type podLayout struct {
	// The entrypoint ConfigMap's and the certificate's files, and the fixed mounts.
	BrokerConfigSource string // the mounted broker.toml template (or flux.brokerConfig verbatim)
	InitScript         string // the mounted flux-init.sh
	CurveSource        string // the mounted certificate: owned by root, mode 0400 (0440 with fsGroup)
	Home               string // HOME of a broker whose image gives it none
	// Software is the view image's software; the other containers mount ViewSoftware there,
	// where the view's links point.
	Software      string
	ViewImage     string // the view image's flux install (a link)
	ViewImageDirs string // where that link points: <dir>/<hash>
	CustomScript  string // commands.script, written by the script that runs it
	// TerminationLog is the broker container's termination message file.
	TerminationLog string

	// The shared volume.
	Base string // flux.container.mountPath
	View string // the flux install copied from the view image, or a link into ViewImageMount
	// ViewImageMount is where every container of the pod mounts the whole view image
	// (view-source ImageVolume).
	ViewImageMount string
	ViewSoftware   string // the view image's Software, copied
	InitDone       string // marker: the init container is done
	BrokerDone     string // marker: this broker is done
	ViewEnv        string // helper: sources the view's environment (PATH, PYTHONPATH, fluxsocket)
	Connect        string // helper: a shell in the instance (flux proxy)
	LoadFluxion    string // helper: replaces sched-simple by Fluxion

	// The config tree, owned by the broker's user, and the files in it.
	Config    string // the config tree's root
	ConfigDir string // flux start --config: broker.toml
	// MainConfigDir is a worker's config for a start that names the main broker by the address
	// that answers (wait.sh, main_config).
	MainConfigDir  string
	BrokerConfig   string
	SystemDir      string // hostlist, R and cron.d
	Hostlist       string // the hosts in rank order, for flux R encode
	R              string // this node's resources, for every host
	CronDir        string
	Run            string // the parent of RunDir
	RunDir         string // the broker's rundir
	Joined         string // marker: this broker has joined the running instance (the startupProbe's check)
	JoinHook       string // FLUX_RC_EXTRA of a worker's broker: its rc1.d/ touches Joined
	JoinHookScript string // the hook: <JoinHook>/rc1.d/<name>, as flux's rc1 looks for it
	LeadReturns    string // marker: the main broker's pod is stopping alone, and the Job starts it again
	MainBroker     string // the main broker's DNS name (<job>-0.<pods' DNS domain>), from init.sh
	Socket         string // the broker's local socket, -Slocal-uri and the rundir's default alike
	StateDir       string // the broker's statedir
	ArchiveDB      string
	CurveDir       string
	CurveCert      string // the certificate as flux reads it: a copy, mode 0600, owned by the broker's user

	// The placeholders flux-init.sh replaces (placeholderJobName, placeholderDNSSuffix).
	JobName, DNSSuffix string
}

func newPodLayout(mountPath string) podLayout {
	config := path.Join(mountPath, "config")
	system := path.Join(config, "etc/flux/system")
	run := path.Join(config, "run")
	state := path.Join(config, "var/lib/flux")
	return podLayout{
		BrokerConfigSource: entrypointFile(BrokerConfigKey),
		InitScript:         entrypointFile(InitScriptKey),
		CurveSource:        CurveMountPath + "/" + CurveCertKey,
		Home:               homeMountPath,
		Software:           softwareMountPath,
		ViewImage:          viewImageLink,
		ViewImageDirs:      viewImageDirs,
		CustomScript:       customScriptPath,
		TerminationLog:     terminationLogPath,

		Base:           mountPath,
		View:           path.Join(mountPath, "view"),
		ViewImageMount: path.Join(mountPath, viewImageDir),
		ViewSoftware:   path.Join(mountPath, viewSoftwareDir),
		InitDone:       path.Join(mountPath, "flux-operator-done.txt"),
		BrokerDone:     path.Join(mountPath, "flux-operator-complete.txt"),
		ViewEnv:        path.Join(mountPath, "flux-view.sh"),
		Connect:        path.Join(mountPath, "flux-connect.sh"),
		LoadFluxion:    path.Join(mountPath, "load-fluxion.sh"),

		Config:         config,
		ConfigDir:      path.Join(config, "etc/flux/config"),
		MainConfigDir:  path.Join(config, "etc/flux/config-main"),
		BrokerConfig:   path.Join(config, "etc/flux/config", BrokerConfigKey),
		SystemDir:      system,
		Hostlist:       path.Join(system, "hostlist"),
		R:              path.Join(system, "R"),
		CronDir:        path.Join(system, "cron.d"),
		Run:            run,
		RunDir:         path.Join(run, "flux"),
		Joined:         path.Join(run, "joined"),
		JoinHook:       path.Join(run, "rc"),
		JoinHookScript: path.Join(run, "rc", "rc1.d", "minicluster-fn-joined"),
		LeadReturns:    path.Join(run, "lead-returns"),
		MainBroker:     path.Join(run, "main-broker"),
		Socket:         path.Join(run, "flux", "local"),
		StateDir:       state,
		ArchiveDB:      path.Join(state, "job-archive.sqlite"),
		CurveDir:       path.Join(config, "curve"),
		CurveCert:      path.Join(config, "curve", CurveCertKey),

		JobName:   placeholderJobName,
		DNSSuffix: placeholderDNSSuffix,
	}
}
