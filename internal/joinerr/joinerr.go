// Package joinerr lists the errors that errors.Join put together, for messages that give each
// its own line or entry.
package joinerr

// Split is the errors err joins (errors.Join, or any error whose Unwrap returns a list), or err
// itself.
func Split(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
