# shellcheck shell=bash
# The Go toolchain that builds and tests everything in this repository, sourced by .ci/run, the
# Makefile (which exports it to every target) and the build scripts under tests/cluster. Argo CD
# v3.6.1 (tools/argocd) needs Go 1.27, newer than the machine's Go 1.26.8; the go command fetches
# this toolchain from the Go module proxy the first time (about 76 MB). One toolchain for every
# build, because the Go build cache keys each compiled package by the compiler that made it: with
# Argo CD alone on its own Go, a cold run compiled the standard library and every package it shares
# with the other builds (Kubernetes' client packages, gRPC, the x/ modules) a second time
# (docs/testing.md). The modules' go lines stay 1.26.0: their users build them with their own Go.
# Go 1.27 turns GOEXPERIMENT=jsonv2 on: a k8s.io/kube-openapi older than the root module's
# (d427ff9ee9ad) aliases its copy of go-json-experiment to encoding/json/v2, whose renamed tag
# options drop the x-kubernetes-* extensions (with Kubernetes v1.36.4's own, kube-apiserver
# answered /openapi/v2 with 503): every module here that compiles kube-openapi requires one
# without that alias (.ci/hygiene.sh checks the builds it lists).
export GOTOOLCHAIN=go1.27.3
