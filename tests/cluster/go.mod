// Small programs of the live-test cluster harness (tests/cluster/*.sh). A module of its own, so the
// harness stays out of the binary's module; standard library only.
module github.com/minicluster-fn/minicluster-fn/tests/cluster

go 1.26.0
