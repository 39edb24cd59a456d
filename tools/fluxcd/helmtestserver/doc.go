// Package helmtestserver is empty: see go.mod. Compiling source-controller's tests against it fails,
// and nothing here does that.
package helmtestserver
