// The live tests: generated MiniClusters on a real single-node cluster (tests/cluster). A module
// of its own, out of the binary's module; standard library only (it drives kubectl, kustomize, kpt).
module github.com/minicluster-fn/minicluster-fn/tests/live

go 1.26.0
