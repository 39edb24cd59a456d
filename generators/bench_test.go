package generators

import (
	"os"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

func benchHelloWorld(b *testing.B) (*v1alpha2.MiniCluster, v1alpha2.Options) {
	b.Helper()
	data, err := os.ReadFile("../examples/hello-world/minicluster.yaml")
	if err != nil {
		b.Fatal(err)
	}
	mc, errs := v1alpha2.Decode(data)
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	mc.Default()
	opts, errs := mc.ParseOptions()
	if errs = append(errs, mc.Validate(opts)...); len(errs) > 0 {
		b.Fatal(errs)
	}
	return mc, opts
}

// BenchmarkGenerateHelloWorld is Generate on the hello-world MiniCluster.
func BenchmarkGenerateHelloWorld(b *testing.B) {
	mc, opts := benchHelloWorld(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Generate(mc, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEntrypointDataHelloWorld renders the hello-world scripts.
func BenchmarkEntrypointDataHelloWorld(b *testing.B) {
	mc, opts := benchHelloWorld(b)
	n := newNames(mc, opts, placeholderHash, placeholderHash, placeholderHash)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := entrypointData(mc, v1alpha2.Options{}, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveNamesHelloWorld is the hashing that names the hello-world objects.
func BenchmarkResolveNamesHelloWorld(b *testing.B) {
	mc, opts := benchHelloWorld(b)
	n := newNames(mc, opts, placeholderHash, placeholderHash, placeholderHash)
	data, err := entrypointData(mc, v1alpha2.Options{}, n)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := resolveNames(mc, opts, n, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTemplates parses the parts and every script, as a process that writes every kind
// of script does once (uncached here).
func BenchmarkParseTemplates(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parts := parseParts()
		for name := range scriptTemplates {
			parseScript(parts, name)
		}
	}
}
