package check

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Pod Security levels, in order, and the namespace label that enforces one.
const (
	levelPrivileged = "privileged"
	levelBaseline   = "baseline"
	levelRestricted = "restricted"
	labelEnforce    = "pod-security.kubernetes.io/enforce"
)

// namespaceExists: the namespace the objects go to must exist (check creates nothing, and neither
// does an apply of the render).
func namespaceExists(name string, ns *Namespace) Result {
	r := Result{Check: "namespace", Scope: "namespace " + name}
	switch {
	case ns == nil:
		r.Status, r.Message = Unknown, "cannot tell: the namespace was not read"
	case apierrors.IsNotFound(ns.Err):
		r.Status, r.Message, r.Fix = Failed, "namespace "+name+" does not exist", "create it (kubectl create namespace "+name+"), or name another with -n"
	case ns.Err != nil:
		r.Status, r.Message, r.Fix = Unknown, cannotTell("get namespace "+name, ns.Err), "the namespace's labels say its Pod Security level; "+rightFix("get", "namespaces/"+name, "")
	default:
		r.Status, r.Message = Passed, "namespace "+name+" exists"
	}
	return r
}

// podSecurity: the namespace's enforced Pod Security level (label pod-security.kubernetes.io/enforce)
// against every pod the render makes, with the rules of the Pod Security Standards
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/, as of Kubernetes 1.36;
// k8s.io/pod-security-admission/policy). The enforce-version label is not read: the latest rules
// are applied. Without the label the cluster's default applies, privileged unless the API server's
// admission configuration sets another, which check cannot read.
func podSecurity(r *Render, ns *Namespace) Result {
	res := Result{Check: "pod-security", Scope: r.Scope(), File: r.File}
	if ns == nil || ns.Err != nil || ns.Object == nil {
		var err error
		if ns != nil {
			err = ns.Err
		}
		res.Status, res.Message = Unknown, cannotTell("get namespace "+r.Namespace+" (its labels say its Pod Security level)", err)
		return res
	}
	level, labelled := ns.Object.Labels[labelEnforce]
	if !labelled {
		res.Status = Passed
		res.Message = fmt.Sprintf("namespace %s has no %s label: %s is admitted under the cluster's default level (privileged, unless the API server's admission configuration sets another, which check cannot read)", r.Namespace, labelEnforce, r.what())
		return res
	}
	if level != levelBaseline && level != levelRestricted {
		if level == levelPrivileged {
			res.Status, res.Message = Passed, fmt.Sprintf("namespace %s enforces Pod Security %q: every pod is admitted", r.Namespace, level)
		} else {
			res.Status, res.Message = Unknown, fmt.Sprintf("cannot tell: namespace %s's label %s=%q is not a Pod Security level", r.Namespace, labelEnforce, level)
		}
		return res
	}
	var refused []string
	for _, p := range r.pods() {
		if v := violations(level, p.spec, p.annotations); len(v) > 0 {
			refused = append(refused, p.what+": "+strings.Join(v, ", "))
		}
	}
	if len(refused) == 0 {
		res.Status, res.Message = Passed, fmt.Sprintf("namespace %s enforces Pod Security %q, which admits every pod of %s", r.Namespace, level, r.what())
		return res
	}
	res.Status = Failed
	res.Message = fmt.Sprintf("namespace %s enforces Pod Security %q, which refuses %s", r.Namespace, level, strings.Join(refused, "; "))
	if level == levelRestricted {
		res.Fix = "run the brokers in a namespace that enforces \"baseline\" (kubectl label namespace " + r.Namespace + " " + labelEnforce + "=baseline --overwrite), " +
			"or give every container securityContext runAsNonRoot: true, runAsUser other than 0, allowPrivilegeEscalation: false, capabilities drop [ALL] and seccompProfile RuntimeDefault " +
			"(spec.pod.securityContext, spec.containers[].securityContext, spec.flux.container.securityContext) with images that run as that user"
	} else {
		res.Fix = "remove what baseline refuses from the MiniCluster (host namespaces, hostPath volumes, privileged or added capabilities), or run it in a namespace that enforces \"privileged\""
	}
	return res
}

// baselineCapabilities are the capabilities baseline lets a container add.
var baselineCapabilities = []corev1.Capability{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// safeSysctls are the sysctls baseline allows.
var safeSysctls = []string{"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
	"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}

// seLinuxTypes are the SELinux types baseline allows.
var seLinuxTypes = []string{"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}

// violations lists what of a pod the level refuses, as the Pod Security Standards' checks name it.
func violations(level string, spec *corev1.PodSpec, annotations map[string]string) []string {
	var out []string
	add := func(format string, a ...any) {
		if msg := fmt.Sprintf(format, a...); !slices.Contains(out, msg) {
			out = append(out, msg)
		}
	}
	type container struct {
		c    *corev1.Container
		kind string
	}
	var containers []container
	for i := range spec.InitContainers {
		containers = append(containers, container{&spec.InitContainers[i], "init container"})
	}
	for i := range spec.Containers {
		containers = append(containers, container{&spec.Containers[i], "container"})
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	// Baseline.
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		var host []string
		for _, h := range []struct {
			on   bool
			name string
		}{{spec.HostNetwork, "hostNetwork"}, {spec.HostPID, "hostPID"}, {spec.HostIPC, "hostIPC"}} {
			if h.on {
				host = append(host, h.name)
			}
		}
		add("host namespaces (%s)", strings.Join(host, ", "))
	}
	if w := psc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
		add("a Windows host process")
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			add("hostPath volume %q", v.Name)
		}
	}
	for _, s := range psc.Sysctls {
		if !slices.Contains(safeSysctls, s.Name) {
			add("sysctl %s", s.Name)
		}
	}
	if psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		add("seccompProfile Unconfined")
	}
	if psc.AppArmorProfile != nil && psc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		add("appArmorProfile Unconfined")
	}
	if o := psc.SELinuxOptions; o != nil && (!slices.Contains(seLinuxTypes, o.Type) || o.User != "" || o.Role != "") {
		add("seLinuxOptions")
	}
	for k, v := range annotations {
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) &&
			v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			add("AppArmor annotation %s=%s", k, v)
		}
	}
	for _, ct := range containers {
		c, sc := ct.c, ct.c.SecurityContext
		name := fmt.Sprintf("%s %q", ct.kind, c.Name)
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				add("%s: hostPort %d", name, p.HostPort)
			}
		}
		for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if probe != nil && ((probe.HTTPGet != nil && probe.HTTPGet.Host != "") || (probe.TCPSocket != nil && probe.TCPSocket.Host != "")) {
				add("%s: a probe's host", name)
			}
		}
		if sc == nil {
			continue
		}
		if sc.Privileged != nil && *sc.Privileged {
			add("%s: privileged", name)
		}
		if sc.Capabilities != nil {
			for _, capability := range sc.Capabilities.Add {
				if !slices.Contains(baselineCapabilities, capability) {
					add("%s: capability %s added", name, capability)
				}
			}
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			add("%s: procMount %s", name, *sc.ProcMount)
		}
		if sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
			add("%s: seccompProfile Unconfined", name)
		}
		if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
			add("%s: appArmorProfile Unconfined", name)
		}
		if o := sc.SELinuxOptions; o != nil && (!slices.Contains(seLinuxTypes, o.Type) || o.User != "" || o.Role != "") {
			add("%s: seLinuxOptions", name)
		}
		if w := sc.WindowsOptions; w != nil && w.HostProcess != nil && *w.HostProcess {
			add("%s: a Windows host process", name)
		}
	}
	if level != levelRestricted {
		return out
	}
	// Restricted.
	for _, v := range spec.Volumes {
		s := v.VolumeSource
		if s.ConfigMap == nil && s.CSI == nil && s.DownwardAPI == nil && s.EmptyDir == nil && s.Ephemeral == nil &&
			s.Image == nil && s.PersistentVolumeClaim == nil && s.Projected == nil && s.Secret == nil && s.HostPath == nil {
			add("volume %q of a type restricted refuses", v.Name)
		}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		add("runAsUser 0 (root)")
	}
	var root, escalation, seccomp, caps []string
	for _, ct := range containers {
		c := ct.c
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		nonRoot := sc.RunAsNonRoot
		if nonRoot == nil {
			nonRoot = psc.RunAsNonRoot
		}
		if nonRoot == nil || !*nonRoot {
			root = append(root, c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			add("container %q: runAsUser 0 (root)", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			escalation = append(escalation, c.Name)
		}
		profile := sc.SeccompProfile
		if profile == nil {
			profile = psc.SeccompProfile
		}
		if profile == nil || (profile.Type != corev1.SeccompProfileTypeRuntimeDefault && profile.Type != corev1.SeccompProfileTypeLocalhost) {
			seccomp = append(seccomp, c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			caps = append(caps, c.Name)
		} else if slices.ContainsFunc(sc.Capabilities.Add, func(c corev1.Capability) bool { return c != "NET_BIND_SERVICE" }) {
			add("container %q: capabilities other than NET_BIND_SERVICE added", c.Name)
		}
	}
	if len(root) > 0 {
		add("may run as root (runAsNonRoot is not true: %s)", strings.Join(root, ", "))
	}
	if len(escalation) > 0 {
		add("allowPrivilegeEscalation is not false (%s)", strings.Join(escalation, ", "))
	}
	if len(seccomp) > 0 {
		add("no seccompProfile RuntimeDefault or Localhost (%s)", strings.Join(seccomp, ", "))
	}
	if len(caps) > 0 {
		add("capabilities not dropped with drop [ALL] (%s)", strings.Join(caps, ", "))
	}
	return out
}
