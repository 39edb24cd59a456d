// An empty stand-in for github.com/fluxcd/pkg/helmtestserver, used only by the replace line in
// ../go.mod. Only source-controller's tests import that package, so no binary built from ../go.mod
// contains it; but `go mod tidy` loads the tests of every dependency, and this machine's Go proxy
// refuses the zip of v0.40.2 (source-controller v1.9.6's version) and of v0.40.0 (403 "This module
// version is not available"). Without it, tidy fails in ../ and .ci/hygiene.sh with it.
module github.com/fluxcd/pkg/helmtestserver

go 1.26.0
