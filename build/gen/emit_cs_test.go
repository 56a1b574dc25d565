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

// TestCSharpGate: every P/Invoke into the library is private and reached only through a wrapper
// that holds Gate, so that no two managed threads run Go code at once (see Gate in Runtime.cs);
// the game's callback runs with the gate let go.
func TestCSharpGate(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nclass Box record ctor {\n  prop Size: u32\n  prop Name: string\n  callback Done(ok: bool)\n  method Wait(cb: Done)\n}\n")
	csCheckNames(api)
	cs := emitCSharp(api)
	lines := strings.Split(cs, "\n")
	imports := 0
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.Contains(l, " extern ") {
			continue
		}
		imports++
		require.True(t, strings.HasPrefix(l, "static extern "), "a P/Invoke others can call: %s", l)
		raw := strings.Fields(strings.SplitN(l, "(", 2)[0])
		name := strings.TrimSuffix(raw[len(raw)-1], "_Raw")
		require.NotEqual(t, raw[len(raw)-1], name, "a P/Invoke not named _Raw: %s", l)
		require.Less(t, i+7, len(lines))
		wrapper := strings.Join(lines[i+1:i+8], "\n")
		assert.Contains(t, wrapper, " "+name+"(", "the wrapper of %s", name)
		assert.Contains(t, wrapper, "global::Sdkpp.Gate.Enter();\n", "the wrapper of %s", name)
		assert.Contains(t, wrapper, "try { ", "the wrapper of %s", name)
		assert.Contains(t, wrapper, name+"_Raw(", "the wrapper of %s", name)
		assert.Contains(t, wrapper, "finally { global::Sdkpp.Gate.Exit(); }", "the wrapper of %s", name)
	}
	// Init, Drop, Clone, Size and SetSize, Name and SetName, Wait, and the runtime functions.
	assert.Equal(t, 8+len(csRuntimeFuncs), imports, "P/Invoke declarations")
	assert.Contains(t, cs, "int __held = global::Sdkpp.Gate.Release();", "the trampoline lets the gate go")
	assert.Contains(t, cs, "global::Sdkpp.Gate.Reacquire(__held);", "the trampoline takes the gate back")
}

// TestCSharpFlags: only an enum of three or more distinct powers of two (and zero) is [Flags].
func TestCSharpFlags(t *testing.T) {
	vals := func(vs ...int64) *desc.Enum {
		e := &desc.Enum{Name: "E"}
		for _, v := range vs {
			e.Values = append(e.Values, desc.EnumValue{Name: "V", Value: v})
		}
		return e
	}
	cases := []struct {
		name string
		e    *desc.Enum
		want bool
	}{
		{"platforms", vals(1, 2, 4, 8, 16), true},
		{"with none", vals(0, 1, 2, 4), true},
		{"sequential", vals(0, 1, 2, 3), false},
		{"two bits only", vals(1, 2), false},
		{"repeated bit", vals(1, 2, 2, 4), false},
		{"negative", vals(-8, 1, 2, 4), false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, csIsFlags(c.e), c.name)
	}
}

// TestCSharpAsyncAndEvents: a method whose last parameter is a one-shot callback gets a Task form
// (with a CancellationToken when Abort<Name> exists) and a result class for the outputs; a
// SetXCallback gets an event.
func TestCSharpAsyncAndEvents(t *testing.T) {
	api := parseAPI(t, `version 1.0.0
class ClientResult record {
  prop Successful: bool
}
class Client client ctor nocopy {
  callback FetchCallback(result: ClientResult, id: u64)
  callback DoneCallback(result: ClientResult)
  callback OnTick(n: i32)
  method Fetch(name: string, callback: FetchCallback)
  method AbortFetch()
  method Done(callback: DoneCallback)
  method SetTickCallback(callback: OnTick)
}
`)
	cs := emitCSharp(api)
	assert.Contains(t, cs, "public global::System.Threading.Tasks.Task<global::Sdkpp.Client.FetchResult> FetchAsync(string name, global::System.Threading.CancellationToken cancellationToken")
	assert.Contains(t, cs, "__self => __self.AbortFetch()")
	assert.Contains(t, cs, "public global::System.Threading.Tasks.Task<global::Sdkpp.SdkResult> DoneAsync()")
	assert.Contains(t, cs, "public sealed class FetchResult : global::Sdkpp.SdkResult")
	assert.Contains(t, cs, "public ulong Id { get; private set; }")
	assert.NotContains(t, cs, "DoneResult", "no outputs: SdkResult itself")
	assert.Contains(t, cs, "public event global::Sdkpp.Client.OnTick Tick")
	assert.NotContains(t, cs, "TickCallbackAsync")
}

// TestCSharpCopyForms: a getter that hands the caller new objects (a property's, a Get... method,
// a const method without parameters) gets a Copy form that does the call, and keeps its own name
// as a call of the Copy form whose doc points to it; other methods get none.
func TestCSharpCopyForms(t *testing.T) {
	api := parseAPI(t, `version 1.0.0
class Thing record ctor {
  prop Inner: Thing
  prop N: i32
}
class Note handle {
  const method Author() -> opt Thing
  const method Find(id: u64) -> opt Thing
}
class Client client ctor nocopy {
  const method GetThings(id: u64) -> list Thing
  method StartThing(id: u64) -> Thing
}
`)
	csCheckNames(api)
	cs := emitCSharp(api)
	for _, want := range []string{
		"public global::Sdkpp.Thing CopyInner()",
		"return this.CopyInner();",
		"public global::Sdkpp.Thing CopyAuthor()",
		"return this.CopyAuthor();",
		`<see cref="CopyAuthor"/> is the same call`,
		"The API reference names this call Author, which is kept beside it.",
		"public global::Sdkpp.Thing[] CopyThings(ulong id)",
		"return this.CopyThings(id);",
	} {
		assert.Contains(t, cs, want)
	}
	for _, not := range []string{"CopyN(", "CopyFind(", "CopyStartThing(", "CopyGetThings("} {
		assert.NotContains(t, cs, not)
	}
	assert.Panics(t, func() {
		csCheckNames(parseAPI(t, "version 1.0.0\nclass Thing record ctor {\n  prop Inner: Thing\n  prop CopyInner: i32\n}\n"))
	}, "a described member named as a Copy form is refused")
}

// TestCSharpRenamedEnum: HttpStatusCode is HttpStatus in C#, with a remark naming the System type
// it would collide with; the C names stay.
func TestCSharpRenamedEnum(t *testing.T) {
	cs := emitCSharp(parseAPI(t, "version 1.0.0\nenum HttpStatusCode open {\n  None = 0\n  Ok = 200\n}\n"))
	assert.Contains(t, cs, "public enum HttpStatus : int")
	assert.Contains(t, cs, "This is HttpStatusCode of the API reference and the C ABI, named HttpStatus in C# so that it does not collide with System.Net.HttpStatusCode.")
	assert.Contains(t, cs, "Sdkpp_HttpStatusCode_Ok = 200.")
	assert.NotContains(t, cs, "enum HttpStatusCode")
}
