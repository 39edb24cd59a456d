package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/minicluster-fn/minicluster-fn/internal/joinerr"
)

// errInvalidInput is what render and validate return when they printed problems with the input
// as results: nothing is left to print.
var errInvalidInput = errors.New("invalid input")

// usageError is a command line a command cannot run: a flag or an argument that is missing, wrong
// or out of place. It is printed with a pointer to the command's help.
type usageError struct {
	err     error
	command string // the command's path, "minicluster-fn keygen"
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf is a usage error of cmd.
func usageErrorf(cmd *cobra.Command, format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...), command: cmd.CommandPath()}
}

// usageArgs makes the errors of an argument check usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err: err, command: cmd.CommandPath()}
		}
		return nil
	}
}

// execute runs the command line and prints its error, if any, once, on the command's stderr:
// "error: " and the message, a line for each error an errors.Join holds, then for a usage error
// the pointer to the help. Commands return their errors and print none. Every error cobra raises
// itself (an unknown command, flags that exclude each other) is about usage too; problems with
// the input were printed as results already.
func execute(root *cobra.Command) error {
	cmd, err := root.ExecuteC()
	var results framework.Results
	if err == nil || errors.Is(err, errInvalidInput) || errors.As(err, &results) {
		return err
	}
	help := ""
	var usage *usageError
	var failed *commandError
	switch {
	case errors.As(err, &usage):
		help = usage.command
		err = usage.err
	case errors.As(err, &failed):
		err = failed.err
	default:
		help = cmd.CommandPath()
	}
	w := root.ErrOrStderr()
	for _, e := range joinerr.Split(err) {
		fmt.Fprintf(w, "error: %v\n", e)
	}
	if help != "" {
		fmt.Fprintf(w, "Run '%s --help' for usage.\n", help)
	}
	return err
}

// commandError is an error a command's RunE returned, told apart by execute from the errors cobra
// raises before it runs the command.
type commandError struct{ err error }

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// markCommandErrors wraps the RunE of cmd and of every command under it, so that their errors are
// commandErrors.
func markCommandErrors(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if err := run(c, args); err != nil {
				return &commandError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		markCommandErrors(sub)
	}
}
