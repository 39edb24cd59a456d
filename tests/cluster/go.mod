// Small programs of the live-test cluster harness (tests/cluster/*.sh). A module of its own, so the
// harness stays out of the binary's module. pause and probe use the standard library only;
// ociregistry uses go-containerregistry's registry (the version flux2 v2.9.5, tools/fluxcd-cli,
// pushes with).
module github.com/minicluster-fn/minicluster-fn/tests/cluster

go 1.26.0

require github.com/google/go-containerregistry v0.21.6
