package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/build/gen/desc"
)

// abiBase is a small description with every kind of declaration the fingerprint covers: enums
// (top-level and nested), classes, a list span, callbacks, properties, methods and ctors.
const abiBase = `version 1.0.0
# How loud a message is.
enum Severity {
  Info = 1
  Error = 2
}
enum Thing.Kind {
  A = 0
  B = 1
}
# A thing.
class Thing record ctor {
  callback Done(result: Thing, ok: bool)
  # Its name.
  prop Name: opt string
  prop Ids: list u64 readonly
  prop Kind: Kind
  # Counts things.
  const method Count(c: Severity) -> i32
  method Go(cb: Done)
  static Make(name: string) -> opt Thing
  ctor InitNamed(name: string)
}
# Another thing.
class Other record ctor {
  prop Things: list Thing
  method Weigh(scale: float, n: u32) -> u64
}
`

// fingerprintOf parses src and returns its ABI fingerprint.
func fingerprintOf(t *testing.T, src string) uint32 {
	t.Helper()
	api, err := desc.Parse(strings.NewReader(src))
	require.NoError(t, err)
	return abiVersion(api)
}

// edit applies old->new replacements to src, each of which must match exactly once.
func edit(t *testing.T, src string, pairs ...string) string {
	t.Helper()
	require.Zero(t, len(pairs)%2, "edit takes old, new pairs")
	for i := 0; i < len(pairs); i += 2 {
		require.Equal(t, 1, strings.Count(src, pairs[i]), "%q must occur once", pairs[i])
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return src
}

// swap exchanges two distinct pieces of src, each of which must occur once.
func swap(t *testing.T, src, a, b string) string {
	t.Helper()
	const mark = "\x00swap\x00"
	return edit(t, src, a, mark, b, a, mark, b)
}

func TestFingerprint(t *testing.T) {
	thingClass := abiBase[strings.Index(abiBase, "# A thing.\n"):strings.Index(abiBase, "# Another thing.\n")]
	otherClass := abiBase[strings.Index(abiBase, "# Another thing.\n"):]
	cases := []struct {
		name    string
		edit    func(t *testing.T, src string) string
		changed bool
	}{
		{"doc comment edited", func(t *testing.T, s string) string {
			return edit(t, s, "# Counts things.", "# Counts the things, in a comment fixed later.")
		}, false},
		{"doc comment added", func(t *testing.T, s string) string {
			return edit(t, s, "  prop Kind: Kind", "  # What it is.\n  prop Kind: Kind")
		}, false},
		{"whitespace", func(t *testing.T, s string) string {
			return edit(t, s, "method Weigh(scale: float, n: u32) -> u64", "method   Weigh( scale:float,  n : u32 )  ->  u64")
		}, false},
		{"two methods reordered", func(t *testing.T, s string) string {
			return swap(t, s, "  method Go(cb: Done)\n", "  static Make(name: string) -> opt Thing\n")
		}, false},
		{"two properties reordered", func(t *testing.T, s string) string {
			return swap(t, s, "  prop Ids: list u64 readonly\n", "  prop Kind: Kind\n")
		}, false},
		{"two classes reordered", func(t *testing.T, s string) string {
			return swap(t, s, thingClass, otherClass)
		}, false},
		{"two enums reordered", func(t *testing.T, s string) string {
			return swap(t, s, "# How loud a message is.\nenum Severity {\n  Info = 1\n  Error = 2\n}\n", "enum Thing.Kind {\n  A = 0\n  B = 1\n}\n")
		}, false},
		{"enumerators reordered", func(t *testing.T, s string) string {
			return swap(t, s, "  Info = 1\n", "  Error = 2\n")
		}, false},
		{"parameter renamed", func(t *testing.T, s string) string {
			return edit(t, s, "Weigh(scale: float", "Weigh(factor: float")
		}, false},
		{"enum value changed", func(t *testing.T, s string) string {
			return edit(t, s, "  Error = 2", "  Error = 3")
		}, true},
		{"enumerator renamed", func(t *testing.T, s string) string {
			return edit(t, s, "  Error = 2", "  Fatal = 2")
		}, true},
		{"enumerator added", func(t *testing.T, s string) string {
			return edit(t, s, "  Error = 2\n", "  Error = 2\n  Fatal = 3\n")
		}, true},
		{"parameter type changed", func(t *testing.T, s string) string {
			return edit(t, s, "n: u32) -> u64", "n: u64) -> u64")
		}, true},
		{"return type changed", func(t *testing.T, s string) string {
			return edit(t, s, "n: u32) -> u64", "n: u32) -> u32")
		}, true},
		{"parameters of different types swapped", func(t *testing.T, s string) string {
			return edit(t, s, "Weigh(scale: float, n: u32)", "Weigh(n: u32, scale: float)")
		}, true},
		{"parameter added", func(t *testing.T, s string) string {
			return edit(t, s, "Make(name: string)", "Make(name: string, id: u64)")
		}, true},
		{"function renamed", func(t *testing.T, s string) string {
			return edit(t, s, "method Weigh(", "method Measure(")
		}, true},
		{"method made static", func(t *testing.T, s string) string {
			return edit(t, s, "  method Weigh(", "  static Weigh(")
		}, true},
		{"property made optional", func(t *testing.T, s string) string {
			return edit(t, s, "prop Kind: Kind", "prop Kind: opt Kind")
		}, true},
		{"callback parameter type changed", func(t *testing.T, s string) string {
			return edit(t, s, "ok: bool)", "ok: i32)")
		}, true},
		{"span element changed (a struct's field)", func(t *testing.T, s string) string {
			return edit(t, s, "prop Things: list Thing", "prop Things: list Other")
		}, true},
	}
	base := fingerprintOf(t, abiBase)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.edit(t, abiBase)
			require.NotEqual(t, abiBase, src)
			got := fingerprintOf(t, src)
			if tc.changed {
				assert.NotEqual(t, base, got, "an ABI change must change the fingerprint")
			} else {
				assert.Equal(t, base, got, "a change outside the ABI must not change the fingerprint")
			}
		})
	}
}

// TestFingerprintRuntimeStructs: a field of one of the runtime's own structs (which the
// description does not list) is part of the fingerprint.
func TestFingerprintRuntimeStructs(t *testing.T) {
	api, err := desc.Parse(strings.NewReader(abiBase))
	require.NoError(t, err)
	base := abiVersion(api)

	saved := abiInfoType
	t.Cleanup(func() { abiInfoType = saved })
	abiInfoType.Fields = append(abiInfoType.Fields[:len(abiInfoType.Fields):len(abiInfoType.Fields)], cField{"uint32_t", "sizeofCallback"})
	assert.NotEqual(t, base, abiVersion(api), "a new field")

	abiInfoType = saved
	abiInfoType.Doc = []string{"Reworded."}
	assert.Equal(t, base, abiVersion(api), "a doc edit")
}

// TestFingerprintInHeader: the header's SDKPP_ABI_VERSION is the fingerprint, and the real
// description's fingerprint survives an edit of every doc comment.
func TestFingerprintInHeader(t *testing.T) {
	src, err := os.ReadFile("../../api/sdkpp.api")
	require.NoError(t, err)
	api, err := desc.Parse(strings.NewReader(string(src)))
	require.NoError(t, err)
	fp := abiVersion(api)
	assert.Contains(t, emitC(api), "#define SDKPP_ABI_VERSION "+strconv.FormatUint(uint64(fp), 10)+"u\n")

	var edited strings.Builder
	for _, l := range strings.SplitAfter(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			l = strings.TrimRight(l, "\n") + " (edited)\n"
		}
		edited.WriteString(l)
	}
	require.NotEqual(t, string(src), edited.String())
	assert.Equal(t, fp, fingerprintOf(t, edited.String()))
}
