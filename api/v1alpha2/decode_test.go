package v1alpha2_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/internal/jsontree"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// checkSameAsSigsJSON decodes the JSON text js into a MiniCluster with jsontree.Unmarshal (what
// Decode uses) and with sigs.k8s.io/json's UnmarshalStrict (what it used before, and what the
// Kubernetes API server's strict decoding is), and fails unless both give the same object, the
// same unknown and duplicate fields, and the same error.
func checkSameAsSigsJSON(t *testing.T, js []byte) {
	t.Helper()
	var got, want v1alpha2.MiniCluster
	gotStrict, gotErr := jsontree.Unmarshal(js, &got)
	wantStrict, wantErr := sigsjson.UnmarshalStrict(js, &want, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)

	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("error: jsontree %v, sigs.k8s.io/json %v\ninput: %s", gotErr, wantErr, js)
	}
	if wantErr != nil {
		checkSameError(t, gotErr, wantErr, js)
	}
	// Both go on past a type error and stop at the error of an UnmarshalJSON method: what they
	// stored up to then is the same too.
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("decoded objects differ\njsontree:          %s\nsigs.k8s.io/json: %s\ninput: %s", g, w, js)
	}
	var gotNames, wantNames []string
	for _, e := range gotStrict {
		kind := "unknown field "
		if e.Duplicate {
			kind = "duplicate field "
		}
		gotNames = append(gotNames, kind+strconv.Quote(sigsPath(e.Path)))
	}
	for _, e := range wantStrict {
		wantNames = append(wantNames, e.Error())
	}
	slices.Sort(gotNames)
	slices.Sort(wantNames)
	if !slices.Equal(slices.Compact(gotNames), slices.Compact(wantNames)) {
		t.Fatalf("strict errors differ\njsontree:          %q\nsigs.k8s.io/json: %q\ninput: %s", gotNames, wantNames, js)
	}
}

// checkSameError: a type error has the same JSON kind, Go type and (indices and map keys left
// out, as sigs.k8s.io/json leaves them out) path; any other error has the same message.
func checkSameError(t *testing.T, gotErr, wantErr error, js []byte) {
	t.Helper()
	var ute *json.UnmarshalTypeError
	if errors.As(wantErr, &ute) && wantErr == error(ute) {
		te, ok := gotErr.(*jsontree.TypeError)
		if !ok {
			t.Fatalf("sigs.k8s.io/json gives the type error %v, jsontree %T %v\ninput: %s", wantErr, gotErr, gotErr, js)
		}
		// encoding/json names the embedded struct a promoted field is in (TypeMeta.kind).
		wantField := strings.TrimPrefix(ute.Field, "TypeMeta.")
		if te.Value != ute.Value || te.Type != ute.Type || structPath(te.Path) != wantField {
			t.Fatalf("type errors differ\njsontree:          %s: %s into %v\nsigs.k8s.io/json: %s: %s into %v\ninput: %s",
				te.Path, te.Value, te.Type, ute.Field, ute.Value, ute.Type, js)
		}
		return
	}
	ve, ok := gotErr.(*jsontree.ValueError)
	if !ok || ve.Err.Error() != wantErr.Error() {
		t.Fatalf("errors differ\njsontree:          %T %v\nsigs.k8s.io/json: %T %v\ninput: %s", gotErr, gotErr, wantErr, wantErr, js)
	}
}

// sigsPath writes a path as sigs.k8s.io/json writes strict errors' paths: map keys as members.
func sigsPath(p jsontree.Path) string {
	var b strings.Builder
	for i, s := range p {
		if s.Kind == jsontree.IndexStep {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Name)
	}
	return b.String()
}

// structPath writes a path as encoding/json writes a type error's field: struct fields only.
func structPath(p jsontree.Path) string {
	var names []string
	for _, s := range p {
		if s.Kind == jsontree.FieldStep {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ".")
}

// checkYAML converts a YAML document as Decode does and compares the decoders on it; false when
// the YAML does not convert (Decode stops there).
func checkYAML(t *testing.T, doc []byte) bool {
	t.Helper()
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return false
	}
	checkSameAsSigsJSON(t, js)
	return true
}

// yamlDocs splits a YAML stream into its documents; the items of a ResourceList (a KRM
// function's input) are documents too.
func yamlDocs(t testing.TB, data []byte) [][]byte {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
		var rl struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if yaml.Unmarshal(doc, &rl) == nil && rl.Kind == "ResourceList" {
			for _, item := range rl.Items {
				docs = append(docs, item) // JSON is YAML
			}
		}
	}
}

// testInputs are the documents of the test inputs of fn and of the command (ResourceLists and
// YAML streams).
func testInputs(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../fn/testdata/*/input.yaml", "../../cmd/minicluster-fn/testdata/render/*/input.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d test inputs found", len(files))
	}
	var docs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, yamlDocs(t, data)...)
	}
	return docs
}

// fuzzSeeds are the inputs kept in a fuzz target's testdata directory.
func fuzzSeeds(t testing.TB, dir string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var seeds [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, arg, ok := strings.Cut(string(data), "\n[]byte(")
		if !ok || !strings.HasPrefix(string(data), "go test fuzz v1\n") {
			t.Fatalf("%s: not a fuzz input", f)
		}
		s, err := strconv.Unquote(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(arg), ")")))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// TestDecoderMatchesSigsJSONOnInputs compares the decoders on every MiniCluster of the
// repository: the examples, the test inputs of this package, of fn and of the command, and the
// operator's corpus.
func TestDecoderMatchesSigsJSONOnInputs(t *testing.T) {
	t.Run("examples", func(t *testing.T) {
		examples, err := outputcheck.Examples()
		if err != nil {
			t.Fatal(err)
		}
		if len(examples) < 5 {
			t.Fatalf("only %d examples", len(examples))
		}
		for _, in := range examples {
			if !checkYAML(t, in.Doc) {
				t.Errorf("%s: does not convert to JSON", in.Name)
			}
		}
	})
	t.Run("corpus", func(t *testing.T) {
		corpus, err := outputcheck.Corpus()
		if errors.Is(err, outputcheck.ErrNoCorpus) {
			t.Skip("the flux-operator examples corpus (../shared/corpus/flux-operator-examples) is absent: not compared on it")
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range corpus {
			if !checkYAML(t, in.Doc) {
				t.Errorf("%s: does not convert to JSON", in.Name)
			}
		}
	})
	t.Run("testdata", func(t *testing.T) {
		compared := 0
		for _, doc := range testInputs(t) {
			if checkYAML(t, doc) {
				compared++
			}
		}
		for _, dir := range []string{"testdata/fuzz/FuzzDecode", "testdata/fuzz/FuzzDecodeMatchesSigsJSON"} {
			for _, doc := range fuzzSeeds(t, dir) {
				if checkYAML(t, doc) {
					compared++
				}
				if json.Valid(doc) {
					checkSameAsSigsJSON(t, doc)
				}
			}
		}
		t.Logf("%d documents compared", compared)
	})
}

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
}

// jsonInputs are JSON text yaml.YAMLToJSONStrict does not write (members out of order, given
// twice, whitespace, other escapes): the decoders agree on it too.
var jsonInputs = map[string]string{
	"duplicate field":                  `{"spec":{"size":2,"size":3}}`,
	"duplicate map key":                `{"spec":{"jobLabels":{"a":"1","a":"2","b":"3"}}}`,
	"duplicate object, merged":         `{"spec":{"size":1,"flux":{"arch":"x"}},"spec":{"maxSize":3,"flux":{"wrap":"w"}}}`,
	"duplicate list, merged":           `{"spec":{"containers":[{"image":"a","name":"x"},{"image":"c"}],"containers":[{"image":"b"}]}}`,
	"duplicate list, grown":            `{"spec":{"containers":[{"image":"a","name":"x"},{"image":"c"}],"containers":[{"image":"b"}],"containers":[{},{},{}]}}`,
	"duplicate map, merged":            `{"spec":{"jobLabels":{"a":"1"},"jobLabels":{"b":"2"}}}`,
	"duplicate map then null":          `{"spec":{"jobLabels":{"a":"1"},"jobLabels":null}}`,
	"duplicate unknown":                `{"spec":{"x":1,"x":2}}`,
	"duplicate quantity":               `{"spec":{"pod":{"resources":{"cpu":"1","cpu":"2"}}}}`,
	"duplicate pointer":                `{"spec":{"flux":{"bursting":{"leadBroker":{"name":"a"},"leadBroker":{"port":1}}}}}`,
	"type error not first in order":    `{"spec":{"size":"x","backoffLimit":"y"}}`,
	"whitespace":                       " {\n\t\"spec\" : { \"size\" : 2 , \"containers\" : [ { \"image\" : \"a\" } , { } ] } , \"metadata\" : { \"creationTimestamp\" : \"2024-01-02T03:04:05Z\" , \"managedFields\" : [ { \"fieldsV1\" : { \"f:a\" : { } } } ] } } ",
	"escapes YAML does not write":      `{"spec":{"containers":[{"image":"\u0061\/b\ud83d\ude00\ud800x","name":"\u00e9"}]},"metadata":{"managedFields":[{"fieldsV1":{"f:\u0061":"\/"}}]}}`,
	"raw UTF-8 in a raw field":         "{\"metadata\":{\"managedFields\":[{\"fieldsV1\":{\"a\":\"\xff\xfe\"}}]}}",
	"TypeMeta fields of wrong types":   `{"apiVersion":["x"],"kind":5}`,
	"top-level null":                   `null`,
	"top-level list":                   `[1]`,
	"top-level string":                 `"MiniCluster"`,
	"numbers YAML does not write":      `{"spec":{"size":1E1,"maxSize":2e+0,"deadlineSeconds":-0,"containers":[{"ports":[1.0]}]}}`,
	"int64 limit":                      `{"spec":{"deadlineSeconds":9223372036854775807},"status":{"conditions":[{"observedGeneration":-9223372036854775808}]}}`,
	"unknown field holding bad values": `{"spec":{"x":{"y":[1,{"z":"\u00e9"}],"w":null},"size":2}}`,
	"duplicate list then null":         `{"spec":{"containers":[{"image":"a"}],"containers":null}}`,
	"duplicate struct then null":       `{"spec":{"flux":{"arch":"a"},"flux":null,"pod":{"securityContext":{"runAsUser":1}},"pod":{"securityContext":null}}}`,
}

// TestDecoderMatchesSigsJSON compares the decoders on bad and unusual documents.
func TestDecoderMatchesSigsJSON(t *testing.T) {
	for name, doc := range badInputs {
		t.Run(name, func(t *testing.T) {
			if !checkYAML(t, []byte(head+doc+"\n")) {
				t.Fatalf("does not convert to JSON: %s", doc)
			}
		})
	}
	for name, js := range jsonInputs {
		t.Run(name, func(t *testing.T) {
			if !json.Valid([]byte(js)) {
				t.Fatalf("not valid JSON: %s", js)
			}
			checkSameAsSigsJSON(t, []byte(js))
		})
	}
}

// TestDecodeErrors: Decode's errors name the exact field, with list indices and map keys.
func TestDecodeErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		doc  string
		want []string
	}{
		"unknown in a list element": {"spec: {containers: [{image: a}, {image: b, comand: x}]}",
			[]string{"spec.containers[1].comand: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"}},
		"unknown in a map value": {"spec: {containers: [{image: a, volumes: {data: {pth: /d}}}]}",
			[]string{"spec.containers[0].volumes[data].pth: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"}},
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
			[]string{"spec.Size: Forbidden: unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"}},
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
	b.Run("jsontree.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var mc v1alpha2.MiniCluster
			if _, err := jsontree.Unmarshal(js, &mc); err != nil {
				b.Fatal(err)
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

// legacyDecode is Decode as it was before jsontree.Unmarshal (sigs.k8s.io/json, then the path of
// a type error found again in the document): the reference for checkDecodeSameAsLegacy.
func legacyDecode(data []byte) (*v1alpha2.MiniCluster, field.ErrorList) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, field.ErrorList{field.Required(field.NewPath(""), "empty input: expected a MiniCluster document")}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "YAML does not parse: "+err.Error())}
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "expected a YAML mapping with apiVersion and kind")}
	}
	if head.Kind != v1alpha2.Kind || head.APIVersion != v1alpha2.APIVersion {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), head.APIVersion+", Kind="+head.Kind,
			"not a MiniCluster: expected apiVersion "+v1alpha2.APIVersion+" and kind "+v1alpha2.Kind)}
	}
	mc := &v1alpha2.MiniCluster{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, mc, sigsjson.DisallowUnknownFields)
	var errs field.ErrorList
	if err != nil {
		errs = append(errs, legacyTypeError(err, js))
	}
	unknownField := regexp.MustCompile(`^unknown field "(.*)"$`)
	for _, e := range strictErrs {
		if m := unknownField.FindStringSubmatch(e.Error()); m != nil {
			p := field.NewPath(m[1])
			errs = append(errs, field.Forbidden(p, v1alpha2.UnknownFieldDetail(p)))
		} else {
			errs = append(errs, field.Invalid(field.NewPath(""), "<document>", e.Error()))
		}
	}
	if err != nil {
		return nil, errs
	}
	var probe struct {
		Spec struct {
			Size *json.RawMessage `json:"size"`
		} `json:"spec"`
	}
	if mc.Spec.Size == 0 && json.Unmarshal(js, &probe) == nil && probe.Spec.Size != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), 0, "must be at least 1"))
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return mc, errs
}

func legacyTypeError(err error, js []byte) *field.Error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return field.Invalid(legacyIndexedPath(js, ute.Field, ute.Value), "<"+ute.Value+">", "wrong type: expected "+legacyTypeName(ute.Type.String()))
	}
	if m := regexp.MustCompile(`^json: cannot unmarshal (\S+) into Go struct field \S+ of type (\S+)`).FindStringSubmatch(err.Error()); m != nil {
		return field.Invalid(field.NewPath(""), "<"+m[1]+">", "wrong type: expected "+legacyTypeName(m[2]))
	}
	return field.Invalid(field.NewPath(""), "<document>", err.Error())
}

func legacyTypeName(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "map") || strings.HasPrefix(t, "v1alpha2.") || strings.HasPrefix(t, "v1."):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return t
}

func legacyIndexedPath(js []byte, dotted, kind string) *field.Path {
	doc, err := jsontree.Parse(js)
	if err != nil {
		return field.NewPath(dotted)
	}
	kind, _, _ = strings.Cut(kind, " ")
	var find func(v *jsontree.Value, segs []string, p *field.Path) *field.Path
	find = func(v *jsontree.Value, segs []string, p *field.Path) *field.Path {
		if v.Kind == jsontree.Array {
			for i := range v.Items {
				if found := find(&v.Items[i], segs, p.Index(i)); found != nil {
					return found
				}
			}
			if len(segs) > 0 {
				return nil
			}
		}
		if len(segs) == 0 {
			if legacyKind(v) == kind {
				return p
			}
			return nil
		}
		if v.Kind != jsontree.Object {
			return nil
		}
		if next := v.Member(segs[0]); next != nil {
			return find(next, segs[1:], p.Child(segs[0]))
		}
		for i := range v.Members {
			m := &v.Members[i]
			if found := find(&m.Value, segs, p.Key(m.Key)); found != nil {
				return found
			}
		}
		return nil
	}
	segs := strings.Split(dotted, ".")
	root := doc.Member(segs[0])
	if root == nil {
		return field.NewPath(dotted)
	}
	if found := find(root, segs[1:], field.NewPath(segs[0])); found != nil {
		return found
	}
	return field.NewPath(dotted)
}

func legacyKind(v *jsontree.Value) string {
	switch v.Kind {
	case jsontree.Object:
		return "object"
	case jsontree.Array:
		return "array"
	case jsontree.String:
		return "string"
	}
	switch v.Text {
	case "true", "false":
		return "bool"
	case "null":
		return "null"
	}
	return "number"
}

// checkDecodeSameAsLegacy: Decode gives the MiniCluster and the errors legacyDecode gives, but for
// the deliberate differences: paths are exact (map keys as [key]; legacyDecode's were found again
// in the document, or were the decoder's path without indices and keys; an unknown field's name
// was written with Go's escapes); an error of a type's own decoding (a quantity, a time) is at
// its field with the value, not at the document; spec.size in another case (Spec: {Size: 0}) is
// only an unknown field, not also a size of 0.
func checkDecodeSameAsLegacy(t *testing.T, doc []byte) {
	t.Helper()
	if unstableJSON(doc) {
		// Decode and legacyDecode each convert the document, and may have been given different
		// JSON: nothing to compare. (checkSameAsSigsJSON compares the decoders on one JSON text.)
		return
	}
	mc, errs := v1alpha2.Decode(doc)
	wantMC, wantErrs := legacyDecode(doc)
	if !reflect.DeepEqual(mc, wantMC) {
		t.Fatalf("MiniCluster\n%+v\nbefore\n%+v\ninput: %q", mc, wantMC, doc)
	}
	if i := slices.IndexFunc(wantErrs, func(e *field.Error) bool { return e.Field == "spec.size" && e.Detail == "must be at least 1" }); i >= 0 && !exactSize(doc) {
		wantErrs = slices.Delete(wantErrs, i, i+1)
	}
	// legacyDecode wrote map keys as members, so two unknown fields can have had one path
	// (volumes[a.b].pth and volumes[a].b.pth were both volumes.a.b.pth) and been reported once.
	errs = slices.CompactFunc(slices.SortedStableFunc(slices.Values(errs), func(a, b *field.Error) int {
		return strings.Compare(string(a.Type)+a.Detail+normalPath(a.Field), string(b.Type)+b.Detail+normalPath(b.Field))
	}), func(a, b *field.Error) bool {
		return a.Type == field.ErrorTypeForbidden && a.Type == b.Type && a.Detail == b.Detail && normalPath(a.Field) == normalPath(b.Field)
	})
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors\n%v\nbefore\n%v\ninput: %q", errs, wantErrs, doc)
	}
	// Both lists are sorted by path; more exact paths can sort differently, and so can the Go-quoted
	// ones of legacyDecode's unknown fields (a"b was a\"b): sorted as unquoted.
	errs = slices.Clone(errs)
	wantErrs = slices.Clone(wantErrs)
	sortByPath := func(l field.ErrorList, path func(string) string) {
		slices.SortStableFunc(l, func(a, b *field.Error) int {
			return strings.Compare(string(a.Type)+a.Detail+path(a.Field), string(b.Type)+b.Detail+path(b.Field))
		})
	}
	sortByPath(errs, normalPath)
	sortByPath(wantErrs, func(p string) string { return normalPath(legacyUnquote(p)) })
	root := field.NewPath("").String()
	for i, e := range errs {
		w := wantErrs[i]
		same := e.Type == w.Type && e.Detail == w.Detail
		switch {
		case w.Field == root && w.BadValue == "<document>" && e.Field != root:
			// A type's own decoding failed: now at its field.
		case w.Field == root && e.Field == root:
			same = same && e.BadValue == w.BadValue
		default:
			same = same && reflect.DeepEqual(e.BadValue, w.BadValue) && samePath(e.Field, w.Field)
		}
		if !same {
			t.Fatalf("error\n%v\nbefore\n%v\ninput: %q", e, w, doc)
		}
	}
}

// unstableJSON tells whether sigs.k8s.io/yaml converts doc to different JSON text from one run to
// the next: a mapping with keys that differ in YAML but not as JSON member names (0 and "0") goes
// through a Go map, and which value the JSON keeps follows the map's random iteration order.
func unstableJSON(doc []byte) bool {
	first, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return false
	}
	for range 16 {
		if js, _ := yaml.YAMLToJSONStrict(doc); !bytes.Equal(js, first) {
			return true
		}
	}
	return false
}

// normalPath writes map keys and list indices as members: a.b[c].d[0] is a.b.c.d.0.
func normalPath(p string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(p)
}

// legacyUnquote undoes the Go quoting of a path legacyDecode took out of a quoted string (an
// unknown field's), escapes and all.
func legacyUnquote(p string) string {
	if unquoted, err := strconv.Unquote(`"` + p + `"`); err == nil {
		return unquoted
	}
	return p
}

// samePath: p is the exact path, before what legacyDecode gave: the same, or before it found the
// place, the decoder's path (no list indices, no map keys).
func samePath(p, before string) bool {
	before = legacyUnquote(before)
	if normalPath(p) == normalPath(before) {
		return true
	}
	// before's field names, each followed by any indices and map keys (which may hold dots and
	// brackets themselves: p cannot be split on them).
	var re strings.Builder
	re.WriteString("^")
	for i, name := range strings.Split(before, ".") {
		if i > 0 {
			re.WriteString(`\.`)
		}
		re.WriteString(regexp.QuoteMeta(name) + `(?:\[.*\])*`)
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(p)
}

// exactSize tells whether the document has spec.size, in that case (and not null).
func exactSize(doc []byte) bool {
	var m map[string]any
	if yaml.Unmarshal(doc, &m) != nil {
		return false
	}
	spec, _ := m["spec"].(map[string]any)
	return spec["size"] != nil
}

// TestDecodeSameAsLegacy compares Decode with the implementation it replaced on every input of the
// differential tests.
func TestDecodeSameAsLegacy(t *testing.T) {
	examples, err := outputcheck.Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range examples {
		checkDecodeSameAsLegacy(t, in.Doc)
	}
	corpus, err := outputcheck.Corpus()
	if err != nil && !errors.Is(err, outputcheck.ErrNoCorpus) {
		t.Fatal(err)
	}
	for _, in := range corpus {
		checkDecodeSameAsLegacy(t, in.Doc)
	}
	for _, doc := range testInputs(t) {
		checkDecodeSameAsLegacy(t, doc)
	}
	for name, doc := range badInputs {
		t.Run(name, func(t *testing.T) { checkDecodeSameAsLegacy(t, []byte(head+doc+"\n")) })
	}
	for name, js := range jsonInputs {
		t.Run(name, func(t *testing.T) { checkDecodeSameAsLegacy(t, []byte(js)) })
	}
	for _, doc := range []string{"", "  \n", "- a\n", "a: [", "5", "null", "~", "kind: MiniCluster", head, head + "spec: 5",
		"Kind: MiniCluster\napiVersion: flux-framework.org/v1alpha2\n", "KIND: MiniCluster\nAPIVERSION: flux-framework.org/v1alpha2\nspec: {size: x}",
		"kind: MiniCluster\napiVersion: 5\n", "kind: [MiniCluster]\napiVersion: flux-framework.org/v1alpha2\n",
		head + "Spec: {Size: 0}", head + "spec: {Size: 0}", head + "spec: {size: -2147483648}", head + "spec: {size: 0}",
		"kind: MiniCluster\napiVersion: flux-framework.org/v1alpha2\nkınd: Other\n", head + "apıVersion: x\n",
		"\u212aind: MiniCluster\napiVersion: flux-framework.org/v1alpha2\n", "kind: MiniCluster\n\u212aIND: Other\napiVersion: flux-framework.org/v1alpha2\n"} {
		checkDecodeSameAsLegacy(t, []byte(doc))
	}
}
