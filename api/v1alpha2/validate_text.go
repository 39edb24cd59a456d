package v1alpha2

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"mvdan.cc/sh/v3/syntax"

	"github.com/minicluster-fn/minicluster-fn/internal/curve"
	"github.com/minicluster-fn/minicluster-fn/internal/joinerr"
)

// validateShell reports code that bash cannot parse; the message is the parser's, with its line
// and column in the field's text. Text the user writes that the generated scripts and config take
// verbatim is checked here and in the functions below, so a typo is an error naming its field at
// render time instead of a broker pod that fails to start.
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

// brokerCommandWords is how the broker script (wait.sh) splits the runFlux container's command
// into words without running it: it evaluates this text with @COMMAND@ replaced by the command.
// Quotes, escapes, $VAR and $(...) work as on a command line; shell syntax between words (&&, |,
// ;, redirections) and an unbalanced quote or parenthesis make the evaluation fail in the pod.
const brokerCommandWords = "command_args=(\n@COMMAND@\n)"

// validateBrokerCommand parses the command as the broker script evaluates it, so what bash would
// refuse there is an error now, pointing to commands.script for shell code.
func validateBrokerCommand(command string, p *field.Path) field.ErrorList {
	if problem := brokerCommandProblem(command); problem != "" {
		return field.ErrorList{field.Invalid(p, command, "the broker script splits this command line into words "+
			"(quotes, escapes and $VAR work) and does not run it as shell code: "+problem+"; write shell code in commands.script instead, or run it as bash -c '...'")}
	}
	return nil
}

// brokerCommandProblem says why command is not a list of words that brokerCommandWords takes, with
// the line and column in the command; "" when it is one.
func brokerCommandProblem(command string) string {
	before, _, _ := strings.Cut(brokerCommandWords, "@COMMAND@")
	firstLine := uint(strings.Count(before, "\n") + 1) // where the command starts in src
	lines := uint(strings.Count(command, "\n") + 1)
	src := strings.Replace(brokerCommandWords, "@COMMAND@", command, 1)
	// at is a position of src in the command's own lines and columns, or "" outside of it.
	at := func(pos syntax.Pos) string {
		if pos.Line() < firstLine || pos.Line() >= firstLine+lines {
			return ""
		}
		return fmt.Sprintf("%d:%d: ", pos.Line()-firstLine+1, pos.Col())
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		var pos syntax.Pos
		var pe syntax.ParseError
		var le syntax.LangError
		switch {
		case errors.As(err, &pe):
			pos = pe.Pos
		case errors.As(err, &le):
			pos = le.Pos
		default:
			return err.Error()
		}
		text := strings.TrimPrefix(err.Error(), pos.String()+": ")
		switch text {
		case "array element values must be words", "arrays cannot be nested":
			// The parser's words for shell syntax among the words.
			op := src[pos.Offset():]
			op = op[:max(1, len(op)-len(strings.TrimLeft(op, "&|;<>()")))]
			return fmt.Sprintf("%s%q is shell syntax, not a word", at(pos), op)
		}
		if where := at(pos); where != "" {
			return where + text
		}
		return "a quote or a parenthesis is unbalanced: " + text
	}
	var array *syntax.ArrayExpr
	syntax.Walk(f, func(n syntax.Node) bool {
		if a, ok := n.(*syntax.ArrayExpr); ok && array == nil {
			array = a
		}
		return array == nil
	})
	// A ")" in the command closes the list early, and what follows it would run as shell code:
	// then the text is more than the one assignment.
	stmt := f.Stmts[0]
	if call, ok := stmt.Cmd.(*syntax.CallExpr); len(f.Stmts) != 1 || !ok || len(call.Args) > 0 || len(call.Assigns) != 1 || len(stmt.Redirs) > 0 ||
		stmt.Background || stmt.Negated || stmt.Coprocess || call.Assigns[0].Array != array {
		return at(array.Rparen) + `")" is shell syntax, not a word`
	}
	var problem string
	syntax.Walk(array, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ArrayElem:
			if n.Index != nil && problem == "" {
				// [i]=v sets element i of the list instead of adding a word.
				problem = at(n.Pos()) + "a word of the form [index]=value sets an element of the script's word list; quote it"
			}
		case *syntax.ExtGlob:
			if problem == "" {
				// bash parses these patterns only with extglob on, and the script does not set it.
				problem = at(n.Pos()) + fmt.Sprintf("%s...) is an extended glob, which the script's bash does not enable", n.Op)
			}
		}
		return problem == ""
	})
	return problem
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
			for _, e := range joinerr.Split(err) {
				msgs = append(msgs, e.Error())
			}
			errs = append(errs, field.Invalid(p.Child("curveCert"), "<certificate>", "is not a certificate Flux accepts: "+strings.Join(msgs, "; ")))
		}
	}
	errs = append(errs, validateShell(f.SubmitCommand, p.Child("submitCommand"))...)
	return errs
}
