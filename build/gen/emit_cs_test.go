package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/build/gen/desc"
)

// parseAPI parses a small description for a generator test.
func parseAPI(t *testing.T, src string) *desc.API {
	t.Helper()
	api, err := desc.Parse(strings.NewReader(src))
	require.NoError(t, err)
	return api
}

// TestCSharpEquals: a record's Equals(other: Self) -> bool becomes IEquatable<T>.Equals with the
// Equals(object) and GetHashCode overrides C# expects beside it; any other Equals is refused,
// since it would hide or clash with System.Object.Equals.
func TestCSharpEquals(t *testing.T) {
	const head = "version 1.0.0\nenum Kind {\n  A = 0\n}\n"
	api := parseAPI(t, head+`class Point record ctor {
  const method Equals(other: Point) -> bool
  prop X: i32
  prop Label: string
  prop Weight: float
  prop Kind: Kind
  prop Note: opt string
}
`)
	csCheckNames(api)
	cs := emitCSharp(api)
	for _, want := range []string{
		"public sealed class Point : global::System.IDisposable, global::System.IEquatable<global::Sdkpp.Point>",
		"public bool Equals(global::Sdkpp.Point other)",
		"if (global::System.Object.ReferenceEquals(other, null))",
		"public override bool Equals(object obj)",
		"return this.Equals(obj as global::Sdkpp.Point);",
		"public override int GetHashCode()",
		"h = h * 31 + this.X().GetHashCode();",
		`h = h * 31 + (this.Label() ?? "").GetHashCode();`,
		"h = h * 31 + this.Kind().GetHashCode();",
	} {
		assert.Contains(t, cs, want, "the C# binding lacks it")
	}
	// Floats and optional values stay out of the hash.
	for _, not := range []string{"this.Weight().GetHashCode()", "this.Note()"} {
		assert.NotContains(t, cs, not, "GetHashCode uses it")
	}

	for name, src := range map[string]string{
		"other class": "class Other record ctor {\n  prop X: i32\n}\nclass Point record ctor {\n  const method Equals(other: Other) -> bool\n}\n",
		"not bool":    "class Point record ctor {\n  const method Equals(other: Point) -> i32\n}\n",
		"two params":  "class Point record ctor {\n  const method Equals(a: Point, b: Point) -> bool\n}\n",
		"static":      "class Point record ctor {\n  static Equals(other: Point) -> bool\n}\n",
		"GetHashCode": "class Point record ctor {\n  const method GetHashCode() -> i32\n}\n",
		"prop Equals": "class Point record ctor {\n  prop Equals: bool readonly\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			api := parseAPI(t, head+src)
			assert.Panics(t, func() { csCheckNames(api) }, "csCheckNames accepted it")
		})
	}
}
