package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/build/gen/desc"
)

// TestCapiDirectCallbacksAreRelayed: Go calls a direct (audio-thread) callback through the calling
// thread's companion (sdkpp_hook_relay), never on the thread that runs Go; a queued callback is
// called in place, inside RunCallbacks.
func TestCapiDirectCallbacksAreRelayed(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nclass Box record ctor {\n"+
		"  callback Hook(data: samples, n: u64, mute: out bool) direct\n"+
		"  callback Done(ok: bool)\n"+
		"  method Listen(hook: Hook, done: Done)\n}\n")
	out := emitCapi(api)
	hook := trampolineOf(t, out, "Box_Hook")
	assert.Contains(t, hook, "sdkpp_hook_relay(sdkpp_relayed_Box_Hook, &a);", "the direct callback is relayed")
	assert.NotContains(t, hook, "\tcb(", "the direct callback is called in place")
	assert.Contains(t, out, "a->cb(a->data, a->n, a->mute, (void*)a->userData);", "the relayed call passes every argument")
	done := trampolineOf(t, out, "Box_Done")
	assert.Contains(t, done, "\tcb(ok, (void*)userData);", "the queued callback is called in place")
	assert.NotContains(t, done, "sdkpp_hook_relay", "the queued callback is relayed")

	api = parseAPI(t, "version 1.0.0\nclass Item record ctor {\n}\nclass Box record ctor {\n"+
		"  callback Hook(item: Item) direct\n  method Listen(hook: Hook)\n}\n")
	assert.PanicsWithValue(t, "emit_go: direct callback Box_Hook takes an object or an optional value, which a relayed call does not carry",
		func() { emitCapi(api) }, "a direct callback that takes an object")
}

// trampolineOf returns the body of sdkpp_call_<name> in the generated capi.
func trampolineOf(t *testing.T, out, name string) string {
	t.Helper()
	start := strings.Index(out, "static inline void sdkpp_call_"+name+"(")
	if start < 0 {
		t.Fatalf("no trampoline sdkpp_call_%s", name)
	}
	end := strings.Index(out[start:], "\n}\n")
	return out[start : start+end]
}

// TestCoreRecordAccessors: a record's accessors read and write the field named after the
// property, copy optional and object values, register secret values for redaction, and leave
// custom properties and read-only setters to core.
func TestCoreRecordAccessors(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nclass Inner record ctor {\n}\nclass Box record ctor {\n"+
		"  prop Type: i32\n  prop Label: opt string\n  prop Inner: opt Inner\n  prop Key: string secret\n"+
		"  prop Start: u64 custom\n  prop Id: u64 readonly\n}\n")
	out := emitCoreRecords(api)
	for _, want := range []string{
		"func (b *Box) Type() int32 {\n\treturn b.typ\n}",
		"func (b *Box) Label() (string, bool) {\n\treturn opt.Of(b.label)\n}",
		"func (b *Box) SetLabel(v *string) {\n\tb.label = opt.Clone(v)\n}",
		"func (b *Box) Inner() *Inner {\n\tif b.inner == nil {\n\t\treturn nil\n\t}\n\treturn b.inner.Clone()\n}",
		"func (b *Box) SetKey(v string) {\n\tredact.Secrets.Add(v)\n\tb.key = v\n}",
		"package records\n\nimport (\n\"sdkpp/core/internal/opt\"\n\"sdkpp/core/redact\"\n)",
		"func (b *Box) Id() uint64 {",
	} {
		assert.Contains(t, out, want)
	}
	for _, absent := range []string{"Start()", "SetStart(", "SetId("} {
		assert.NotContains(t, out, absent)
	}
}

// TestCoreAliases: core names each record and enum of core/records as its own, with the
// constructors of the records the game may construct and every enum value.
func TestCoreAliases(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nenum Kind {\n  A = 0\n  B = 1\n}\nclass Box record ctor {\n  prop K: Kind\n}\n"+
		"class Out record {\n  prop N: i32 readonly\n}\n")
	recs := emitCoreRecordAliases(api)
	for _, want := range []string{"type Box = records.Box", "func NewBox() *Box { return records.NewBox() }", "type Out = records.Out"} {
		assert.Contains(t, recs, want)
	}
	assert.NotContains(t, recs, "NewOut")
	enums := emitCoreEnums(api)
	for _, want := range []string{"type Kind = records.Kind", "\tKindA = records.KindA\n", "\tKindB = records.KindB\n"} {
		assert.Contains(t, enums, want)
	}
	assert.Contains(t, emitRecordsEnums(api), "package records\n\n")
	assert.Contains(t, emitRecordsEnums(api), "type Kind int32")
}

// TestCoreRecordStructs: a record's struct has one field per property, its Clone copies what
// the fields point to, and a record marked custom or defaults keeps what core writes by hand.
func TestCoreRecordStructs(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nclass Inner record ctor {\n}\nclass Box record ctor {\n"+
		"  prop Label: opt string\n  prop Inner: opt Inner\n  prop Start: u64 custom\n}\n"+
		"class Hand record ctor custom {\n  prop Name: string\n}\nclass Pre record ctor defaults {\n  prop Name: string\n}\n")
	out := emitCoreRecords(api)
	for _, want := range []string{
		"type Box struct {\n\tlabel *string\n\tinner *Inner\n\tstart uint64\n}",
		"func NewBox() *Box { return &Box{} }",
		"func (b *Box) Clone() *Box {\n\tout := *b\n\tout.label = opt.Clone(b.label)\n\tif b.inner != nil {\n\t\tout.inner = b.inner.Clone()\n\t}\n\treturn &out\n}",
		"type Pre struct {",
		"func (h *Hand) Name() string {",
	} {
		assert.Contains(t, out, want)
	}
	for _, absent := range []string{"type Hand struct", "func NewHand(", "func (h *Hand) Clone(", "func NewPre("} {
		assert.NotContains(t, out, absent)
	}
}

// TestCoreFacade: a handle gets Clone, and a property or method the side table gives a Go
// expression gets a body that returns (or runs) it, with the imports its expressions name.
func TestCoreFacade(t *testing.T) {
	api := parseAPI(t, "version 1.0.0\nclass Thing handle {\n  prop Id: u64 readonly\n"+
		"  prop Name: string readonly\n}\nclass Client client ctor nocopy {\n"+
		"  const method Count() -> u32\n  method Ping(to: u64)\n  method Other()\n}\n")
	require.NoError(t, desc.ApplyGoBodies(api, strings.NewReader("# a comment\nThing.Id = h.id\n\n"+
		"Client.Count = uint32(len(c.things))\nClient.Ping = c.send(wire.Ping{To: to})\n")))
	out := emitCoreFacade(api)
	for _, want := range []string{
		"import (\n\"sdkpp/wire\"\n)",
		"func (h *Thing) Clone() *Thing { v := *h; return &v }",
		"func (h *Thing) Id() uint64 { return h.id }",
		"func (c *Client) Count() uint32 {\n\treturn uint32(len(c.things))\n}",
		"func (c *Client) Ping(to uint64) {\n\tc.send(wire.Ping{To: to})\n}",
	} {
		assert.Contains(t, out, want)
	}
	for _, absent := range []string{"Name()", "Other()", "sdkpp/core/voice"} {
		assert.NotContains(t, out, absent)
	}
}

// TestGoBodiesRefused: the side table names existing members only, once each, and gives a Go
// body only where core's facade can have one.
func TestGoBodiesRefused(t *testing.T) {
	const src = "version 1.0.0\nclass R record {\n  prop Id: u64\n}\nclass H handle {\n  prop Id: u64 readonly\n" +
		"  static Make() -> u32\n}\nclass Client client ctor nocopy {\n  method Ping()\n}\n"
	for _, tc := range []struct{ table, err string }{
		{"R.Id = r.id", "only a handle's read-only property"},
		{"H.Make = 1", "only a method of the Client or of a handle"},
		{"H.Nope = 1", "H has no property or method Nope"},
		{"Nobody.Id = 1", "no class Nobody"},
		{"Client.Ping = c.ping()\nClient.Ping = c.ping()", "line 2: Client.Ping: given twice"},
		{"Client.Ping c.ping()", "want: Class.Member = EXPR"},
	} {
		t.Run(tc.table, func(t *testing.T) {
			api := parseAPI(t, src)
			assert.ErrorContains(t, desc.ApplyGoBodies(api, strings.NewReader(tc.table)), tc.err)
		})
	}
	_, err := desc.Parse(strings.NewReader("version 1.0.0\nclass H handle {\n  prop Id: u64 readonly = h.id\n}\n"))
	assert.ErrorContains(t, err, "side table", "a Go body in the description is refused")
}
