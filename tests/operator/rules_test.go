package operator

import (
	"fmt"
	"regexp"
)

// kind of a difference between the operator's objects and ours. Anything no rule classifies fails.
type kind string

const (
	equivalent kind = "equivalent"   // a different spelling of the same thing
	deliberate kind = "deliberate"   // listed, with its reason, in the differences from the operator
	bugFixed   kind = "operator bug" // the operator's behaviour is wrong; ours is listed too
)

// rule classifies differences at the paths it matches (the MiniCluster's name is <n> in them).
type rule struct {
	id    string // the entry of the differences list (differences.md), e.g. D-keygen
	kind  kind
	role  *regexp.Regexp
	path  *regexp.Regexp
	value func(operator, ours any) bool // optional extra condition on the two values
}

func r(id string, k kind, role, path string) rule {
	return rule{id: id, kind: k, role: regexp.MustCompile("^(?:" + role + ")$"), path: regexp.MustCompile("^(?:" + path + ")$")}
}

func (ru rule) when(f func(operator, ours any) bool) rule { ru.value = f; return ru }

func absentInOurs(op, ours any) bool     { return ours == nil }
func absentInOperator(op, ours any) bool { return op == nil }
func both(op, ours any) bool             { return op != nil && ours != nil }

// equals: the two sides differ only in spelling (e.g. 420 vs 420.0 after YAML decoding).
func equals(op, ours any) bool { return fmt.Sprint(op) == fmt.Sprint(ours) }

const (
	anyObject = `.*`
	podSpec   = `\.spec(?:\.template\.spec)?`
	container = podSpec + `\.(?:initContainers|containers)\[[^\]]+\]`
)

var rules = []rule{
	// Object identity: the operator's objects live in the cluster under a MiniCluster; ours are
	// plain manifests, applied by kustomize/kpt/GitOps into whatever namespace they target.
	r("D-ownership", deliberate, anyObject, `\.metadata\.ownerReferences\[.*`).when(absentInOurs),
	r("D-namespace", deliberate, anyObject, `\.metadata\.namespace`).when(absentInOurs),
	r("D-namespace", deliberate, roleBroker+"|"+roleServices, `(?:\.spec\.template)?\.metadata\.labels\.namespace`).when(absentInOurs),
	r("E-template-meta", equivalent, roleBroker, `\.spec\.template\.metadata\.(?:name|namespace)`).when(absentInOurs),
	r("D-labels", deliberate, anyObject, `(?:\.spec\.template)?\.metadata\.labels\.(?:app\.kubernetes\.io/(?:component|instance|managed-by)|minicluster-fn\.dev/(?:subdomain-member|minicluster|component))`).when(absentInOperator),
	r("D-labels", deliberate, roleBroker, `\.metadata\.(?:labels\.minicluster-fn\.dev/lifetime|annotations\.minicluster-fn\.dev/(?:lifetime-reason|max-size|view-image|view-source))`).when(absentInOperator),
	r("D-labels", deliberate, anyObject, `(?:\.spec\.template)?\.metadata\.labels\.app\.kubernetes\.io/name`).when(both),
	r("D-labels", deliberate, anyObject, `(?:\.spec\.template)?\.metadata\.labels\.app\.kubernetes\.io/name`).when(absentInOperator),
	r("D-labels", deliberate, roleBroker+"|"+roleServices, `(?:\.spec\.template)?\.metadata\.labels\.app`).when(absentInOurs),
	r("D-hpa", deliberate, roleBroker, `\.spec\.template\.metadata\.labels\.hpa-selector`).when(absentInOurs),
	r("D-gitops-annotations", deliberate, anyObject, `\.metadata\.annotations\.(?:argocd\.argoproj\.io/(?:sync-wave|sync-options)|kustomize\.toolkit\.fluxcd\.io/(?:force|substitute))`).when(absentInOperator),
	// Names: the broker Job and its ConfigMap are <name>-<hash> unless job-naming stable.
	r("D-job-naming", deliberate, roleBroker+"|"+roleEntrypoint, `\.metadata\.name`).when(both),
	r("D-job-naming", deliberate, roleServices, `\.metadata\.name`).when(both),
	r("D-port-service-name", deliberate, rolePortPrefix+".*", `\.metadata\.name`).when(both),
	// The services Pod: the operator's getPodLabels mutates spec.pod.labels, so job-name leaks
	// into the broker pods' labels; the services Pod's job-name lets the headless Service select it.
	r("F-job-name-label", bugFixed, roleBroker, `\.spec\.template\.metadata\.labels\.job-name`).when(absentInOurs),
	r("D-service-selector", deliberate, roleServices, `\.metadata\.labels\.job-name`).when(absentInOurs),
	// The headless Service.
	r("D-service-selector", deliberate, roleHeadless, `\.spec\.selector\.(?:job-name|job-index)`).when(absentInOurs),
	r("D-service-selector", deliberate, roleHeadless, `\.spec\.selector\.(?:app\.kubernetes\.io/(?:name|instance)|minicluster-fn\.dev/(?:subdomain-member|minicluster)|batch\.kubernetes\.io/job-completion-index)`).when(absentInOperator),
	r("D-publish-not-ready", deliberate, roleHeadless, `\.spec\.publishNotReadyAddresses`).when(absentInOperator),
	r("D-minimal-service", deliberate, roleHeadless, `\.spec\.clusterIP`).when(absentInOperator),
	r("D-named-ports", deliberate, roleHeadless+"|"+rolePortPrefix+".*", `\.spec\.ports\[(?:\d+)\]\.(?:port|protocol|targetPort)`).when(absentInOurs),
	r("D-named-ports", deliberate, roleHeadless+"|"+rolePortPrefix+".*", `\.spec\.ports\[[a-z][a-z0-9-]*\]\.(?:name|port|protocol|targetPort)`).when(absentInOperator),
	r("D-service-selector", deliberate, rolePortPrefix+".*", `\.spec\.selector\.(?:app\.kubernetes\.io/(?:name|instance|component)|minicluster-fn\.dev/(?:minicluster|component))`),
	// Affinity: the same spread, selected through our labels.
	r("D-labels", deliberate, roleBroker, podSpec+`\.affinity\.pod(?:Anti)?Affinity\.preferredDuringSchedulingIgnoredDuringExecution\[0\]\.podAffinityTerm\.labelSelector\.match(?:Expressions|Labels).*`),
	// The CURVE certificate comes from the keygen Job, a one-off pod (or the user), not from the
	// controller into the entrypoint ConfigMap.
	r("D-keygen", deliberate, roleEntrypoint, `\.data\.curve\.cert`).when(absentInOurs),
	// ... in a Secret unless the curve-kind option asks for a ConfigMap: the namespace's view role
	// reads ConfigMaps (the operator's entrypoint ConfigMap holds the secret key), not Secrets.
	r("D-curve-secret", deliberate, roleBroker, podSpec+`\.volumes\[flux-curve\]\.secret\..*`).when(absentInOperator),
	r("D-keygen", deliberate, roleBroker, podSpec+`\.volumes\[flux-curve\]\..*`).when(absentInOperator),
	r("D-keygen", deliberate, roleBroker, container+`\.volumeMounts\[flux-curve\]\..*`).when(absentInOperator),
	r("D-keygen", deliberate, roleBroker, podSpec+`\.volumes\[<n>-entrypoint\]\.configMap\.items\[curve\.cert\]\..*`).when(absentInOurs),
	// The entrypoint ConfigMap is mounted whole, its keys are the file names; scripts run through
	// /bin/bash, so modes do not matter.
	r("D-entrypoint-volume", deliberate, roleBroker, podSpec+`\.volumes\[<n>-entrypoint\]\..*`).when(absentInOurs),
	r("D-entrypoint-volume", deliberate, roleBroker, podSpec+`\.volumes\[flux-entrypoint\]\.(?:name|configMap\.name)`).when(absentInOperator),
	r("E-api-defaults", equivalent, roleBroker, podSpec+`\.volumes\[flux-entrypoint\]\.configMap\.defaultMode`).when(func(op, ours any) bool { return op == nil && equals(ours, 420) }),
	r("D-entrypoint-volume", deliberate, roleBroker, container+`\.volumeMounts\[(?:flux-entrypoint|<n>-entrypoint)\]\.(?:name|mountPath|readOnly)`),
	// Script text: compared by what the scripts do (TestScriptsBehave), broker.toml as TOML.
	r("D-scripts", deliberate, roleEntrypoint, `\.data\.(?:wait-\d+|start-\d+|flux-view|[a-z0-9-]+)`).when(absentInOurs),
	r("D-scripts", deliberate, roleEntrypoint, `\.data\.(?:wait-\d+\.sh|start-\d+\.sh|flux-init\.sh|broker\.toml)`).when(absentInOperator),
	// The view volume is tmpfs for a cluster that ends with its command and has no memory limit
	// (the view-medium option decides otherwise): the init containers' copies of the view were
	// most of the time to ready on a disk (docs: D-view-memory).
	r("D-view-memory", deliberate, roleBroker, podSpec+`\.volumes\[flux-view\]\.emptyDir\.medium`).when(func(op, ours any) bool { return op == nil && ours == "Memory" }),
	// Volumes of the user (docs: Volumes).
	r("F-configmap-volume-name", bugFixed, roleBroker+"|"+roleServices, podSpec+`\.volumes\[[^\]]+\]\.(?:name|configMap\..*)`),
	r("F-configmap-volume-name", bugFixed, roleBroker+"|"+roleServices, container+`\.volumeMounts\[[^\]]+\]\.(?:name|mountPath|readOnly)`).when(func(op, ours any) bool { return true }),
	r("F-empty-claim", bugFixed, roleBroker, podSpec+`\.volumes\[[^\]]+\]\.persistentVolumeClaim\.claimName`).when(func(op, ours any) bool { return op == "" }),
	r("F-empty-claim", bugFixed, roleBroker, podSpec+`\.volumes\[[^\]]+\]\.emptyDir\..*`).when(absentInOperator),
	r("E-api-defaults", equivalent, roleBroker+"|"+roleServices, podSpec+`\.volumes\[[^\]]+\]\.csi\.readOnly`).when(func(op, ours any) bool { return op == nil && ours == false }),
	// Services Pod pull secrets: the union of containers' and services' (operator: containers' only).
	r("F-services-pull-secrets", bugFixed, roleServices, podSpec+`\.imagePullSecrets\[[^\]]+\]\.name`).when(absentInOperator),
	// Lifecycle hooks: the operator exec'd the whole string as one program name.
	r("D-lifecycle-shell", deliberate, roleBroker+"|"+roleServices, container+`\.lifecycle\.(?:postStart|preStop)\.exec\.command\[\d\]`),
	// spec.pod.tolerations apply to the services Pod too (the operator's lacks them: on tainted
	// nodes it could not be scheduled beside the brokers).
	r("D-services-tolerations", deliberate, roleServices, podSpec+`\.tolerations\[[^\]]+\]\..*`).when(absentInOperator),
	// A broker pod is Ready only once its broker has joined the instance (docs: readiness).
	r("D-readiness", deliberate, roleBroker, container+`\.(startupProbe|readinessProbe)\..*`).when(absentInOperator),
	r("D-readiness", deliberate, roleEntrypoint, `\.data\.broker-ready\.sh`).when(absentInOperator),
	// Containers mount the view's software/ from the shared volume instead of a second copy.
	r("D-view-subpath", deliberate, roleBroker, container+`\.volumeMounts\[flux-view\]\.subPath`).when(absentInOperator),
	// A failed command fails the broker Job, once (option failed-command, Fail by default): a pod
	// failure policy, restartPolicy Never, and the broker container's termination message.
	r("D-failed-command", deliberate, roleBroker, `\.spec\.podFailurePolicy\..*`).when(absentInOperator),
	r("D-failed-command", deliberate, roleBroker, podSpec+`\.restartPolicy`).when(func(op, ours any) bool { return op == "OnFailure" && ours == "Never" }),
	r("D-failed-command", deliberate, roleBroker, container+`\.terminationMessage(?:Path|Policy)`).when(absentInOperator),
	// network.disableAffinity also dropped the user's pod.nodeAffinity in the operator.
	r("F-node-affinity-dropped", bugFixed, roleBroker, podSpec+`\.affinity\.nodeAffinity\..*`).when(absentInOperator),
}

// classify returns the rule that explains d, or nil.
func classify(d leafDiff, name string) *rule {
	norm := regexp.MustCompile(regexp.QuoteMeta(name)+`(?:-[0-9a-f]{8})?`).ReplaceAllString(d.path, "<n>")
	for i := range rules {
		ru := &rules[i]
		if !ru.role.MatchString(d.role) || !ru.path.MatchString(norm) {
			continue
		}
		if ru.value != nil && !ru.value(d.operator, d.ours) {
			continue
		}
		return ru
	}
	return nil
}
