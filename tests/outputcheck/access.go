package outputcheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// The API rights the keygen pre-step may have, as RBACRules writes them: it creates the
// certificate object (create cannot be limited by name) and reads the headless Service (its
// owner). It may read the certificate back only when that is a ConfigMap: get on a Secret's name
// would let it create a service-account-token Secret of that name and read the token.
const (
	RuleCreateSecrets    = "create secrets"
	RuleCreateConfigMaps = "create configmaps"
	RuleGetCurve         = "get configmaps/<the certificate ConfigMap>"
	RuleGetService       = "get services/<the headless Service>"
)

// KeygenRules are all the RBAC rules a manifest set may grant, by the kind of the certificate
// object that the keygen Job creates.
var KeygenRules = map[v1alpha2.CurveKind][]string{
	v1alpha2.CurveKindSecret:    {RuleCreateSecrets, RuleGetService},
	v1alpha2.CurveKindConfigMap: {RuleCreateConfigMaps, RuleGetCurve, RuleGetService},
}

// RBACRules lists every right the output grants, one "<verb> <resource>[/<name>]" per verb,
// resource and name (API group prefixed unless core), with the names of the certificate object
// and the headless Service written as in KeygenRules. Cluster-wide objects and non-resource URLs
// come out as rules no allowed set holds.
func RBACRules(objs []runtime.Object) []string {
	var curveKind v1alpha2.CurveKind
	curveName, service := "", ""
	if job := brokerJob(objs); job != nil {
		curveKind, curveName = curveObject(&job.Spec.Template.Spec)
		service = job.Spec.Template.Spec.Subdomain
	}
	var out []string
	add := func(kind string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, u := range r.NonResourceURLs {
				out = append(out, kind+": nonResourceURL "+u)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						what := res
						if g != "" {
							what = g + "/" + res
						}
						if len(r.ResourceNames) == 0 {
							out = append(out, kind+v+" "+what)
						}
						for _, n := range r.ResourceNames {
							switch {
							case g == "" && n == curveName && (res == "configmaps" && curveKind == v1alpha2.CurveKindConfigMap ||
								res == "secrets" && curveKind == v1alpha2.CurveKindSecret):
								n = "<the certificate " + string(curveKind) + ">"
							case g == "" && res == "services" && n == service:
								n = "<the headless Service>"
							}
							out = append(out, kind+v+" "+what+"/"+n)
						}
					}
				}
			}
		}
	}
	for _, r := range objectsOf[*rbacv1.Role](objs) {
		add("", r.Rules)
	}
	for _, r := range objectsOf[*rbacv1.ClusterRole](objs) {
		add("cluster-wide: ", r.Rules)
	}
	for _, b := range objectsOf[*rbacv1.ClusterRoleBinding](objs) {
		out = append(out, "cluster-wide: ClusterRoleBinding/"+b.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func brokerJob(objs []runtime.Object) *batchv1.Job {
	for _, j := range objectsOf[*batchv1.Job](objs) {
		if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
			return j
		}
	}
	return nil
}

// access: no rule beyond the KeygenRules of the kind of certificate object the brokers read;
// bindings only to the output's own ServiceAccounts and Roles; only the pods of the keygen
// pre-step use a bound account and mount a token; broker pods and the services pod mount one
// only when spec.pod.automountServiceAccountToken asks.
func (c *checker) access() {
	kind, _ := curveObject(&c.job.Spec.Template.Spec)
	for _, r := range RBACRules(c.m.Objects) {
		if !slices.Contains(KeygenRules[kind], r) {
			c.errorf("RBAC grants %q, beyond the keygen pre-step's rights %v for a certificate %s", r, KeygenRules[kind], kind)
		}
	}
	objs := c.m.Objects
	bound := map[string]bool{} // ServiceAccounts that a RoleBinding gives rights
	for _, b := range objectsOf[*rbacv1.RoleBinding](objs) {
		if b.RoleRef.Kind != "Role" || findObject[*rbacv1.Role](objs, b.RoleRef.Name) == nil {
			c.errorf("RoleBinding/%s binds %s/%s, not a Role of the output", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind || (s.Namespace != "" && s.Namespace != c.m.MC.Namespace) ||
				findObject[*corev1.ServiceAccount](objs, s.Name) == nil {
				c.errorf("RoleBinding/%s binds %s %s/%s, not a ServiceAccount of the output", b.Name, s.Kind, s.Namespace, s.Name)
			}
			bound[s.Name] = true
		}
	}
	for _, sa := range objectsOf[*corev1.ServiceAccount](objs) {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			c.errorf("ServiceAccount/%s does not set automountServiceAccountToken: false", sa.Name)
		}
	}
	users := map[string][]string{} // bound ServiceAccount -> pod templates using it
	for name, pod := range podSpecs(objs) {
		sa := pod.ServiceAccountName
		automount := pod.AutomountServiceAccountToken != nil && *pod.AutomountServiceAccountToken
		if bound[sa] {
			users[sa] = append(users[sa], name)
			continue
		}
		if pod.AutomountServiceAccountToken == nil {
			c.errorf("%s does not set automountServiceAccountToken (the default mounts a token)", name)
		} else if automount != c.m.MC.Spec.Pod.AutomountServiceAccountToken {
			c.errorf("%s: automountServiceAccountToken %v, spec.pod.automountServiceAccountToken %v", name, automount, c.m.MC.Spec.Pod.AutomountServiceAccountToken)
		}
		if sa != c.m.MC.Spec.Pod.ServiceAccountName {
			c.errorf("%s runs as ServiceAccount %q, spec.pod.serviceAccountName is %q", name, sa, c.m.MC.Spec.Pod.ServiceAccountName)
		}
	}
	for sa, pods := range users {
		slices.Sort(pods)
		if len(pods) != 1 || !strings.HasPrefix(pods[0], "Job/") || pods[0] == "Job/"+c.job.Name {
			c.errorf("ServiceAccount/%s has API rights and is used by %v; only the keygen Job may use it", sa, pods)
		}
	}
}

// podSpecs are the pod specs of the output by "<Kind>/<name>".
func podSpecs(objs []runtime.Object) map[string]*corev1.PodSpec {
	pods := map[string]*corev1.PodSpec{}
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			pods["Job/"+o.Name] = &o.Spec.Template.Spec
		case *corev1.Pod:
			pods["Pod/"+o.Name] = &o.Spec
		}
	}
	return pods
}

// curveWrite is the broker script's one write of the certificate, to the file flux reads: with
// umask 077, so that only its owner can read it (Flux rejects a certificate readable by group or
// other).
var curveWrite = regexp.MustCompile(`(?m)^\(umask 077 && printf '%s' "\$\{curvetext\}" > "\$\{curvepath\}"\)$`)

// curveHygiene: no pod mounts the certificate; in the broker Job, only the broker container gets
// it, through one env reference to the key curve.cert of the certificate object; no other
// ConfigMap or Secret of the output holds it; no script prints it; and the broker script takes the
// variable out of its environment before anything else runs and writes it readable by its owner
// only.
func (c *checker) curveHygiene() {
	pod := &c.job.Spec.Template.Spec
	for name, p := range podSpecs(c.m.Objects) {
		for _, v := range p.Volumes {
			if curveVolume(v) {
				c.errorf("%s mounts the certificate (volume %s): the broker container gets it in its environment", name, v.Name)
			}
		}
		if name == "Job/"+c.job.Name {
			continue
		}
		for _, ctr := range slices.Concat(p.InitContainers, p.Containers) {
			if env := curveEnv(ctr); env != "" {
				c.errorf("%s: container %s gets the certificate (%s)", name, ctr.Name, env)
			}
		}
	}
	var holders []string
	for _, ctr := range slices.Concat(pod.InitContainers, pod.Containers) {
		if curveEnv(ctr) != "" {
			holders = append(holders, ctr.Name)
		}
	}
	if len(holders) != 1 {
		c.errorf("Job/%s: containers %v get the certificate, want only the broker container", c.job.Name, holders)
		return
	}
	kind, name := curveObject(pod)
	for _, cm := range objectsOf[*corev1.ConfigMap](c.m.Objects) {
		if _, ok := cm.Data[curveCertKey]; ok && (kind != v1alpha2.CurveKindConfigMap || cm.Name != name) {
			c.errorf("ConfigMap/%s holds %s but is not the certificate object the brokers read", cm.Name, curveCertKey)
		}
	}
	for _, s := range objectsOf[*corev1.Secret](c.m.Objects) {
		_, inData := s.Data[curveCertKey]
		_, inStringData := s.StringData[curveCertKey]
		if (inData || inStringData) && (kind != v1alpha2.CurveKindSecret || s.Name != name) {
			c.errorf("Secret/%s holds %s but is not the certificate object the brokers read", s.Name, curveCertKey)
		}
	}
	env := ""
	for _, ctr := range pod.Containers {
		if env = curveEnv(ctr); env != "" {
			break
		}
	}
	// echo or printf of the variable or of its copy, or a command that lists the environment.
	printsText := regexp.MustCompile(`\b(echo|printf)\b[^\n]*\$\{?(curvetext|` + regexp.QuoteMeta(env) + `)\b|^\s*(env|printenv|export -p|declare -p|set)\s*$`)
	for name, text := range Scripts(c.m.Objects) {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") || curveWrite.MatchString(line) {
				continue
			}
			if printsCurve.MatchString(line) || printsText.MatchString(line) {
				c.errorf("%s prints the certificate: %s", name, strings.TrimSpace(line))
			}
		}
	}
	script := c.brokerScript()
	if script == "" {
		return
	}
	if !curveWrite.MatchString(script) {
		c.errorf("the broker script does not write the certificate with umask 077")
	}
	// The variable leaves the environment in the script's first command lines, before any hook.
	take := fmt.Sprintf("curvetext=\"${%s-}\"\nunset %s\n", env, env)
	if i := strings.Index(script, take); i < 0 || !onlySettings(script[:i]) {
		c.errorf("the broker script does not take %s out of its environment before anything else runs", env)
	}
}

// onlySettings says whether the script lines before the certificate's are shell settings and
// checks that start nothing the certificate could leak to: set, the /usr/bin/time check.
func onlySettings(head string) bool {
	for _, line := range strings.Split(head, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", strings.HasPrefix(l, "#"), strings.HasPrefix(l, "set "), strings.HasPrefix(l, "if [[ ! -x /usr/bin/time ]]"),
			strings.HasPrefix(l, "echo \"/usr/bin/time"), l == "exit 1", l == "fi":
		default:
			return false
		}
	}
	return true
}

// curveVolume says whether a ConfigMap or Secret volume projects curve.cert, or the whole object
// (which would hold it if it is the certificate object).
func curveVolume(v corev1.Volume) bool {
	var items []corev1.KeyToPath
	switch {
	case v.ConfigMap != nil:
		items = v.ConfigMap.Items
	case v.Secret != nil:
		items = v.Secret.Items
	default:
		return false
	}
	return slices.ContainsFunc(items, func(it corev1.KeyToPath) bool { return it.Key == curveCertKey })
}

// curveEnv is the name of the container's variable whose value is the key curve.cert of a Secret
// or ConfigMap, or "".
func curveEnv(ctr corev1.Container) string {
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil && r.Key == curveCertKey {
			return e.Name
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil && r.Key == curveCertKey {
			return e.Name
		}
	}
	return ""
}

// curveObject is the kind and name of the object the broker container reads the certificate from.
func curveObject(pod *corev1.PodSpec) (v1alpha2.CurveKind, string) {
	for _, ctr := range pod.Containers {
		for _, e := range ctr.Env {
			switch {
			case e.ValueFrom == nil:
			case e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == curveCertKey:
				return v1alpha2.CurveKindSecret, e.ValueFrom.SecretKeyRef.Name
			case e.ValueFrom.ConfigMapKeyRef != nil && e.ValueFrom.ConfigMapKeyRef.Key == curveCertKey:
				return v1alpha2.CurveKindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name
			}
		}
	}
	return "", ""
}

