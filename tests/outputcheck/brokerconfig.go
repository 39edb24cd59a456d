package outputcheck

import (
	"fmt"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// brokerConfig parses broker.toml as the brokers will read it (after flux-init.sh's substitution),
// checks the bootstrap keys Flux needs and that the host list is exactly the hosts of the
// MiniCluster: the Job's pods (<job>-0 … <job>-<maxSize-1>) and the bursting lists.
func (c *checker) brokerConfig(o Options) {
	raw, ok := c.entrypoint.Data[brokerConfigKey]
	if !ok {
		c.errorf("ConfigMap/%s has no %s", c.entrypoint.Name, brokerConfigKey)
		return
	}
	init := c.entrypoint.Data[initScriptKey]
	userConfig := c.m.MC.Spec.Flux.BrokerConfig != ""
	if userConfig && o.TrustUserConfig {
		return
	}
	b := &c.m.MC.Spec.Flux.Bursting
	userHosts := b.LeadBroker != nil || b.Hostlist != ""
	text := raw
	if !userConfig {
		// The template must parse before the substitution too: placeholders only inside strings.
		if err := toml.Unmarshal([]byte(raw), new(map[string]any)); err != nil {
			c.errorf("%s (template, before substitution) is not TOML: %v", brokerConfigKey, err)
		}
		for _, p := range []string{placeholderJobName, placeholderDNSSuffix} {
			if strings.Contains(raw, p) && !strings.Contains(init, `//`+p+`/`) {
				c.errorf("%s holds %s but %s does not replace it", brokerConfigKey, p, initScriptKey)
			}
		}
		text = substitute(raw, c.job.Name, testDNSSuffix)
		if strings.Contains(text, "@JOB_") || strings.Contains(text, "@DNS_") || strings.Contains(text, "%!") {
			c.errorf("%s after substitution still holds a placeholder or a fmt error:\n%s", brokerConfigKey, text)
		}
	}
	var cfg map[string]any
	if err := toml.Unmarshal([]byte(text), &cfg); err != nil {
		c.errorf("%s does not parse as TOML: %v", brokerConfigKey, err)
		return
	}
	boot, ok := cfg["bootstrap"].(map[string]any)
	if !ok {
		c.errorf("%s has no [bootstrap] table", brokerConfigKey)
		return
	}
	str := func(key string) string {
		s, ok := boot[key].(string)
		if !ok {
			c.errorf("%s: bootstrap.%s is %#v, want a string", brokerConfigKey, key, boot[key])
		}
		return s
	}
	if certPath := str("curve_cert"); certPath != "" && o.Bash {
		if want := c.curveCopyPath(); want != "" && certPath != want {
			c.errorf("%s: bootstrap.curve_cert is %q, but the broker script copies the certificate to %q", brokerConfigKey, certPath, want)
		}
	}
	if port, ok := boot["default_port"].(int64); !ok || port < 1 || port > 65535 {
		c.errorf("%s: bootstrap.default_port is %#v, want a port number", brokerConfigKey, boot["default_port"])
	}
	if bind := str("default_bind"); !strings.HasPrefix(bind, "tcp://") {
		c.errorf("%s: bootstrap.default_bind %q is not a tcp:// URI", brokerConfigKey, bind)
	}
	if conn := str("default_connect"); !strings.HasPrefix(conn, "tcp://") || !strings.Contains(conn, "%h") {
		c.errorf("%s: bootstrap.default_connect %q is not a tcp:// URI with %%h", brokerConfigKey, conn)
	}
	if hostCount(c.m.MC) > maxHosts {
		return // too many to expand; the checks above still ran
	}
	got := c.configHosts(boot["hosts"])
	if got == nil {
		return
	}
	if !userConfig {
		if want := ExpectedHosts(c.m.MC, c.job.Name); !slices.Equal(got, want) {
			c.errorf("%s: bootstrap.hosts expand to %v, want %v", brokerConfigKey, got, want)
		}
	}
	if !(userHosts && o.TrustUserConfig) {
		c.podsInHosts(got)
	}
	if o.Bash {
		c.hostlistFile(init, got)
	}
}

// configHosts expands the host entries of bootstrap.hosts in rank order.
func (c *checker) configHosts(v any) []string {
	entries, ok := v.([]any)
	if !ok || len(entries) == 0 {
		c.errorf("%s: bootstrap.hosts is %#v, want a non-empty array of tables", brokerConfigKey, v)
		return nil
	}
	var hosts []string
	for i, e := range entries {
		t, ok := e.(map[string]any)
		if !ok {
			c.errorf("%s: bootstrap.hosts[%d] is %#v, want a table", brokerConfigKey, i, e)
			return nil
		}
		for k, v := range t {
			if s, ok := v.(string); !ok || s == "" || !slices.Contains([]string{"host", "bind", "connect", "parent"}, k) {
				c.errorf("%s: bootstrap.hosts[%d].%s = %#v is not a key Flux knows or not a string", brokerConfigKey, i, k, v)
			}
		}
		host, _ := t["host"].(string)
		expanded, err := ExpandHostlist(host)
		if err != nil {
			c.errorf("%s: bootstrap.hosts[%d].host: %v", brokerConfigKey, i, err)
			return nil
		}
		hosts = append(hosts, expanded...)
	}
	return hosts
}

// podsInHosts: every pod of the Job (up to maxSize) finds its hostname exactly once, else its
// broker cannot know its rank; every name is a valid hostname.
func (c *checker) podsInHosts(hosts []string) {
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h] {
			c.errorf("%s: host %q is listed twice in bootstrap.hosts", brokerConfigKey, h)
		}
		seen[h] = true
		if len(validation.IsDNS1123Label(h)) > 0 && len(validation.IsValidIP(nil, h)) > 0 {
			c.errorf("%s: host %q is neither a hostname (DNS label) nor an IP address", brokerConfigKey, h)
		}
	}
	for i := range c.m.MC.Spec.MaxSize {
		if pod := fmt.Sprintf("%s-%d", c.job.Name, i); !seen[pod] {
			c.errorf("%s: the hostname %s of pod %d of Job/%s is not in bootstrap.hosts %v: its broker cannot find its rank",
				brokerConfigKey, pod, i, c.job.Name, hosts)
		}
	}
}

// hostlistFile: the hostlist flux-init.sh writes for `flux R encode` (its hosts= line, evaluated
// by bash, then the same substitution) lists the same hosts as broker.toml.
func (c *checker) hostlistFile(init string, configHosts []string) {
	m := regexp.MustCompile(`(?m)^hosts=(.*)$`).FindStringSubmatch(init)
	if m == nil {
		c.errorf("%s has no hosts= line", initScriptKey)
		return
	}
	out, err := exec.Command("/bin/bash", "-c", "printf %s "+m[1]).Output()
	if err != nil {
		c.errorf("%s: evaluating hosts=%s: %v", initScriptKey, m[1], err)
		return
	}
	list, err := ExpandHostlist(substitute(string(out), c.job.Name, testDNSSuffix))
	if err != nil {
		c.errorf("%s: the hostlist: %v", initScriptKey, err)
		return
	}
	if !slices.Equal(list, configHosts) {
		c.errorf("the hostlist file of %s (%v) differs from bootstrap.hosts (%v)", initScriptKey, list, configHosts)
	}
}

// curveCopyPath is where the broker script copies the certificate: its curvepath variable,
// evaluated by bash with the script's own viewbase and configroot lines.
func (c *checker) curveCopyPath() string {
	script := c.brokerScript()
	if script == "" {
		return ""
	}
	var lines []string
	for _, v := range []string{"viewbase", "configroot", "curvepath"} {
		m := regexp.MustCompile(`(?m)^` + v + `=.*$`).FindString(script)
		if m == "" {
			c.errorf("the broker script has no %s= line", v)
			return ""
		}
		lines = append(lines, m)
	}
	out, err := exec.Command("/bin/bash", "-c", strings.Join(lines, "\n")+"\nprintf %s \"${curvepath}\"").Output()
	if err != nil {
		c.errorf("evaluating the broker script's curvepath: %v", err)
		return ""
	}
	return string(out)
}

// brokerScript is the script the broker (runFlux) container runs: the one that mounts curve.cert.
func (c *checker) brokerScript() string {
	for _, ctr := range c.job.Spec.Template.Spec.Containers {
		if c.mountsCurve(ctr) && len(ctr.Command) == 2 {
			if s, ok := c.entrypoint.Data[path.Base(ctr.Command[1])]; ok {
				return s
			}
		}
	}
	c.errorf("Job/%s: no container mounts the certificate and runs a script of ConfigMap/%s", c.job.Name, c.entrypoint.Name)
	return ""
}

// substitute does what flux-init.sh does to broker.toml.
func substitute(s, job, dnsSuffix string) string {
	return strings.NewReplacer(placeholderJobName, job, placeholderDNSSuffix, dnsSuffix).Replace(s)
}

// hostCount is how many hosts ExpectedHosts lists, without listing them.
func hostCount(mc *v1alpha2.MiniCluster) int64 {
	b := &mc.Spec.Flux.Bursting
	n := int64(mc.Spec.MaxSize)
	if b.LeadBroker != nil {
		n = int64(b.LeadBroker.Size)
	}
	for _, cl := range b.Clusters {
		n += int64(cl.Size)
	}
	return n
}

// ExpectedHosts are the hosts of mc's brokers in rank order, as the operator defines them:
// flux.bursting.hostlist when set; else the lead broker's address and <leadBroker.name>-1 …
// <leadBroker.name>-<size-1> when there is a lead broker, or else the pods <job>-0 …
// <job>-<maxSize-1>; then <cluster>-0 … <cluster>-<size-1> for each bursting cluster.
func ExpectedHosts(mc *v1alpha2.MiniCluster, job string) []string {
	b := &mc.Spec.Flux.Bursting
	if b.Hostlist != "" {
		hosts, _ := ExpandHostlist(b.Hostlist)
		return hosts
	}
	var hosts []string
	hostRange := func(prefix string, from, to int32) {
		for i := from; i < to; i++ {
			hosts = append(hosts, fmt.Sprintf("%s-%d", prefix, i))
		}
	}
	if lb := b.LeadBroker; lb != nil {
		hosts = append(hosts, lb.Address)
		hostRange(lb.Name, 1, lb.Size)
	} else {
		hostRange(job, 0, mc.Spec.MaxSize)
	}
	for _, cl := range b.Clusters {
		hostRange(cl.Name, 0, cl.Size)
	}
	return hosts
}

// maxHosts bounds ExpandHostlist, so that a fuzzed range cannot exhaust memory.
const maxHosts = 1 << 16

// ExpandHostlist expands a Flux hostlist (RFC 29): comma-separated hosts, each a prefix, an
// optional bracketed list of numbers and ranges (zero padding kept, "01-10") and a suffix, e.g.
// "a-[0-3],b-7,c[01,04-05]x".
func ExpandHostlist(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("empty hostlist")
	}
	var items []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, s[start:i])
				start = i + 1
			}
		}
		if depth < 0 || depth > 1 {
			return nil, fmt.Errorf("unbalanced brackets in hostlist %q", s)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced brackets in hostlist %q", s)
	}
	items = append(items, s[start:])
	var out []string
	for _, item := range items {
		if item == "" {
			return nil, fmt.Errorf("empty host in hostlist %q", s)
		}
		open := strings.IndexByte(item, '[')
		if open < 0 {
			out = append(out, item)
			continue
		}
		end := strings.IndexByte(item, ']')
		prefix, ranges, suffix := item[:open], item[open+1:end], item[end+1:]
		for _, r := range strings.Split(ranges, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, errA := strconv.Atoi(lo)
			b, errB := strconv.Atoi(hi)
			if errA != nil || errB != nil || a < 0 || b < a || lo == "" {
				return nil, fmt.Errorf("bad range %q in hostlist %q", r, s)
			}
			width := 0
			if len(lo) > 1 && lo[0] == '0' {
				width = len(lo)
			}
			if b-a >= maxHosts-len(out) {
				return nil, fmt.Errorf("hostlist %q has more than %d hosts", s, maxHosts)
			}
			for i := a; i <= b; i++ {
				out = append(out, fmt.Sprintf("%s%0*d%s", prefix, width, i, suffix))
			}
		}
	}
	return out, nil
}
