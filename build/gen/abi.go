package main

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// This file holds the declarations of the C header as data, and the ABI fingerprint
// (SDKPP_ABI_VERSION) derived from them. Every declaration emitC writes goes through a cHeader,
// which records the declaration's ABI form beside its text; the fingerprint hashes those forms
// only. So comments, doc text, whitespace, parameter names and the order of declarations do not
// change it, while any change to a function's name or C types, a struct's fields, an enum's
// values or a callback's signature does.

// cDecl is one declaration of the C header.
type cDecl interface {
	// writeC writes the declaration, with its doc comment, as the header shows it.
	writeC(b *strings.Builder)
	// abi is the declaration's canonical ABI form: one line that names it and holds every type
	// a binding compiled against it relies on, and nothing else.
	abi() string
}

// cField is a struct field or a function parameter.
type cField struct {
	Type string
	Name string
}

// cTypes lists the types of fs: the ABI form of a parameter list, where names do not matter.
func cTypes(fs []cField) string {
	ts := make([]string, len(fs))
	for i, f := range fs {
		ts[i] = f.Type
	}
	return strings.Join(ts, ", ")
}

// cParamList renders a C parameter list; an empty one is "void".
func cParamList(fs []cField) string {
	if len(fs) == 0 {
		return "void"
	}
	ps := make([]string, len(fs))
	for i, f := range fs {
		ps[i] = f.Type + " " + f.Name
	}
	return strings.Join(ps, ", ")
}

// cStruct is a struct typedef. Its field names belong to its ABI form: bindings declare the
// struct by name, and two swapped fields of one type would otherwise go unnoticed.
type cStruct struct {
	Name   string
	Fields []cField
	Doc    []string
	Block  bool // one field per line
}

func (s cStruct) writeC(b *strings.Builder) {
	writeCDoc(b, "", s.Doc)
	if s.Block {
		fmt.Fprintf(b, "typedef struct %s {\n", s.Name)
		for _, f := range s.Fields {
			fmt.Fprintf(b, "    %s %s;\n", f.Type, f.Name)
		}
		fmt.Fprintf(b, "} %s;\n", s.Name)
		return
	}
	fmt.Fprintf(b, "typedef struct %s { %s } %s;\n", s.Name, s.fieldList(), s.Name)
}

func (s cStruct) fieldList() string {
	fs := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		fs[i] = f.Type + " " + f.Name + ";"
	}
	return strings.Join(fs, " ")
}

func (s cStruct) abi() string { return "struct " + s.Name + " { " + s.fieldList() + " }" }

// cEnumValue is one enumerator, named without its enum's prefix.
type cEnumValue struct {
	Name  string
	Value int64
}

// cEnumType is an enum typedef; a _forceint enumerator makes every enum 32 bits wide.
type cEnumType struct {
	Name   string
	Values []cEnumValue
	Doc    []string
}

func (e cEnumType) writeC(b *strings.Builder) {
	writeCDoc(b, "", e.Doc)
	fmt.Fprintf(b, "typedef enum %s {\n", e.Name)
	for _, v := range e.Values {
		fmt.Fprintf(b, "    %s_%s = %d,\n", e.Name, v.Name, v.Value)
	}
	fmt.Fprintf(b, "    %s_forceint = 0x7FFFFFFF\n} %s;\n", e.Name, e.Name)
}

// abi lists the enumerators by value, then name: their order in the source is no part of the ABI.
func (e cEnumType) abi() string {
	vs := slices.Clone(e.Values)
	slices.SortFunc(vs, func(a, b cEnumValue) int {
		return cmp.Or(cmp.Compare(a.Value, b.Value), strings.Compare(a.Name, b.Name))
	})
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s = %d", v.Name, v.Value)
	}
	return "enum " + e.Name + " int32 { " + strings.Join(parts, ", ") + " }"
}

// cFuncType is a function pointer typedef: a callback, a free or an allocator function.
type cFuncType struct {
	Name   string
	Ret    string
	Params []cField
	Doc    []string
}

func (t cFuncType) writeC(b *strings.Builder) {
	writeCDoc(b, "", t.Doc)
	fmt.Fprintf(b, "typedef %s (SDKPP_CALL *%s)(%s);\n", t.Ret, t.Name, cParamList(t.Params))
}

func (t cFuncType) abi() string {
	return "callback " + t.Name + "(" + cTypes(t.Params) + ") -> " + t.Ret
}

// cFunc is one exported C function.
type cFunc struct {
	Name   string // Sdkpp_X_M
	Ret    string
	Params []cField
	Doc    []string
}

func (f cFunc) writeC(b *strings.Builder) {
	writeCDoc(b, "", f.Doc)
	fmt.Fprintf(b, "SDKPP_API %s SDKPP_CALL %s(%s);\n", f.Ret, f.Name, cParamList(f.Params))
}

func (f cFunc) abi() string { return "func " + f.Name + "(" + cTypes(f.Params) + ") -> " + f.Ret }

// cHeader collects the text of the header's declarations and, beside it, their ABI forms.
type cHeader struct {
	b   strings.Builder
	abi []string
}

// decl writes d and records its ABI form.
func (h *cHeader) decl(d cDecl) {
	d.writeC(&h.b)
	h.abi = append(h.abi, d.abi())
}

// text writes layout (blank lines, section comments, preprocessor lines) that is no part of the ABI.
func (h *cHeader) text(format string, a ...any) { fmt.Fprintf(&h.b, format, a...) }

// canonicalABI is the canonical serialization of the recorded declarations: their ABI forms,
// sorted, one a line.
func (h *cHeader) canonicalABI() string {
	forms := slices.Clone(h.abi)
	slices.Sort(forms)
	return strings.Join(forms, "\n") + "\n"
}

// fingerprint is SDKPP_ABI_VERSION: FNV-1a of the canonical ABI, in 31 bits.
func (h *cHeader) fingerprint() uint32 {
	f := fnv.New32a()
	f.Write([]byte(h.canonicalABI()))
	return f.Sum32() & 0x7FFFFFFF
}

// The runtime's own types and functions, which the description does not list.
var (
	runtimeTypes = []cDecl{
		cStruct{Name: "Sdkpp_String", Fields: []cField{{"uint8_t*", "ptr"}, {"size_t", "size"}},
			Doc: []string{"A UTF-8 string; not NUL-terminated."}},
		cStruct{Name: "Sdkpp_Properties", Fields: []cField{{"size_t", "size"}, {"Sdkpp_String*", "keys"}, {"Sdkpp_String*", "values"}},
			Doc: []string{"A string map: size keys and size values."}},
		cStruct{Name: "Sdkpp_UInt64Span", Fields: []cField{{"uint64_t*", "ptr"}, {"size_t", "size"}},
			Doc: []string{"A list of ids."}},
		cFuncType{Name: "Sdkpp_FreeFn", Ret: "void", Params: []cField{{"void*", "ptr"}},
			Doc: []string{"Releases a callback's userData."}},
		cFuncType{Name: "Sdkpp_MallocFn", Ret: "void*", Params: []cField{{"size_t", "size"}},
			Doc: []string{"An allocator."}},
		cStruct{Name: "Sdkpp_Allocator", Fields: []cField{{"Sdkpp_MallocFn", "fnMalloc"}, {"Sdkpp_FreeFn", "fnFree"}},
			Doc: []string{"An allocator pair."}},
	}

	abiInfoType = cStruct{Name: "Sdkpp_AbiInfo", Block: true, Fields: []cField{
		{"uint32_t", "structSize"},
		{"uint32_t", "version"},
		{"uint32_t", "abiVersion"},
		{"uint32_t", "sizeofPointer"},
		{"uint32_t", "sizeofSizeT"},
		{"uint32_t", "sizeofBool"},
		{"uint32_t", "sizeofEnum"},
		{"uint32_t", "sizeofString"},
		{"uint32_t", "sizeofProperties"},
		{"uint32_t", "sizeofSpan"},
		{"uint32_t", "sizeofObject"},
	}, Doc: []string{
		"What a binding was compiled against; Sdkpp_CheckAbi compares it with the library.",
		"Fill it with SDKPP_ABI_INFO_INIT.",
	}}

	runtimeFuncs = []cFunc{
		{Name: "Sdkpp_Alloc", Ret: "void*", Params: []cField{{"size_t", "size"}},
			Doc: []string{"Allocates size bytes on the SDK's heap (for strings, spans and properties given to the SDK).",
				"Returns NULL, and logs why, when size is over 1 GiB or the memory cannot be had; never aborts."}},
		{Name: "Sdkpp_Free", Ret: "void", Params: []cField{{"void*", "ptr"}},
			Doc: []string{"Frees memory the SDK returned, or that Sdkpp_Alloc allocated. NULL is ignored."}},
		{Name: "Sdkpp_FreeProperties", Ret: "void", Params: []cField{{"Sdkpp_Properties", "props"}},
			Doc: []string{"Frees every key, every value and both arrays of props."}},
		{Name: "Sdkpp_RunCallbacks", Ret: "void",
			Doc: []string{"Runs every queued callback on the calling thread; call it once per frame. With nothing",
				"queued it returns at once, without entering the library's Go runtime."}},
		{Name: "Sdkpp_WaitForCallbacks", Ret: "bool", Params: []cField{{"uint32_t", "timeoutMs"}}, Doc: []string{
			"Blocks the calling thread until a callback is queued or timeoutMs milliseconds pass; true if",
			"callbacks are queued. It runs none: call Sdkpp_RunCallbacks next. For a thread that serves",
			"callbacks and has nothing else to do (a server, a tool, an engine's network thread), instead",
			"of polling Sdkpp_RunCallbacks in a loop. 0 only checks.",
		}},
		{Name: "Sdkpp_WaitForCallbackSignal", Ret: "bool", Params: []cField{{"uint64_t*", "seen"}, {"uint32_t", "timeoutMs"}}, Doc: []string{
			"Sdkpp_WaitForCallbacks for a runtime that suspends threads inside native code with signals",
			"(Mono): it runs none of the library's Go code, which such a runtime can deadlock. It waits",
			"until a callback is queued after *seen was written or timeoutMs milliseconds pass, writes the",
			"count of queued callbacks to *seen and returns whether it changed. Take the count with",
			"timeoutMs 0, check Sdkpp_WaitForCallbacks(0), then wait here and check again. NULL: false.",
		}},
		{Name: "Sdkpp_ResetCallbacks", Ret: "void",
			Doc: []string{"Discards queued callbacks without running them (their userData is still freed)."}},
		{Name: "Sdkpp_SetFreeThreaded", Ret: "void",
			Doc: []string{"Kept for source compatibility: sdkpp always runs callbacks inside Sdkpp_RunCallbacks."}},
		{Name: "Sdkpp_GetVersion", Ret: "uint32_t",
			Doc: []string{"The library's version, as SDKPP_VERSION."}},
		{Name: "Sdkpp_GetAbiVersion", Ret: "uint32_t",
			Doc: []string{"The library's SDKPP_ABI_VERSION."}},
		{Name: "Sdkpp_CheckAbi", Ret: "bool", Params: []cField{{"Sdkpp_AbiInfo*", "info"}}, Doc: []string{
			"Compares a binding's view of the ABI with the library's. On a mismatch it logs what differs,",
			"returns false, and the library refuses to create objects from then on, so that a mismatched",
			"binding fails loudly instead of corrupting memory.",
		}},
		{Name: "Sdkpp_GetObjectCount", Ret: "uint64_t",
			Doc: []string{"Number of live objects (all classes); for finding leaks."}},
		{Name: "Sdkpp_SetLogCallback", Ret: "void", Params: []cField{{"Sdkpp_Client_LogCallback", "callback"}, {"Sdkpp_FreeFn", "userDataFree"}, {"void*", "userData"}, {"Sdkpp_LoggingSeverity", "minSeverity"}}, Doc: []string{
			"Sends the log messages at or above minSeverity that no Client's log callback took (messages",
			"of no Client, and of Clients without one) to callback, inside Sdkpp_RunCallbacks, instead of",
			"standard error. NULL restores standard error. The callback it replaces, and this one after",
			"Sdkpp_Shutdown, is released with its free function.",
		}},
		{Name: "Sdkpp_Shutdown", Ret: "void", Doc: []string{
			"Returns the library to its state at load: drops every object (each handle the game still",
			"holds becomes stale), closes every Client (ending its calls), runs the callbacks that were",
			"pending on the calling thread (each one-shot fires once, with ErrorType ClientDestroyed",
			"unless its result was already queued), frees every callback's userData through its free",
			"function, discards what the callbacks queued meanwhile and lifts a refusal of Sdkpp_CheckAbi.",
			"Afterwards the library holds no pointer or userData of the game's. For an engine that reloads",
			"its scripts (Unity's domain reload) without unloading the library. Call it from the thread",
			"that runs callbacks, outside Sdkpp_RunCallbacks.",
		}},
	}
)
