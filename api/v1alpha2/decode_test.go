package v1alpha2_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

const head = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\n"

// badInputs are documents (after head) with every kind of problem Decode reports, and values
// of the types with their own decoding (quantities, times, raw fields).
var badInputs = map[string]string{
	"unknown at the root":                 "foo: 1\nspec: {containers: [{image: a}]}",
	"unknown in spec":                     "spec: {sizee: 2, containers: [{image: a}]}",
	"unknown in metadata":                 "spec: {}\nstatus: {sizee: 1}\nmetadata: {nam: x}",
	"unknown in a list element":           "spec: {containers: [{image: a}, {image: b, comand: x}]}",
	"unknown in securityContext":          "spec: {containers: [{image: a}, {image: b, securityContext: {runAsUserr: 1, capabilities: {ad: [X]}}}]}",
	"unknown in a pod sysctl":             "spec: {pod: {securityContext: {sysctls: [{name: a, valu: b}]}}}",
	"unknown in a map value":              "spec: {containers: [{image: a, volumes: {data: {pth: /d}, other: {path: /o, hostpat: /x}}}]}",
	"unknown in a secret":                 "spec: {containers: [{image: a, secrets: {TOKEN: {name: s, ky: k}}}]}",
	"unknown in managedFields":            "metadata: {name: a, managedFields: [{manager: m, operaton: Apply}]}",
	"unknown in resources":                "spec: {containers: [{image: a, resources: {limit: {cpu: 1}}}]}",
	"unknown fields, many":                "spec: {a: 1, b: 2, c: 3, containers: [{x: 1, y: 2}, {x: 3}], flux: {z: 1, container: {w: 1}}}",
	"string where int":                    "spec: {size: four}",
	"string where int in a list":          "spec: {containers: [{image: a}, {image: b, ports: [80, \"http\"]}]}",
	"string where int in securityContext": "spec: {containers: [{image: a}, {image: b, securityContext: {runAsUser: root}}]}",
	"float into int32":                    "spec: {size: 1.5}",
	"float into int64":                    "spec: {deadlineSeconds: 2.0e1}",
	"exponent into int32":                 "spec: {size: 1e3}",
	"out of range int32":                  "spec: {size: 3000000000}",
	"out of range negative int32":         "spec: {maxSize: -2147483649}",
	"int32 at its limits":                 "spec: {size: 2147483647, maxSize: -2147483648, containers: [{image: a}]}",
	"out of range int64":                  "spec: {deadlineSeconds: 99999999999999999999}",
	"negative zero":                       "spec: {size: -0, containers: [{image: a}]}",
	"bool where string":                   "spec: {containers: [{image: true}]}",
	"number where string":                 "spec: {containers: [{image: 5}]}",
	"number where bool":                   "spec: {interactive: 1}",
	"string where bool in a map value":    "spec: {containers: [{image: a, volumes: {d: {path: /d, readOnly: \"yes\"}}}]}",
	"object where string":                 "spec: {containers: [{image: {name: b}}]}",
	"object where list":                   "spec: {containers: {image: x}}",
	"array where object":                  "spec: {flux: [a]}",
	"array where map":                     "spec: {jobLabels: [a]}",
	"array where string in a map":         "spec: {jobLabels: {a: [b]}}",
	"number where string in a map":        "spec: {jobLabels: {a: 1, b: true}, pod: {nodeSelector: {c: 2}}}",
	"list of lists":                       "spec: {pod: {nodeAffinity: {zone: [a, 1]}}}",
	"spec not a mapping":                  "spec: 5",
	"metadata a list":                     "metadata: [a]",
	"status a string":                     "status: ready",
	"first type error wins":               "spec: {containers: [{image: 1}], size: x, maxSize: 1.5}",
	"type error and unknown field":        "spec: {containers: [{image: a, imagee: b}], size: x}",
	"null spec":                           "spec: null",
	"null metadata":                       "metadata: null\nspec: {containers: [{image: a}]}",
	"null list":                           "spec: {containers: null}",
	"null list element":                   "spec: {containers: [null, {image: a}]}",
	"null pointer field":                  "spec: {tasks: null, flux: {logLevel: null, bursting: {leadBroker: null}}, containers: [{image: a}]}",
	"null pointer field set":              "spec: {tasks: 0, flux: {logLevel: 0, bursting: {leadBroker: {name: l}}}, containers: [{image: a}]}",
	"null scalars":                        "spec: {size: null, interactive: null, containers: [{image: null, ports: [null, 80]}]}",
	"null map value":                      "spec: {jobLabels: {a: null}, containers: [{image: a, volumes: {d: null}}]}",
	"null map":                            "spec: {jobLabels: null, containers: [{image: a, environment: null}]}",
	"null in securityContext":             "spec: {containers: [{image: a, securityContext: {runAsUser: null, capabilities: null, privileged: null}}]}",
	"null securityContext":                "spec: {containers: [{image: a, securityContext: null}], pod: {securityContext: null}}",
	"null quantity":                       "spec: {pod: {resources: {cpu: null}}, containers: [{image: a, resources: {limits: {cpu: null}, requests: null}}]}",
	"empty list and map":                  "spec: {containers: [], jobLabels: {}, pod: {tolerations: [], nodeAffinity: {a: []}}}",
	"quantities":                          "spec: {pod: {resources: {cpu: 2, memory: 512Mi, nvidia.com/gpu: \"1\"}}, containers: [{image: a, resources: {limits: {cpu: 500m, memory: 1Gi}, requests: {cpu: 0.5, memory: 1e3, ephemeral-storage: 1.5Ti}}}]}",
	"quantity, negative and exponent":     "spec: {pod: {resources: {cpu: -1, memory: 1e-3, storage: \"+1E3\"}}}",
	"invalid quantity":                    "spec: {containers: [{image: a, resources: {limits: {cpu: 500x}}}]}",
	"invalid quantity, empty":             "spec: {pod: {resources: {cpu: \"\"}}}",
	"quantity as an object":               "spec: {pod: {resources: {cpu: {a: 1}}}}",
	"quantity as a list":                  "spec: {pod: {resources: {cpu: [1]}}}",
	"quantity as true":                    "spec: {pod: {resources: {cpu: true}}}",
	"quantity error after a type error":   "spec: {backoffLimit: x, containers: [{image: a, resources: {limits: {cpu: bad}}}]}",
	"quantity error before a type error":  "spec: {containers: [{image: a, resources: {limits: {cpu: bad}}}], size: x}",
	"quantity error and unknown field":    "spec: {containers: [{image: a, imagee: b, resources: {limits: {cpu: bad}}}]}",
	"creationTimestamp":                   "metadata: {name: a, creationTimestamp: \"2024-01-02T03:04:05Z\"}\nspec: {containers: [{image: a}]}",
	"creationTimestamp with an offset":    "metadata: {name: a, creationTimestamp: \"2024-01-02T03:04:05+02:00\", deletionTimestamp: \"2024-01-03T00:00:00Z\"}",
	"creationTimestamp null":              "metadata: {name: a, creationTimestamp: null, deletionTimestamp: null}",
	"creationTimestamp invalid":           "metadata: {name: a, creationTimestamp: yesterday}",
	"creationTimestamp a number":          "metadata: {name: a, creationTimestamp: 5}",
	"creationTimestamp an object":         "metadata: {name: a, creationTimestamp: {a: 1}}",
	"creationTimestamp a YAML date":       "metadata: {name: a, creationTimestamp: 2024-01-02}",
	"condition times":                     "status: {conditions: [{type: Ready, status: \"True\", observedGeneration: 3, lastTransitionTime: \"2024-01-02T03:04:05Z\", reason: R, message: m}]}",
	"condition time invalid":              "status: {conditions: [{type: Ready}, {type: Done, lastTransitionTime: now}]}",
	"managedFields":                       "metadata: {name: a, managedFields: [{manager: m, operation: Apply, time: \"2024-01-02T03:04:05Z\", fieldsType: FieldsV1, fieldsV1: {\"f:spec\": {\"f:size\": {}}, \"f:a<b&c\": {}}}]}",
	"managedFields raw null":              "metadata: {name: a, managedFields: [{fieldsV1: null}]}",
	"managedFields raw scalar":            "metadata: {name: a, managedFields: [{fieldsV1: 5}, {fieldsV1: \"x\"}]}",
	"managedFields raw binary":            "metadata: {name: a, managedFields: [{fieldsV1: {f: !!binary /w==, g: \"\\uFFFD\"}}]}",
	"metadata everything":                 "metadata: {name: a, namespace: n, generateName: g, uid: u, resourceVersion: \"1\", generation: 2, deletionGracePeriodSeconds: 30, labels: {a: b}, annotations: {c: d}, finalizers: [f], ownerReferences: [{apiVersion: v1, kind: K, name: o, uid: x, controller: true, blockOwnerDeletion: false}]}",
	"securityContext everything":          "spec: {containers: [{image: a, securityContext: {runAsUser: 1, runAsGroup: 2, runAsNonRoot: true, privileged: false, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, procMount: Default, capabilities: {add: [A], drop: [B]}, seLinuxOptions: {user: u, role: r, type: t, level: l}, windowsOptions: {gmsaCredentialSpecName: g, runAsUserName: u, hostProcess: false}, seccompProfile: {type: Localhost, localhostProfile: p}, appArmorProfile: {type: Unconfined}}}]}",
	"pod securityContext everything":      "spec: {pod: {securityContext: {fsGroup: 1, fsGroupChangePolicy: Always, supplementalGroups: [1, 2], supplementalGroupsPolicy: Merge, sysctls: [{name: a, value: b}], seLinuxChangePolicy: Recursive}}}",
	"spec everything":                     "spec: {size: 2, maxSize: 4, minSize: 1, tasks: 4, backoffLimit: 1, deadlineSeconds: 60, interactive: true, cleanup: true, shareProcessNamespace: true, network: {headlessName: h, disableAffinity: true}, logging: {quiet: true, strict: true, debug: true, zeromq: true, timed: true}, archive: {path: /a}, jobLabels: {a: b}, flux: {container: {image: f, resources: {limits: {cpu: 1}}}, arch: arm, logLevel: 7, environment: {A: B}, scheduler: {simple: true, queuePolicy: easy}, bursting: {hostlist: h, leadBroker: {address: a, name: n, size: 1, port: 8050}, clusters: [{name: c, size: 2}]}}, pod: {annotations: {a: b}, labels: {c: d}, nodeSelector: {e: f}, nodeAffinity: {g: [h]}, tolerations: [{key: k, effect: NoSchedule, operator: Exists, value: v}], restartPolicy: Never, dnsPolicy: None, hostIPC: true, hostPID: true}, containers: [{image: a, name: n, workingDir: /w, command: c, ports: [80, 443], environment: {X: Y}, secrets: {S: {name: n, key: k}}, volumes: {v: {path: /p, configMapName: c, items: {a: b}, csiDriverAttributes: {c: d}}}, lifeCycle: {postStartExec: p, preStopExec: q}, commands: {pre: p, script: s}, launcher: true, batch: true, batchRaw: true, logs: /l, runFlux: true, noWrapEntrypoint: true, pullAlways: true}], services: [{image: s, name: s}]}",
	"strings with escapes":                "spec: {containers: [{image: \"a\\\"b\\\\c\\u00e9\\u2028<>&\\t\", command: \"\\x01\\U0001F600\"}]}",
	"keys with dots and brackets":         "spec: {jobLabels: {a.b/c: \"1\", \"x[0]\": y}, containers: [{image: a, volumes: {a.b: {pth: x}, \"a\": {b.pth: y}}}]}",
	"case-variant keys":                   "Spec: {size: 1}\nspec: {Size: 2, containers: [{Image: a}]}",
	"image references that do not parse":  "metadata: {name: a, annotations: {minicluster-fn.dev/keygen-image: \"Keygen:V1\"}}\nspec: {flux: {container: {image: \"view image\"}}, services: [{name: s, image: \"reg:5000/Svc\"}], containers: [{image: \"Ubuntu:Noble\"}, {name: b, image: \"ubuntu noble\"}, {name: c, image: \"app@sha256:abc\"}]}",
}

// TestDecodeErrors: Decode's errors name the exact field, with list indices and map keys.
func TestDecodeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want []string
	}{
		"unknown in a list element": {"spec: {containers: [{image: a}, {image: b, comand: x}]}",
			[]string{"spec.containers[1].comand: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.containers[1].command?"}},
		"unknown in a map value": {"spec: {containers: [{image: a, volumes: {data: {pth: /d}}}]}",
			[]string{"spec.containers[0].volumes[data].pth: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.containers[0].volumes[data].path?"}},
		"letters swapped": {"spec: {contianers: [{image: a}]}",
			[]string{"spec.contianers: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.containers?"}},
		"a letter missing": {"spec: {containers: [{image: a, volumes: {d: {path: /d, hostPat: /x}}}]}",
			[]string{"spec.containers[0].volumes[d].hostPat: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.containers[0].volumes[d].hostPath?"}},
		"two fields as near": {"spec: {containers: [{image: a}], mixSize: 4}",
			[]string{"spec.mixSize: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.maxSize or spec.minSize?"}},
		"in a Kubernetes type": {"spec: {containers: [{image: a, securityContext: {runAsUsr: 1}}]}",
			[]string{"spec.containers[0].securityContext.runAsUsr: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.containers[0].securityContext.runAsUser?"}},
		"nothing near": {"spec: {containers: [{image: a}], parallelism: 4}",
			[]string{"spec.parallelism: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"}},
		"unknown fields sorted": {"spec: {zz: 1, containers: [{image: a, aa: 2}]}\nmetadata: {name: a, bb: 3}",
			[]string{
				"metadata.bb: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)",
				"spec.containers[0].aa: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)",
				"spec.zz: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)",
			}},
		"wrong type": {"spec: {size: four}",
			[]string{`spec.size: Invalid value: "<string>": wrong type: expected an integer`}},
		"wrong type in securityContext": {"spec: {containers: [{image: a}, {image: b, securityContext: {runAsUser: root}}]}",
			[]string{`spec.containers[1].securityContext.runAsUser: Invalid value: "<string>": wrong type: expected an integer`}},
		"wrong type in a map value": {"spec: {containers: [{image: a, volumes: {data: {path: [/d]}}}]}",
			[]string{`spec.containers[0].volumes[data].path: Invalid value: "<array>": wrong type: expected a string`}},
		"wrong type, map value": {"spec: {jobLabels: {team: {a: b}}}",
			[]string{`spec.jobLabels[team]: Invalid value: "<object>": wrong type: expected a string`}},
		"float into int32": {"spec: {containers: [{image: a, ports: [80, 1.5]}]}",
			[]string{`spec.containers[0].ports[1]: Invalid value: "<number 1.5>": wrong type: expected an integer`}},
		"out of range": {"spec: {size: 3000000000}",
			[]string{`spec.size: Invalid value: "<number 3000000000>": wrong type: expected an integer`}},
		"object where list": {"spec: {containers: {image: x}}",
			[]string{`spec.containers: Invalid value: "<object>": wrong type: expected a list`}},
		"list where object": {"spec: {flux: [a]}",
			[]string{`spec.flux: Invalid value: "<array>": wrong type: expected a mapping`}},
		"only the type error": {"spec: {sizee: 1, size: x}",
			[]string{`spec.size: Invalid value: "<string>": wrong type: expected an integer`}},
		"invalid quantity": {"spec: {containers: [{image: a, resources: {limits: {cpu: 500x}}}]}",
			[]string{`spec.containers[0].resources.limits[cpu]: Invalid value: "500x": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`}},
		"invalid time": {"metadata: {name: a, creationTimestamp: yesterday}",
			[]string{`metadata.creationTimestamp: Invalid value: "yesterday": parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`}},
		"time a number": {"metadata: {name: a, creationTimestamp: 5}",
			[]string{`metadata.creationTimestamp: Invalid value: "<number>": wrong type: expected a string`}},
		"size zero": {"spec: {size: 0, containers: [{image: a}]}",
			[]string{`spec.size: Invalid value: 0: must be at least 1`}},
		"size null is no size": {"spec: {size: null, containers: [{image: a}]}", nil},
		"size in another case is no size": {"spec: {Size: 0, containers: [{image: a}]}",
			[]string{"spec.Size: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema; did you mean spec.size?"}},
		"fine": {"spec: {size: 2, containers: [{image: a, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}", nil},
	} {
		t.Run(name, func(t *testing.T) {
			mc, errs := v1alpha2.Decode([]byte(head + tc.doc + "\n"))
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors\n got %q\nwant %q", got, tc.want)
			}
			// A value that does not decode leaves no MiniCluster; unknown fields and size 0 do.
			decodeFails := slices.ContainsFunc(tc.want, func(e string) bool {
				return strings.Contains(e, ": Invalid value: ") && !strings.HasSuffix(e, "must be at least 1")
			})
			if (mc == nil) != decodeFails {
				t.Errorf("MiniCluster %v, want one only when every value decodes", mc)
			}
		})
	}
}

// TestDecodeSize: spec.size keeps what the document says; an explicit 0 is an error, and no size
// (or null) is 0 for Default to fill in.
func TestDecodeSize(t *testing.T) {
	for doc, want := range map[string]int32{
		"spec: {containers: [{image: a}]}":             0,
		"spec: {size: null, containers: [{image: a}]}": 0,
		"spec: null": 0,
		"spec: {size: 3, containers: [{image: a}]}":           3,
		"spec: {size: -2147483648, containers: [{image: a}]}": -2147483648,
		"spec: {size: 2147483647, containers: [{image: a}]}":  2147483647,
		"spec: {size: 0, containers: [{image: a}]}":           0,
	} {
		mc, errs := v1alpha2.Decode([]byte(head + doc + "\n"))
		if mc == nil {
			t.Fatalf("%s: %v", doc, errs)
		}
		if mc.Spec.Size != want {
			t.Errorf("%s: size %d, want %d", doc, mc.Spec.Size, want)
		}
		sizeErr := slices.ContainsFunc(errs, func(e *field.Error) bool { return e.Field == "spec.size" })
		if sizeErr != strings.Contains(doc, "size: 0") {
			t.Errorf("%s: errors %v", doc, errs)
		}
	}
}

// TestDecodeQuantities: quantities decode to their values.
func TestDecodeQuantities(t *testing.T) {
	mc, errs := v1alpha2.Decode([]byte(head + "spec: {containers: [{image: a, resources: {limits: {cpu: 500m, memory: 1Gi}, requests: {cpu: 0.25}}}]}\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	res := mc.Spec.Containers[0].Resources
	if got := res.Limits.Cpu().MilliValue(); got != 500 {
		t.Errorf("cpu limit %d m, want 500", got)
	}
	if got := res.Limits.Memory().Value(); got != 1<<30 {
		t.Errorf("memory limit %d, want 1Gi", got)
	}
	if got := res.Requests.Cpu().MilliValue(); got != 250 {
		t.Errorf("cpu request %d m, want 250", got)
	}
}

// TestDecodeConcurrently: decoding in parallel (fn does) shares the decoder's type caches
// safely; run with -race.
func TestDecodeConcurrently(t *testing.T) {
	examples, err := outputcheck.Examples()
	if err != nil {
		t.Fatal(err)
	}
	problems := make(chan string, 8)
	for range cap(problems) {
		go func() {
			bad := ""
			for _, in := range examples {
				if mc, errs := v1alpha2.Decode(in.Doc); mc == nil || len(errs) > 0 {
					bad += in.Name + ": " + errs.ToAggregate().Error() + "\n"
				}
			}
			problems <- bad
		}()
	}
	for range cap(problems) {
		if bad := <-problems; bad != "" {
			t.Error(bad)
		}
	}
}

// BenchmarkDecode: a hello-world MiniCluster, decoded after the first time.
func BenchmarkDecode(b *testing.B) {
	doc, err := os.ReadFile("../../examples/hello-world/minicluster.yaml")
	if err != nil {
		b.Fatal(err)
	}
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decode", func(b *testing.B) {
		for b.Loop() {
			if _, errs := v1alpha2.Decode(doc); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("sigsjson.UnmarshalStrict", func(b *testing.B) {
		for b.Loop() {
			var mc v1alpha2.MiniCluster
			if _, err := sigsjson.UnmarshalStrict(js, &mc, sigsjson.DisallowUnknownFields); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeBadInputs: every kind of problem gives at least one error, and every error names a
// field (or is about the whole document); the documents that only hold values of types with their
// own decoding decode.
func TestDecodeBadInputs(t *testing.T) {
	for name, doc := range badInputs {
		t.Run(name, func(t *testing.T) {
			mc, errs := v1alpha2.Decode([]byte(head + doc + "\n"))
			if mc == nil && len(errs) == 0 {
				t.Fatal("neither a MiniCluster nor an error")
			}
			for _, e := range errs {
				if e.Field == "" && !documentLevel(e) {
					t.Errorf("error without a field path: %v", e)
				}
			}
		})
	}
}

// TestDuplicateKeys: a key given twice is found at its field, with its line and the first key's,
// wherever it is in the schema (a struct field, a map key, a list item, an unknown field), and
// Decode reports it at that field without lines (they would be those of the text it was given,
// which in a KRM function is not the user's file).
func TestDuplicateKeys(t *testing.T) {
	// dup is a DuplicateKey with its path as text, "path key line first".
	type dup = string
	for name, tc := range map[string]struct {
		doc  string // after head; line 3 is its first line
		want []dup
	}{
		"none":            {"spec: {containers: [{image: a}]}", nil},
		"in spec":         {"spec:\n  size: 1\n  size: 2", []dup{"spec.size size 5 4"}},
		"at the root":     {"spec: {}\nmetadata: {name: a}\nspec: {}", []dup{"spec spec 5 3"}},
		"in a map":        {"spec:\n  jobLabels:\n    a.b/c: x\n    a.b/c: y", []dup{"spec.jobLabels[a.b/c] a.b/c 6 5"}},
		"in a map value":  {"spec:\n  containers:\n  - volumes: {d: {path: /a, path: /b}}", []dup{"spec.containers[0].volumes[d].path path 5 5"}},
		"unknown field":   {"spec:\n  sizee: {a: 1, a: 2}", []dup{"spec.sizee.a a 4 4"}},
		"quoted and not":  {"spec:\n  size: 1\n  \"size\": 2", []dup{"spec.size size 5 4"}},
		"twice, in order": {"spec:\n  containers:\n  - {image: a, image: b}\n  - {name: x, name: y}", []dup{"spec.containers[0].image image 5 5", "spec.containers[1].name name 6 6"}},
		"merge key":       {"x: &a {b: 1}\nspec:\n  <<: *a\n  b: 2", nil},
	} {
		t.Run(name, func(t *testing.T) {
			text := head + tc.doc + "\n"
			var node yamlv3.Node
			if err := yamlv3.Unmarshal([]byte(text), &node); err != nil {
				t.Fatal(err)
			}
			var got []dup
			for _, d := range v1alpha2.DuplicateKeys(&node) {
				got = append(got, fmt.Sprintf("%s %s %d %d", d.Path, d.Key, d.Line, d.FirstLine))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("duplicates %q, want %q", got, tc.want)
			}
			if len(tc.want) == 0 {
				return
			}
			mc, errs := v1alpha2.Decode([]byte(text))
			if mc != nil || len(errs) != len(tc.want) {
				t.Fatalf("Decode: %v", errs)
			}
			for i, e := range errs {
				path, _, _ := strings.Cut(tc.want[i], " ")
				if e.Field != path || e.Type != field.ErrorTypeDuplicate || strings.Contains(e.Error(), "line") {
					t.Errorf("Decode: %v; want a duplicate at %s without a line", e, path)
				}
			}
		})
	}
}

// TestDecodeMergeKeyOverride: a key that overrides one of a YAML merge (<<: *anchor) is no
// duplicate, though go-yaml v2's strict mode takes it for one.
func TestDecodeMergeKeyOverride(t *testing.T) {
	mc, errs := v1alpha2.Decode([]byte(head + "metadata:\n  name: a\n  labels: &l {a: b, c: d}\nspec:\n  jobLabels:\n    <<: *l\n    a: z\n  containers: [{image: a}]\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := mc.Spec.JobLabels; len(got) != 2 || got["a"] != "z" || got["c"] != "d" {
		t.Errorf("jobLabels %v, want a=z (the override) and c=d (merged)", got)
	}
}

// TestSigsJSONErrors pins what Decode reads from sigs.k8s.io/json's errors, so that an upgrade that
// changes them fails here rather than turning field paths into "<document>" errors: its type
// errors are encoding/json's *UnmarshalTypeError with the JSON field path, and its strict errors
// tell a duplicate from an unknown field only by the start of their text.
func TestSigsJSONErrors(t *testing.T) {
	var v struct {
		A struct {
			B int `json:"b"`
		} `json:"a"`
	}
	_, err := sigsjson.UnmarshalStrict([]byte(`{"a": {"b": "x"}}`), &v)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "a.b" || te.Value != "string" || te.Type.String() != "int" {
		t.Errorf("type error %#v (%v), want an *encoding/json.UnmarshalTypeError at a.b", err, err)
	}
	strict, err := sigsjson.UnmarshalStrict([]byte(`{"a": {"b": 1, "b": 2, "c": 3}}`), &v,
		sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil || len(strict) != 2 {
		t.Fatalf("strict errors %v, error %v; want two strict errors", strict, err)
	}
	for i, want := range []string{`duplicate field "a.b"`, `unknown field "a.c"`} {
		var fe sigsjson.FieldError
		if !errors.As(strict[i], &fe) || strict[i].Error() != want {
			t.Errorf("strict error %d = %q, want a FieldError %q", i, strict[i], want)
		}
	}
}
