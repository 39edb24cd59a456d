package v1alpha2

import (
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"mvdan.cc/sh/v3/syntax"

	"github.com/minicluster-fn/minicluster-fn/internal/curve"
)

// Text the user writes that the generated scripts and config take verbatim is checked here, so a
// typo is an error naming its field at render time instead of a broker pod that fails to start.

// validateShell reports code that bash cannot parse; the message is the parser's, with its line
// and column in the field's text.
func validateShell(code string, p *field.Path) field.ErrorList {
	if strings.TrimSpace(code) == "" {
		return nil
	}
	// A parser per call: MiniClusters are validated in parallel, and a parser keeps state. Bash is
	// the shell the generated scripts run in.
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	if _, err := parser.Parse(strings.NewReader(code), ""); err != nil {
		return field.ErrorList{field.Invalid(p, code, "is not valid bash, and the generated scripts run it as is: "+err.Error())}
	}
	return nil
}

// validateCommands checks the hooks the scripts run as shell code, and the prefix they put in
// front of the broker command.
func validateCommands(c *Commands, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, hook := range []struct {
		name, code string
	}{{"init", c.Init}, {"pre", c.Pre}, {"post", c.Post}, {"workerPre", c.WorkerPre}, {"brokerPre", c.BrokerPre}, {"servicePre", c.ServicePre}} {
		errs = append(errs, validateShell(hook.code, p.Child(hook.name))...)
	}
	if strings.TrimSpace(c.Prefix) != "" {
		// The prefix is written in front of the command it wraps.
		if errs2 := validateShell(c.Prefix+" true", p.Child("prefix")); len(errs2) > 0 {
			errs2[0].BadValue = c.Prefix
			errs = append(errs, errs2...)
		}
	}
	return errs
}

// validateFluxText checks spec.flux's verbatim text: the broker config must be TOML, an inline
// certificate must be one Flux accepts (its problems are named without echoing key material),
// and the submit command is shell code.
func validateFluxText(f *FluxSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.BrokerConfig != "" {
		var doc map[string]any
		if err := toml.Unmarshal([]byte(f.BrokerConfig), &doc); err != nil {
			errs = append(errs, field.Invalid(p.Child("brokerConfig"), "<broker config>", "is not TOML, and Flux reads it as TOML: "+err.Error()))
		}
	}
	if f.CurveCert != "" {
		if err := curve.Validate([]byte(f.CurveCert)); err != nil {
			var msgs []string
			for _, e := range unjoin(err) {
				msgs = append(msgs, e.Error())
			}
			errs = append(errs, field.Invalid(p.Child("curveCert"), "<certificate>", "is not a certificate Flux accepts: "+strings.Join(msgs, "; ")))
		}
	}
	errs = append(errs, validateShell(f.SubmitCommand, p.Child("submitCommand"))...)
	return errs
}

// unjoin lists the errors an errors.Join holds, or err itself.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
