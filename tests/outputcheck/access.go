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

// access: no rule beyond the KeygenRules of the kind of certificate object the brokers mount;
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

// certMode is the only mode the certificate may have in the pod: Flux rejects a certificate
// readable by group or other.
const certMode = int32(0o400)

var (
	umask077 = regexp.MustCompile(`\(umask 077 && cp [^\n]*"\$\{curvepath\}"\)`)
	chmodOwn = regexp.MustCompile(`(?m)^\s*chmod 0[46]00 "\$\{curvepath\}"$`)
)

// curveHygiene: the certificate volume gives the file mode 0400, only the broker container
// mounts it (read-only), no other ConfigMap or Secret of the output holds it, no script prints it, and the
// broker script's copy is made readable by its owner only.
func (c *checker) curveHygiene() {
	pod := &c.job.Spec.Template.Spec
	var curveVols []string
	for _, v := range pod.Volumes {
		items, defaultMode := curveItems(v)
		if items == nil {
			continue
		}
		curveVols = append(curveVols, v.Name)
		if defaultMode == nil || *defaultMode != certMode {
			c.errorf("volume %s holds %s with defaultMode %v, want %#o", v.Name, curveCertKey, deref(defaultMode), certMode)
		}
		for _, it := range items {
			if it.Mode != nil && *it.Mode != certMode {
				c.errorf("volume %s: item %s has mode %#o, want %#o", v.Name, it.Key, *it.Mode, certMode)
			}
		}
	}
	if len(curveVols) != 1 {
		c.errorf("Job/%s: want one volume holding %s, got %v", c.job.Name, curveCertKey, curveVols)
		return
	}
	var mounters []string
	for _, ctr := range slices.Concat(pod.InitContainers, pod.Containers) {
		if c.mountsCurve(ctr) {
			mounters = append(mounters, ctr.Name)
			for _, m := range ctr.VolumeMounts {
				if m.Name == curveVols[0] && !m.ReadOnly {
					c.errorf("container %s mounts the certificate writable", ctr.Name)
				}
			}
		}
	}
	if len(mounters) != 1 {
		c.errorf("Job/%s: containers %v mount the certificate, want only the broker container", c.job.Name, mounters)
	}
	for name, p := range podSpecs(c.m.Objects) {
		if name == "Job/"+c.job.Name {
			continue
		}
		for _, v := range p.Volumes {
			if items, _ := curveItems(v); items != nil {
				c.errorf("%s mounts the certificate (volume %s)", name, v.Name)
			}
		}
	}
	kind, name := curveObject(pod)
	for _, cm := range objectsOf[*corev1.ConfigMap](c.m.Objects) {
		if _, ok := cm.Data[curveCertKey]; ok && (kind != v1alpha2.CurveKindConfigMap || cm.Name != name) {
			c.errorf("ConfigMap/%s holds %s but is not the certificate object the brokers mount", cm.Name, curveCertKey)
		}
	}
	for _, s := range objectsOf[*corev1.Secret](c.m.Objects) {
		_, inData := s.Data[curveCertKey]
		_, inStringData := s.StringData[curveCertKey]
		if (inData || inStringData) && (kind != v1alpha2.CurveKindSecret || s.Name != name) {
			c.errorf("Secret/%s holds %s but is not the certificate object the brokers mount", s.Name, curveCertKey)
		}
	}
	for name, text := range Scripts(c.m.Objects) {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			if printsCurve.MatchString(line) {
				c.errorf("%s prints the certificate: %s", name, strings.TrimSpace(line))
			}
		}
	}
	if script := c.brokerScript(); script != "" && (!umask077.MatchString(script) || !chmodOwn.MatchString(script)) {
		c.errorf("the broker script does not copy the certificate with umask 077 and chmod 0600/0400")
	}
}

// curveItems are the items of a ConfigMap or Secret volume that holds curve.cert, and its
// defaultMode; nil items when the volume does not hold it.
func curveItems(v corev1.Volume) ([]corev1.KeyToPath, *int32) {
	var items []corev1.KeyToPath
	var mode *int32
	switch {
	case v.ConfigMap != nil:
		items, mode = v.ConfigMap.Items, v.ConfigMap.DefaultMode
	case v.Secret != nil:
		items, mode = v.Secret.Items, v.Secret.DefaultMode
	default:
		return nil, nil
	}
	if !slices.ContainsFunc(items, func(it corev1.KeyToPath) bool { return it.Key == curveCertKey }) {
		return nil, nil
	}
	return items, mode
}

// curveObject is the kind and name of the object the broker pods read the certificate from.
func curveObject(pod *corev1.PodSpec) (v1alpha2.CurveKind, string) {
	for _, v := range pod.Volumes {
		if items, _ := curveItems(v); items != nil {
			if v.ConfigMap != nil {
				return v1alpha2.CurveKindConfigMap, v.ConfigMap.Name
			}
			return v1alpha2.CurveKindSecret, v.Secret.SecretName
		}
	}
	return "", ""
}

func (c *checker) mountsCurve(ctr corev1.Container) bool {
	for _, m := range ctr.VolumeMounts {
		for _, v := range c.job.Spec.Template.Spec.Volumes {
			if items, _ := curveItems(v); items != nil && v.Name == m.Name {
				return true
			}
		}
	}
	return false
}

func deref(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprintf("%#o", *p)
}
