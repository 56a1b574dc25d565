package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sdkpp/build/gen/desc"
)

// This file writes bindings/csharp/Sdkpp.g.cs, the C# P/Invoke binding. It builds on the
// hand-written bindings/csharp/Runtime.cs (strings, spans, maps, the callback registry, the ABI
// check and the Sdk class); the two are compiled together. The binding targets Mono's mcs at
// C# 7 (older Unity): no unsafe code, no APIs newer than the .NET 4.x profile.
//
// Shape of the binding (namespace Sdkpp):
//   - enum E                    public enum E : int, same names and values; Owner.E is nested in
//                               the class Owner (Client.Status).
//   - class X                   public sealed class X : IDisposable holding the object id in an
//                               IntPtr; Dispose and the finalizer drop it exactly once.
//     ctor flag                 public X() (Sdkpp_X_Init); extra ctors are overloads.
//     no nocopy                 X Clone(): a deep copy (Sdkpp_X_Clone).
//     prop P: T                 T P() and void SetP(T value).
//     method / static           instance / static methods of the same name.
//     callback Cb(params)       public delegate void Cb(...) nested in X; a static trampoline
//                               marked [MonoPInvokeCallback] adapts the C callback.
//   - types                     string <-> System.String (UTF-8), opt T -> T? or null,
//                               list T -> IList<T> in / T[] out, props -> IDictionary<string,string>
//                               in / Dictionary<string,string> out.

// csPrim is the C# type of each primitive.
var csPrim = map[string]string{
	"bool": "bool", "u8": "byte", "i16": "short", "i32": "int", "u32": "uint",
	"u64": "ulong", "float": "float", "string": "string",
}

// csKeywords are the C# keywords; an identifier that is one gets an @ prefix.
var csKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`abstract as base bool break byte case catch char checked class const
		continue decimal default delegate do double else enum event explicit extern false finally fixed
		float for foreach goto if implicit in int interface internal is lock long namespace new null
		object operator out override params private protected public readonly ref return sbyte sealed
		short sizeof stackalloc static string struct switch this throw true try typeof uint ulong
		unchecked unsafe ushort using virtual void volatile while`) {
		csKeywords[k] = true
	}
}

// csReserved are names a described class or top-level enum must not take: the types of
// Runtime.cs and Sdkpp.g.cs, and the System types Runtime.cs names without qualification (a type
// of namespace Sdkpp would shadow them). Keep in sync with bindings/csharp/Runtime.cs.
var csReserved = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`AOT System Sdk SdkppAbiException Abi AbiInfo Native NativeString
		NativeProperties NativeSpan NativeObject NativeBool NativeEnum NativeFreeFn Marshaling Arena
		CallbackRegistry Trampolines Attribute AttributeUsage AttributeUsageAttribute AttributeTargets
		Type IntPtr UIntPtr Exception InvalidOperationException OutOfMemoryException
		ArgumentNullException ArgumentException IDisposable Func Action Delegate Console Marshal
		MarshalAs MarshalAsAttribute UnmanagedType StructLayout StructLayoutAttribute LayoutKind
		DllImport DllImportAttribute CallingConvention UnmanagedFunctionPointer
		UnmanagedFunctionPointerAttribute UTF8Encoding Encoding Volatile Interlocked List Dictionary
		IDictionary IList KeyValuePair GC ThreadStatic ThreadStaticAttribute Gate SdkThread Monitor
		NativeLibraryResolver DllImportSearchPath AppDomain`) {
		csReserved[k] = true
	}
}

// Fully qualified names used by the generated code, so that no described name can shadow them.
const (
	csIntPtr   = "global::System.IntPtr"
	csMarshal  = "global::System.Runtime.InteropServices.Marshal"
	csInterop  = "global::System.Runtime.InteropServices"
	csArgNull  = "global::System.ArgumentNullException"
	csArgExc   = "global::System.ArgumentException"
	csGC       = "global::System.GC"
	csNS       = "global::Sdkpp."
	csI1       = "[" + csInterop + ".MarshalAs(" + csInterop + ".UnmanagedType.I1)]"
	csI1Return = "[return: " + csInterop + ".MarshalAs(" + csInterop + ".UnmanagedType.I1)]"
)

// csIdent makes a described name usable as a C# identifier.
func csIdent(name string) string {
	if csKeywords[name] {
		return "@" + name
	}
	return name
}

// csEnumRef is the qualified C# name of an enum (global::Sdkpp.Client.Status).
func csEnumRef(e *desc.Enum) string {
	if e.Owner != "" {
		return csNS + e.Owner + "." + csEnumName(e)
	}
	return csNS + csEnumName(e)
}

// csRenamed are the enums whose C# name differs from the description's (API.md's), because a
// System type has that name and a game that imports both namespaces could not write it
// unqualified: System.Net.HttpStatusCode. The C ABI and the other layers keep the description's
// name; the enum's XML doc says which one it is.
var csRenamed = map[string]struct{ name, system string }{
	"HttpStatusCode": {"HttpStatus", "System.Net.HttpStatusCode"},
}

// csEnumName is the C# name of an enum (its simple name, nested or not).
func csEnumName(e *desc.Enum) string {
	if r, ok := csRenamed[e.FullName()]; ok {
		return r.name
	}
	return e.Name
}

func csClassRef(c *desc.Class) string { return csNS + c.Name }

func csCallbackRef(cb *desc.Callback) string { return csNS + cb.Owner.Name + "." + cb.Name }

// csNativeDelegate is the qualified name of a callback's native delegate type.
func csNativeDelegate(cb *desc.Callback) string { return csNS + "Native." + cb.FullName() }

// isValueOpt reports whether opt t is a nullable value type in C# (T?), not a reference.
func isValueOpt(t *desc.Type) bool {
	return (t.Kind == desc.Prim && t.Prim != "string") || t.Kind == desc.EnumT
}

// csOut is the public C# type of a value the library gives out (return, getter, callback argument).
func csOut(t *desc.Type) string {
	switch t.Kind {
	case desc.Samples:
		return csIntPtr
	case desc.Out:
		return "ref " + csOut(t.Elem)
	case desc.Prim:
		return csPrim[t.Prim]
	case desc.EnumT:
		return csEnumRef(t.Enum)
	case desc.ClassT:
		return csClassRef(t.Class)
	case desc.List:
		return csOut(t.Elem) + "[]"
	case desc.Props:
		return "global::System.Collections.Generic.Dictionary<string, string>"
	case desc.Opt:
		if isValueOpt(t.Elem) {
			return csOut(t.Elem) + "?"
		}
		return csOut(t.Elem)
	}
	panic(fmt.Sprintf("emit_cs: no C# output type for type kind %d", t.Kind))
}

// csIn is the public C# type of a parameter.
func csIn(t *desc.Type) string {
	switch t.Kind {
	case desc.List:
		return "global::System.Collections.Generic.IList<" + csOut(t.Elem) + ">"
	case desc.Props:
		return "global::System.Collections.Generic.IDictionary<string, string>"
	case desc.CallbackT:
		return csCallbackRef(t.Callback)
	case desc.Opt:
		if isValueOpt(t.Elem) {
			return csOut(t.Elem) + "?"
		}
		return csIn(t.Elem)
	}
	return csOut(t)
}

// csNativeValue is the P/Invoke type of a C value passed by value, with its marshaling attribute.
func csNativeValue(t *desc.Type) string {
	switch t.Kind {
	case desc.Prim:
		switch t.Prim {
		case "bool":
			return csI1 + " bool"
		case "string":
			return csNS + "NativeString"
		}
		return csPrim[t.Prim]
	case desc.EnumT:
		return csEnumRef(t.Enum)
	case desc.List:
		return csNS + "NativeSpan"
	case desc.Props:
		return csNS + "NativeProperties"
	}
	panic(fmt.Sprintf("emit_cs: no native C# value type for type kind %d", t.Kind))
}

// csNativeOut is the P/Invoke type of the returnValue out-parameter of t (whose C type is a
// pointer to cValue(csOptElem(t))).
func csNativeOut(t *desc.Type) string {
	e := csOptElem(t)
	switch {
	case e.Kind == desc.ClassT:
		return csIntPtr
	case e.Kind == desc.Prim && e.Prim == "bool":
		return "byte" // a C bool through a pointer: one byte
	case e.Kind == desc.Opt || e.Kind == desc.CallbackT:
		panic("emit_cs: no returnValue type for a nested opt or a callback")
	}
	return csNativeValue(e)
}

// csNativeRet is the P/Invoke return type of a getter or method returning t, and its attribute.
func csNativeRet(t *desc.Type) (typ, attr string) {
	switch {
	case t == nil:
		return "void", ""
	case t.Kind == desc.CallbackT:
		panic("emit_cs: a callback cannot be returned")
	case t.Kind == desc.Opt:
		return "bool", csI1Return
	case returnsDirect(t):
		if t.Kind == desc.Prim && t.Prim == "bool" {
			return "bool", csI1Return
		}
		return csNativeValue(t), ""
	}
	return "void", ""
}

// csCallbackNativeArg is the type of a callback argument in the native delegate (cCallbackArg).
func csCallbackNativeArg(t *desc.Type) string {
	switch t.Kind {
	case desc.ClassT, desc.Opt, desc.Samples:
		return csIntPtr
	case desc.Out:
		if t.Elem.Kind == desc.Prim && t.Elem.Prim == "bool" {
			return csI1 + " ref bool" // C's one-byte bool, written back
		}
		return "ref " + csNativeValue(t.Elem)
	case desc.CallbackT:
		panic("emit_cs: a callback cannot take a callback")
	}
	return csNativeValue(t)
}

// csNativeParams renders the P/Invoke parameters of described parameters (cParams' C# twin).
func csNativeParams(params []desc.Param) []string {
	var out []string
	for _, p := range params {
		n := csIdent(p.Name)
		switch p.Type.Kind {
		case desc.CallbackT:
			out = append(out, csNativeDelegate(p.Type.Callback)+" "+n,
				csNS+"NativeFreeFn "+p.Name+"__userDataFree",
				csIntPtr+" "+p.Name+"__userData")
		case desc.ClassT:
			out = append(out, "ref "+csIntPtr+" "+n)
		case desc.Opt:
			out = append(out, csIntPtr+" "+n)
		default:
			out = append(out, csNativeValue(p.Type)+" "+n)
		}
	}
	return out
}

// csNativeFunc is one P/Invoke declaration.
type csNativeFunc struct {
	name   string
	ret    string
	attr   string
	params []string
}

// csNativeFuncsOf lists a class's P/Invoke declarations in header order; it mirrors functionsOf,
// and emitCSharp checks that the two agree.
func csNativeFuncsOf(c *desc.Class) []csNativeFunc {
	self := "ref " + csIntPtr + " self"
	var fs []csNativeFunc
	add := func(name, ret, attr string, params ...string) {
		fs = append(fs, csNativeFunc{name: cClass(c) + "_" + name, ret: ret, attr: attr, params: params})
	}
	withOut := func(ps []string, t *desc.Type) []string {
		if t != nil && !returnsDirect(t) {
			ps = append(ps, "out "+csNativeOut(t)+" returnValue")
		}
		return ps
	}
	if c.Ctor {
		add("Init", "void", "", self)
	}
	for _, m := range c.Ctors {
		add(m.Name, "void", "", append([]string{self}, csNativeParams(m.Params)...)...)
	}
	add("Drop", "void", "", self)
	if !c.NoCopy {
		add("Clone", "void", "", self, "ref "+csIntPtr+" other")
	}
	for _, p := range c.Props {
		ret, attr := csNativeRet(p.Type)
		add(p.Name, ret, attr, withOut([]string{self}, p.Type)...)
		if !p.ReadOnly {
			add("Set"+p.Name, "void", "", append([]string{self}, csNativeParams([]desc.Param{{Name: "value", Type: p.Type}})...)...)
		}
	}
	for _, m := range c.Methods {
		var ps []string
		if !m.Static {
			ps = append(ps, self)
		}
		ps = append(ps, csNativeParams(m.Params)...)
		ret, attr := csNativeRet(m.Ret)
		add(m.Name, ret, attr, withOut(ps, m.Ret)...)
	}
	return fs
}

// csRuntimeFuncs are the runtime functions of sdkpp.h that Runtime.cs calls, except
// Sdkpp_WaitForCallbackSignal, which runs no Go code and is declared there without the gate.
var csRuntimeFuncs = []csNativeFunc{
	{name: "Sdkpp_Alloc", ret: csIntPtr, params: []string{"global::System.UIntPtr size"}},
	{name: "Sdkpp_Free", ret: "void", params: []string{csIntPtr + " ptr"}},
	{name: "Sdkpp_FreeProperties", ret: "void", params: []string{csNS + "NativeProperties props"}},
	{name: "Sdkpp_RunCallbacks", ret: "void"},
	{name: "Sdkpp_WaitForCallbacks", ret: "bool", attr: csI1Return, params: []string{"uint timeoutMs"}},
	{name: "Sdkpp_ResetCallbacks", ret: "void"},
	{name: "Sdkpp_GetVersion", ret: "uint"},
	{name: "Sdkpp_GetAbiVersion", ret: "uint"},
	{name: "Sdkpp_CheckAbi", ret: "bool", attr: csI1Return, params: []string{"ref " + csNS + "AbiInfo info"}},
	{name: "Sdkpp_GetObjectCount", ret: "ulong"},
	{name: "Sdkpp_SetLogCallback", ret: "void", params: []string{csNS + "Native.Client_LogCallback callback", csNS + "NativeFreeFn userDataFree", csIntPtr + " userData", csNS + "LoggingSeverity minSeverity"}},
	{name: "Sdkpp_Shutdown", ret: "void"},
}

// csGatedImport writes the P/Invoke declaration of f under the name f.name + "_Raw" and the
// wrapper the binding calls, named f.name, which makes the call holding Gate (see Runtime.cs).
func csGatedImport(w *csWriter, f csNativeFunc) {
	w.line("[%s.DllImport(Library, EntryPoint = %q, CallingConvention = %s.CallingConvention.Cdecl)]", csInterop, f.name, csInterop)
	if f.attr != "" {
		w.line("%s", f.attr)
	}
	w.line("static extern %s %s_Raw(%s);", f.ret, f.name, strings.Join(f.params, ", "))
	w.line("")
	var args []string
	for _, p := range f.params {
		fields := strings.Fields(p)
		arg := fields[len(fields)-1]
		for _, mod := range fields[:len(fields)-1] {
			if mod == "ref" || mod == "out" {
				arg = mod + " " + arg
			}
		}
		args = append(args, arg)
	}
	call := fmt.Sprintf("%s_Raw(%s);", f.name, strings.Join(args, ", "))
	if f.ret != "void" {
		call = "return " + call
	}
	w.line("internal static %s %s(%s)", f.ret, f.name, strings.Join(f.params, ", "))
	w.line("{")
	w.line("%sGate.Enter();", csNS)
	w.line("try { %s }", call)
	w.line("finally { %sGate.Exit(); }", csNS)
	w.line("}")
}

// csWriter is an indenting line writer.
type csWriter struct {
	b      strings.Builder
	indent int
}

func (w *csWriter) line(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	if s == "" {
		w.b.WriteString("\n")
		return
	}
	comment := strings.HasPrefix(s, "//")
	if !comment && strings.HasPrefix(s, "}") {
		w.indent--
	}
	w.b.WriteString(strings.Repeat("    ", w.indent))
	w.b.WriteString(s)
	w.b.WriteString("\n")
	if !comment && strings.HasSuffix(s, "{") {
		w.indent++
	}
}

// lines writes several lines (each may open or close a block).
func (w *csWriter) lines(ls []string) {
	for _, l := range ls {
		w.line("%s", l)
	}
}

// csXML escapes text for an XML doc comment.
func csXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// csSeeCref is an escaped <see cref="Name"/> of a remark, which doc keeps as XML.
var csSeeCref = regexp.MustCompile(`&lt;see cref="([\w.]+)"/&gt;`)

// doc writes an XML doc comment: a summary from doc (or fallback) and optional remarks, in which
// a <see cref="Name"/> stays a reference.
func (w *csWriter) doc(doc []string, fallback string, remarks ...string) {
	if len(doc) == 0 {
		doc = []string{fallback}
	}
	if len(doc) == 1 {
		w.line("/// <summary>%s</summary>", csXML(doc[0]))
	} else {
		w.line("/// <summary>")
		for _, d := range doc {
			w.line("/// %s", csXML(d))
		}
		w.line("/// </summary>")
	}
	if len(remarks) > 0 {
		w.line("/// <remarks>")
		for _, r := range remarks {
			w.line("/// %s", csSeeCref.ReplaceAllString(csXML(r), `<see cref="$1"/>`))
		}
		w.line("/// </remarks>")
	}
}

// csCref is a cref to a type named by csEnumRef, csClassRef or csCallbackRef.
func csCref(ref string) string {
	return "<see cref=\"" + strings.TrimPrefix(ref, "global::") + "\"/>"
}

// csWords spells a camelCase name as words: applicationId gives "application id".
func csWords(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

// csTypeDoc describes a value of type t for <param> and <returns> (XML, crefs included).
func csTypeDoc(t *desc.Type, out bool) string {
	switch t.Kind {
	case desc.Opt:
		if out {
			return csTypeDoc(t.Elem, out) + " Null when absent."
		}
		return csTypeDoc(t.Elem, out) + " Null for none."
	case desc.EnumT:
		return "A " + csCref(csEnumRef(t.Enum)) + " value."
	case desc.ClassT:
		if out {
			return "A new " + csCref(csClassRef(t.Class)) + " the caller owns (dispose it); null if the library refused the call."
		}
		return "A " + csCref(csClassRef(t.Class)) + "; the library copies what it needs during the call."
	case desc.CallbackT:
		if csIsOneShot(t.Callback) {
			return "Called once with the outcome, inside Sdk.RunCallbacks (" + csCref(csCallbackRef(t.Callback)) + ")."
		}
		return "The handler (" + csCref(csCallbackRef(t.Callback)) + ")."
	case desc.List:
		if out {
			return "A new array (empty when the library refused the call)."
		}
		return "The list; the library copies it during the call."
	case desc.Props:
		return "A string map; the library copies it during the call."
	}
	if t.IsString() {
		if out {
			return "The text; empty when the library refused the call."
		}
		return "UTF-8 text; null throws ArgumentNullException."
	}
	if out {
		return "The value; the default when the library refused the call."
	}
	return ""
}

// paramDocs writes a <param> for each of params and a <returns> for ret (nil: none).
func (w *csWriter) paramDocs(params []desc.Param, ret *desc.Type) {
	for _, p := range params {
		text := csTypeDoc(p.Type, false)
		if text == "" || p.Type.Kind == desc.Prim {
			text = "The " + csWords(p.Name) + "."
			if extra := csTypeDoc(p.Type, false); extra != "" {
				text += " " + extra
			}
		}
		w.line("/// <param name=\"%s\">%s</param>", p.Name, text)
	}
	if ret != nil {
		w.line("/// <returns>%s</returns>", csTypeDoc(ret, true))
	}
}

// emitCSharp writes bindings/csharp/Sdkpp.g.cs.
func emitCSharp(api *desc.API) string {
	csCheckNames(api)
	version, abi := csVersions(api)

	w := &csWriter{}
	w.line("// %s", generatedNote)
	w.lines([]string{
		"//",
		"// The C# binding of sdkpp, generated by build/gen from api/sdkpp.api; do not edit it, edit the",
		"// description (or build/gen/emit_cs.go) and run `go run ./build/gen`. It needs the hand-written",
		"// bindings/csharp/Runtime.cs and the native library sdkpp (libsdkpp.so, sdkpp.dll, libsdkpp.dylib).",
		"//",
		"// Conventions:",
		"//  - Each class is sealed and IDisposable. Dispose releases the native object at once; an object",
		"//    that is not disposed is released by its finalizer. Using an object after Dispose, or after",
		"//    Sdk.Shutdown dropped it, throws ObjectDisposedException.",
		"//  - Property P is read with P() and written with SetP(value). Classes the description does not",
		"//    mark nocopy have Clone(), a deep copy that must be disposed on its own.",
		"//  - Strings are UTF-8 on the native side. A null argument that is not optional throws",
		"//    ArgumentNullException. Optional values are nullable; null means absent and clears a value.",
		"//  - Objects returned by the library (and given to callbacks) belong to the caller; a method that",
		"//    would return an object returns null when the library refused the call.",
		"//  - Nested enums and callbacks are nested types: Client.Status, Client.LogCallback.",
		"//  - Callbacks run only inside Sdk.RunCallbacks, on the calling thread. Exceptions they throw are",
		"//    caught and passed to Sdk.UnhandledException (Console.Error without one) and Sdk.CallbackException.",
		"//  - The binding checks before its first call that the library was built from the same",
		"//    description (Sdkpp_CheckAbi) and throws SdkppAbiException if not.",
		"",
		"namespace Sdkpp",
		"{",
	})

	// Constants and ABI probes.
	w.line("internal static partial class Native")
	w.line("{")
	w.line("/// <summary>SDKPP_VERSION: %d.%d.%d as (major &lt;&lt; 16) | (minor &lt;&lt; 8) | patch.</summary>", api.Version[0], api.Version[1], api.Version[2])
	w.line("internal const uint Version = %du;", version)
	w.line("/// <summary>SDKPP_ABI_VERSION of include/sdkpp.h generated from the same description.</summary>")
	w.line("internal const uint AbiVersion = %du;", abi)
	for _, f := range csRuntimeFuncs {
		w.line("")
		csGatedImport(w, f)
	}
	w.line("}")
	w.line("")
	enumProbe := "int"
	for _, e := range api.Enums {
		if e.Owner == "" && e.Name == "LoggingSeverity" {
			enumProbe = csEnumRef(e)
		}
	}
	if enumProbe == "int" && len(api.Enums) > 0 {
		enumProbe = csEnumRef(api.Enums[0])
	}
	w.line("#pragma warning disable 649 // measured by the ABI check, never written")
	w.line("/// <summary>An enum field, for sizeofEnum of the ABI check.</summary>")
	w.line("[%s.StructLayout(%s.LayoutKind.Sequential)]", csInterop, csInterop)
	w.line("internal struct NativeEnum")
	w.line("{")
	w.line("internal %s value;", enumProbe)
	w.line("}")
	w.line("#pragma warning restore 649")

	// Top-level enums.
	for _, e := range api.Enums {
		if e.Owner == "" {
			w.line("")
			csEnum(w, e)
		}
	}

	// Classes.
	for _, c := range api.Classes {
		w.line("")
		csClass(w, c)
	}

	// P/Invoke declarations and native delegate types.
	w.line("")
	w.line("internal static partial class Native")
	w.line("{")
	first := true
	for _, c := range api.Classes {
		for _, cb := range c.Callbacks {
			if !first {
				w.line("")
			}
			first = false
			var ps []string
			for _, p := range cb.Params {
				ps = append(ps, csCallbackNativeArg(p.Type)+" "+csIdent(p.Name))
			}
			ps = append(ps, csIntPtr+" userData")
			w.line("[%s.UnmanagedFunctionPointer(%s.CallingConvention.Cdecl)]", csInterop, csInterop)
			w.line("internal delegate void %s(%s);", cb.FullName(), strings.Join(ps, ", "))
		}
	}
	for _, c := range api.Classes {
		fs := csNativeFuncsOf(c)
		csCheckAgainstC(c, fs)
		for _, f := range fs {
			if !first {
				w.line("")
			}
			first = false
			csGatedImport(w, f)
		}
	}
	w.line("}")

	// Trampolines.
	w.line("")
	w.line("/// <summary>The static functions the library calls back; each adapts a C callback to its delegate.</summary>")
	w.line("internal static class Trampolines")
	w.line("{")
	first = true
	for _, c := range api.Classes {
		for _, cb := range c.Callbacks {
			if !first {
				w.line("")
			}
			first = false
			csTrampoline(w, cb)
		}
	}
	w.line("}")
	w.line("}")
	return w.b.String()
}

// csVersions computes SDKPP_VERSION and reads SDKPP_ABI_VERSION out of the C header that emitC
// writes for the same description, so that the binding and the header can never disagree.
func csVersions(api *desc.API) (version, abi uint32) {
	h := emitC(api)
	define := func(name string) string {
		m := regexp.MustCompile(`(?m)^#define ` + name + ` (.+)$`).FindStringSubmatch(h)
		if m == nil {
			panic("emit_cs: the C header has no #define " + name)
		}
		return strings.TrimSpace(m[1])
	}
	part := func(name string) uint32 {
		n, err := strconv.ParseUint(define(name), 10, 8)
		if err != nil {
			panic(fmt.Sprintf("emit_cs: cannot parse %s: %v", name, err))
		}
		return uint32(n)
	}
	const formula = "((SDKPP_VERSION_MAJOR << 16) | (SDKPP_VERSION_MINOR << 8) | SDKPP_VERSION_PATCH)"
	if got := define("SDKPP_VERSION"); got != formula {
		panic("emit_cs: SDKPP_VERSION is no longer " + formula + " but " + got + "; update csVersions")
	}
	version = part("SDKPP_VERSION_MAJOR")<<16 | part("SDKPP_VERSION_MINOR")<<8 | part("SDKPP_VERSION_PATCH")
	a, err := strconv.ParseUint(strings.TrimSuffix(define("SDKPP_ABI_VERSION"), "u"), 10, 32)
	if err != nil {
		panic(fmt.Sprintf("emit_cs: cannot parse SDKPP_ABI_VERSION: %v", err))
	}
	return version, uint32(a)
}

// csCheckAgainstC panics if the P/Invoke declarations of c do not name the C functions of c.
func csCheckAgainstC(c *desc.Class, fs []csNativeFunc) {
	var want, got []string
	for _, f := range functionsOf(c) {
		want = append(want, f.Name)
	}
	for _, f := range fs {
		got = append(got, f.name)
	}
	if strings.Join(want, ",") != strings.Join(got, ",") {
		panic(fmt.Sprintf("emit_cs: the C# P/Invokes of %s (%v) do not match the C functions (%v); update csNativeFuncsOf", c.Name, got, want))
	}
}

// objectMembers are System.Object members a described member must not hide. The one exception is
// the equality form of Equals (csIsEquals), which the binding emits as IEquatable<T>.Equals with
// the matching Equals(object) and GetHashCode overrides.
var objectMembers = map[string]bool{"Equals": true, "GetHashCode": true, "GetType": true, "Finalize": true,
	"MemberwiseClone": true, "ReferenceEquals": true}

// csCheckNames panics on descriptions whose names would not compile or would clash in C#.
func csCheckNames(api *desc.API) {
	top := map[string]string{}
	claim := func(scope map[string]string, name, what string) {
		if prev, ok := scope[name]; ok {
			panic(fmt.Sprintf("emit_cs: %s and %s have the same C# name %q", prev, what, name))
		}
		scope[name] = what
	}
	for _, e := range api.Enums {
		if e.Owner == "" {
			if csReserved[csEnumName(e)] {
				panic(fmt.Sprintf("emit_cs: enum %s takes a name the C# binding reserves (see csReserved)", e.Name))
			}
			claim(top, csEnumName(e), "enum "+e.Name)
		}
		for _, v := range e.Values {
			if v.Value < -1<<31 || v.Value > 1<<32-1 {
				panic(fmt.Sprintf("emit_cs: enum %s value %s = %d does not fit 32 bits", e.CppName(), v.Name, v.Value))
			}
		}
	}
	for _, c := range api.Classes {
		if csReserved[c.Name] {
			panic(fmt.Sprintf("emit_cs: class %s takes a name the C# binding reserves (see csReserved)", c.Name))
		}
		claim(top, c.Name, "class "+c.Name)
		members := map[string]string{}
		// Members the binding itself gives every class.
		for _, n := range []string{"Dispose", "Adopt", "Drop", "Live", "handle", "disposed", "epoch"} {
			members[n] = "the binding's " + n
		}
		if !c.NoCopy {
			members["Clone"] = "the binding's Clone"
		}
		member := func(name, what string) {
			if name == c.Name {
				panic(fmt.Sprintf("emit_cs: %s of %s has the name of its class, which C# forbids", what, c.Name))
			}
			if objectMembers[name] {
				panic(fmt.Sprintf("emit_cs: %s of %s would hide System.Object.%s", what, c.Name, name))
			}
			claim(members, name, what+" of "+c.Name)
		}
		for _, e := range c.Enums {
			member(csEnumName(e), "enum "+e.Name)
		}
		for _, cb := range c.Callbacks {
			member(cb.Name, "callback "+cb.Name)
		}
		for _, p := range c.Props {
			member(p.Name, "prop "+p.Name)
			if !p.ReadOnly {
				member("Set"+p.Name, "setter Set"+p.Name)
			}
			if n := csCopyName(p.Name, p.Type, true, nil); n != "" {
				member(n, "the Copy form of prop "+p.Name)
			}
			csCheckType(p.Type, false)
		}
		for _, m := range c.Methods {
			if m.Name == "ToString" && !csIsToString(m) {
				panic(fmt.Sprintf("emit_cs: %s.ToString must be a non-static method without parameters returning string", c.Name))
			}
			if m.Name == "Equals" && !csIsEquals(m) {
				panic(fmt.Sprintf("emit_cs: %s.Equals must be a non-static method Equals(other: %s) -> bool", c.Name, c.Name))
			}
			if csIsEquals(m) {
				claim(members, m.Name, "method "+m.Name+" of "+c.Name)
			} else {
				member(m.Name, "method "+m.Name)
			}
			if n := csCopyName(m.Name, m.Ret, false, m); n != "" {
				member(n, "the Copy form of method "+m.Name)
			}
			if m.Ret != nil {
				csCheckType(m.Ret, false)
			}
			for _, p := range m.Params {
				csCheckType(p.Type, false)
			}
		}
		for _, ev := range csEvents(c) {
			member(ev.name, "event "+ev.name+" (of "+ev.setter.Name+")")
			member("__ev_"+ev.name, "the field of event "+ev.name)
		}
		results := map[*desc.Callback]bool{}
		for _, a := range csAsyncs(c) {
			member(a.m.Name+"Async", "the Task form of "+a.m.Name)
			if a.cb.Owner == c && len(a.cb.Params) > 1 && !results[a.cb] {
				results[a.cb] = true
				member(csResultName(a.cb), "the result class of "+a.cb.Name)
				for _, p := range a.cb.Params[1:] {
					if csResultBase[csPascal(p.Name)] {
						panic(fmt.Sprintf("emit_cs: output %s of %s would hide SdkResult.%s", p.Name, a.cb.Name, csPascal(p.Name)))
					}
				}
			}
		}
		ctors := map[string]string{}
		if c.Ctor {
			ctors[""] = "the parameterless constructor (ctor flag)"
		}
		for _, m := range c.Ctors {
			var sig []string
			for _, p := range m.Params {
				csCheckType(p.Type, false)
				sig = append(sig, csIn(p.Type))
			}
			key := strings.Join(sig, ", ")
			if prev, ok := ctors[key]; ok {
				panic(fmt.Sprintf("emit_cs: %s and ctor %s of %s would be C# constructors with the same parameter types (%s)", prev, m.Name, c.Name, key))
			}
			ctors[key] = "ctor " + m.Name
			if len(m.Params) == 1 && csIn(m.Params[0].Type) == csIntPtr {
				panic(fmt.Sprintf("emit_cs: ctor %s of %s would clash with the adopting constructor", m.Name, c.Name))
			}
		}
		for _, cb := range c.Callbacks {
			for _, p := range cb.Params {
				csCheckType(p.Type, true)
				if p.Name == "userData" {
					panic(fmt.Sprintf("emit_cs: callback %s: a parameter may not be named userData", cb.FullName()))
				}
			}
		}
	}
}

// csCheckType panics on a type combination the binding does not support.
func csCheckType(t *desc.Type, callbackArg bool) {
	switch t.Kind {
	case desc.Opt:
		if callbackArg && (t.Elem.IsString() || t.Elem.Kind == desc.Props) {
			panic("emit_cs: an optional string or props callback argument is not supported (its ownership is not specified)")
		}
		if t.Elem.Kind == desc.Opt || t.Elem.Kind == desc.List || t.Elem.Kind == desc.CallbackT {
			panic("emit_cs: opt of a list, an opt or a callback is not supported")
		}
		csCheckType(t.Elem, callbackArg)
	case desc.List:
		if t.Elem.Kind != desc.ClassT && !(t.Elem.Kind == desc.Prim && t.Elem.Prim == "u64") {
			panic("emit_cs: only lists of u64 and of classes are supported")
		}
	case desc.CallbackT:
		if callbackArg {
			panic("emit_cs: a callback cannot take a callback")
		}
	}
}

func csIsToString(m *desc.Method) bool {
	return m.Name == "ToString" && !m.Static && len(m.Params) == 0 && m.Ret != nil && m.Ret.IsString()
}

// csIsEquals reports whether m is the equality form Equals(other: C) -> bool of its class C.
func csIsEquals(m *desc.Method) bool {
	return m.Name == "Equals" && !m.Static && len(m.Params) == 1 && m.Params[0].Type.Kind == desc.ClassT &&
		m.Params[0].Type.Class == m.Class && m.Ret != nil && m.Ret.Kind == desc.Prim && m.Ret.Prim == "bool"
}

// csEquals returns the equality method of c, or nil.
func csEquals(c *desc.Class) *desc.Method {
	for _, m := range c.Methods {
		if csIsEquals(m) {
			return m
		}
	}
	return nil
}

// csHashProps are the properties GetHashCode combines: those of c that an equal object must
// have equal and that hash cheaply and exactly (no optional values, objects, lists or floats,
// whose 0 and -0 compare equal but may hash apart).
func csHashProps(c *desc.Class) []*desc.Prop {
	var ps []*desc.Prop
	for _, p := range c.Props {
		if p.Type.Kind == desc.EnumT || (p.Type.Kind == desc.Prim && p.Type.Prim != "float") {
			ps = append(ps, p)
		}
	}
	return ps
}

// csEqualityOverrides writes Equals(object) and GetHashCode to match the equality method of c.
func csEqualityOverrides(w *csWriter, c *desc.Class) {
	w.line("")
	w.doc([]string{"True when obj is a non-null " + c.Name + " that Equals(" + c.Name + ") finds equal to this one."}, "")
	w.line("public override bool Equals(object obj)")
	w.line("{")
	w.line("return this.Equals(obj as %s);", csClassRef(c))
	w.line("}")
	w.line("")
	var names []string
	for _, p := range csHashProps(c) {
		names = append(names, p.Name)
	}
	summary := "A hash code consistent with Equals: equal objects have equal hash codes."
	remarks := []string{"It changes when the object changes; do not change an object while it is a key of a hash table."}
	if len(names) > 0 {
		remarks = append(remarks, "It combines "+strings.Join(names, ", ")+".")
	}
	w.doc([]string{summary}, "", remarks...)
	w.line("public override int GetHashCode()")
	w.line("{")
	w.line("int h = 17;")
	w.line("unchecked")
	w.line("{")
	for _, p := range csHashProps(c) {
		if p.Type.IsString() {
			w.line("h = h * 31 + (this.%s() ?? \"\").GetHashCode();", csIdent(p.Name))
		} else {
			w.line("h = h * 31 + this.%s().GetHashCode();", csIdent(p.Name))
		}
	}
	w.line("}")
	w.line("return h;")
	w.line("}")
}

// csEnum writes an enum.
// csIsFlags says whether e is a set of bit flags: at least three named values besides zero, each
// a distinct power of two (ActivityGamePlatforms), so that [Flags] prints combinations by name.
func csIsFlags(e *desc.Enum) bool {
	n := 0
	seen := int64(0)
	for _, v := range e.Values {
		if v.Value == 0 {
			continue
		}
		if v.Value < 0 || v.Value&(v.Value-1) != 0 || seen&v.Value != 0 {
			return false
		}
		seen |= v.Value
		n++
	}
	return n >= 3
}

func csEnum(w *csWriter, e *desc.Enum) {
	var remarks []string
	if e.Open {
		remarks = append(remarks, "Open: any 32-bit value is valid, not only the named ones.")
	}
	if csIsFlags(e) {
		remarks = append(remarks, "Bit flags: combine values with |.")
	}
	if r, ok := csRenamed[e.FullName()]; ok {
		remarks = append(remarks, fmt.Sprintf("This is %s of the API reference and the C ABI, named %s in C# so that it does not collide with %s.", e.Name, r.name, r.system))
	}
	w.doc(e.Doc, "The "+e.CppName()+" enum.", remarks...)
	if csIsFlags(e) {
		w.line("[global::System.Flags]")
	}
	w.line("public enum %s : int", csIdent(csEnumName(e)))
	w.line("{")
	for _, v := range e.Values {
		w.line("/// <summary>%s_%s = %d.</summary>", cEnum(e), v.Name, v.Value)
		if v.Value > 1<<31-1 {
			w.line("%s = unchecked((int)0x%X),", csIdent(v.Name), v.Value)
		} else {
			w.line("%s = %d,", csIdent(v.Name), v.Value)
		}
	}
	w.line("}")
}

// csClass writes a class with its nested enums and callbacks.
func csClass(w *csWriter, c *desc.Class) {
	name := c.Name
	native := csNS + "Native." + cClass(c)
	remarks := []string{"Dispose releases the native object; an object that is not disposed is released by its finalizer."}
	w.doc(c.Doc, "The "+c.Name+" class.", remarks...)
	if csEquals(c) != nil {
		w.line("public sealed class %s : global::System.IDisposable, global::System.IEquatable<%s>", name, csClassRef(c))
	} else {
		w.line("public sealed class %s : global::System.IDisposable", name)
	}
	w.line("{")
	w.line("// The library's object id (the opaque field of %s); zero once dropped.", cClass(c))
	w.line("internal %s handle;", csIntPtr)
	w.line("// Set once by Dispose or the finalizer, so that the object is dropped exactly once.")
	w.line("int disposed;")
	w.line("// The Sdk.Shutdown epoch the object was made in; a later Shutdown dropped it in the library.")
	w.line("readonly int epoch = %sSdk.Epoch;", csNS)

	for _, e := range c.Enums {
		w.line("")
		csEnum(w, e)
	}
	for _, cb := range c.Callbacks {
		w.line("")
		var ps []string
		remarks := []string{"It runs inside Sdk.RunCallbacks on the thread that calls it."}
		if cb.Direct {
			remarks = []string{"It runs on the SDK's audio thread for every 20 ms frame, not inside Sdk.RunCallbacks: copy what you need (Marshal.Copy into a buffer you keep) and return at once; do not allocate, lock or call the SDK."}
		}
		for _, p := range cb.Params {
			ps = append(ps, csOut(p.Type)+" "+csIdent(p.Name))
			if e := csOptElem(p.Type); e.Kind == desc.ClassT || (e.Kind == desc.List && e.Elem.Kind == desc.ClassT) {
				remarks = append(remarks, "The "+p.Name+" object belongs to the callback: dispose it (or let its finalizer release it).")
			}
		}
		w.doc(cb.Doc, "The "+c.Name+"::"+cb.Name+" callback.", remarks...)
		w.line("public delegate void %s(%s);", cb.Name, strings.Join(ps, ", "))
	}

	if c.Ctor {
		w.line("")
		w.doc([]string{"Makes a new " + name + " (" + cClass(c) + "_Init)."}, "")
		w.line("public %s()", name)
		w.line("{")
		w.line("%sAbi.Ensure();", csNS) // also binds the thread (Native.BindThread)
		w.line("%s_Init(ref this.handle);", native)
		w.line("}")
	}
	for _, m := range c.Ctors {
		w.line("")
		var ps []string
		for _, p := range m.Params {
			ps = append(ps, csIn(p.Type)+" "+csIdent(p.Name))
		}
		w.doc(m.Doc, "Makes a new "+name+" ("+cClass(c)+"_"+m.Name+").")
		w.paramDocs(m.Params, nil)
		w.line("public %s(%s)", name, strings.Join(ps, ", "))
		w.line("{")
		w.line("%sAbi.Ensure();", csNS)
		csBody(w, native+"_"+m.Name, "ref this.handle", m.Params, nil, false) // after Abi.Ensure
		w.line("}")
	}

	w.line("")
	w.line("// Adopts an id the library returned.")
	w.line("internal %s(%s id)", name, csIntPtr)
	w.line("{")
	w.line("this.handle = id;")
	w.line("}")
	w.line("")
	w.line("// Wraps an id the library returned, or gives null for 0 (the library refused the call).")
	w.line("internal static %s Adopt(%s id)", name, csIntPtr)
	w.line("{")
	w.line("return id == %s.Zero ? null : new %s(id);", csIntPtr, name)
	w.line("}")

	w.line("")
	w.doc([]string{"Releases the native object now (" + cClass(c) + "_Drop)."}, "",
		"Calling it again does nothing. Later calls on this object throw ObjectDisposedException.")
	w.line("public void Dispose()")
	w.line("{")
	w.line("this.Drop();")
	w.line("%s.SuppressFinalize(this);", csGC)
	w.line("}")
	w.line("")
	w.doc([]string{"Releases the native object if Dispose was not called."}, "")
	w.line("~%s()", name)
	w.line("{")
	w.line("this.Drop();")
	w.line("}")
	w.line("")
	w.line("void Drop()")
	w.line("{")
	w.line("if (global::System.Threading.Interlocked.Exchange(ref this.disposed, 1) != 0)")
	w.line("{")
	w.line("return;")
	w.line("}")
	w.line("if (this.handle != %s.Zero && this.epoch == %sSdk.Epoch) // Shutdown dropped the others", csIntPtr, csNS)
	w.line("{")
	w.line("%sNative.BindThread(); // the finalizer thread's first call may be this one", csNS)
	w.line("%s_Drop(ref this.handle);", native)
	w.line("}")
	w.line("}")
	w.line("")
	w.line("// Throws ObjectDisposedException after Dispose or Sdk.Shutdown; binds the thread otherwise.")
	w.line("void Live()")
	w.line("{")
	w.line("if (global::System.Threading.Volatile.Read(ref this.disposed) != 0 || this.epoch != %sSdk.Epoch)", csNS)
	w.line("{")
	w.line("throw new global::System.ObjectDisposedException(%q);", "Sdkpp."+name)
	w.line("}")
	w.line("%sNative.BindThread();", csNS)
	w.line("}")

	if !c.NoCopy {
		w.line("")
		w.doc([]string{"Returns a deep copy (" + cClass(c) + "_Clone); changing one does not change the other."}, "",
			"The copy is a separate object to dispose.")
		w.line("public %s Clone()", name)
		w.line("{")
		w.line("this.Live();")
		w.line("%s copy = %s.Zero;", csIntPtr, csIntPtr)
		w.line("%s_Clone(ref copy, ref this.handle);", native)
		w.line("return Adopt(copy);")
		w.line("}")
	}

	for _, p := range c.Props {
		w.line("")
		if cp := csCopyName(p.Name, p.Type, true, nil); cp != "" {
			w.doc(p.Doc, "Gets "+p.Name+".", csOwnedRemark(p.Type, cp)...)
			w.line("/// <returns>%s</returns>", csTypeDoc(p.Type, true))
			w.line("public %s %s()", csOut(p.Type), csIdent(p.Name))
			w.line("{")
			w.line("return this.%s();", cp)
			w.line("}")
			w.line("")
			w.doc(p.Doc, "Gets "+p.Name+".", csCopyRemark(p.Type, p.Name)...)
			w.line("/// <returns>%s</returns>", csTypeDoc(p.Type, true))
			w.line("public %s %s()", csOut(p.Type), cp)
		} else {
			w.doc(p.Doc, "Gets "+p.Name+".", csNullRemark(p.Type, true)...)
			w.line("public %s %s()", csOut(p.Type), csIdent(p.Name))
		}
		w.line("{")
		csBody(w, native+"_"+p.Name, "ref this.handle", nil, p.Type, true)
		w.line("}")
		if !p.ReadOnly {
			w.line("")
			var doc []string
			for i, d := range p.Doc {
				if i == 0 {
					d = "Sets " + p.Name + ": " + d
				}
				doc = append(doc, d)
			}
			w.doc(doc, "Sets "+p.Name+".", csNullRemark(p.Type, false)...)
			w.line("public void Set%s(%s value)", p.Name, csIn(p.Type))
			w.line("{")
			csBody(w, native+"_Set"+p.Name, "ref this.handle", []desc.Param{{Name: "value", Type: p.Type}}, nil, true)
			w.line("}")
		}
	}

	for _, m := range c.Methods {
		w.line("")
		var ps []string
		hasCallback := false
		for _, p := range m.Params {
			ps = append(ps, csIn(p.Type)+" "+csIdent(p.Name))
			if p.Type.Kind == desc.CallbackT {
				hasCallback = true
			}
		}
		var remarks []string
		direct := false
		for _, p := range m.Params {
			if p.Type.Kind == desc.CallbackT && p.Type.Callback.Direct {
				direct = true
			}
		}
		switch {
		case direct:
			remarks = append(remarks, "Its audio callbacks run on the SDK's audio thread for every frame, not inside Sdk.RunCallbacks; the binding keeps them until the library releases them.")
		case hasCallback:
			remarks = append(remarks, "The callback runs inside Sdk.RunCallbacks on the thread that calls it; the binding keeps it until the library releases it.")
		}
		copyName := csCopyName(m.Name, m.Ret, false, m)
		switch {
		case copyName != "":
			remarks = append(remarks, csOwnedRemark(m.Ret, copyName)...)
		case m.Ret != nil:
			remarks = append(remarks, csNullRemark(m.Ret, true)...)
		}
		ret := "void"
		if m.Ret != nil {
			ret = csOut(m.Ret)
		}
		if csIsEquals(m) {
			remarks = append(remarks, "False when other is null; true when other is this object.")
		}
		w.doc(m.Doc, "Calls "+cClass(c)+"_"+m.Name+".", remarks...)
		w.paramDocs(m.Params, m.Ret)
		if m.Deprecated {
			w.line("[global::System.Obsolete(\"Deprecated: see the documentation of %s.%s.\")]", c.Name, m.Name)
		}
		switch {
		case csIsToString(m):
			w.line("public override string ToString()")
		case m.Static:
			w.line("public static %s %s(%s)", ret, csIdent(m.Name), strings.Join(ps, ", "))
		default:
			w.line("public %s %s(%s)", ret, csIdent(m.Name), strings.Join(ps, ", "))
		}
		w.line("{")
		if csIsEquals(m) {
			w.line("if (global::System.Object.ReferenceEquals(%s, null))", csIdent(m.Params[0].Name))
			w.line("{")
			w.line("return false;")
			w.line("}")
			w.line("if (global::System.Object.ReferenceEquals(%s, this))", csIdent(m.Params[0].Name))
			w.line("{")
			w.line("return true;")
			w.line("}")
		}
		if copyName != "" {
			var args []string
			for _, p := range m.Params {
				args = append(args, csIdent(p.Name))
			}
			w.line("return this.%s(%s);", copyName, strings.Join(args, ", "))
			w.line("}")
			w.line("")
			w.doc(m.Doc, "Calls "+cClass(c)+"_"+m.Name+".", csCopyRemark(m.Ret, m.Name)...)
			w.paramDocs(m.Params, m.Ret)
			w.line("public %s %s(%s)", ret, copyName, strings.Join(ps, ", "))
			w.line("{")
		}
		self := "ref this.handle"
		if m.Static {
			self = ""
			w.line("%sAbi.Ensure();", csNS)
		}
		csBody(w, native+"_"+m.Name, self, m.Params, m.Ret, !m.Static)
		w.line("}")
		if csIsEquals(m) {
			csEqualityOverrides(w, c)
		}
	}
	for _, ev := range csEvents(c) {
		w.line("")
		csEvent(w, ev)
	}
	done := map[*desc.Callback]bool{}
	for _, cb := range c.Callbacks {
		if csIsOneShot(cb) && len(cb.Params) > 1 && !done[cb] {
			done[cb] = true
			w.line("")
			csResultClass(w, cb)
		}
	}
	for _, a := range csAsyncs(c) {
		w.line("")
		csAsync(w, c, a)
	}
	w.line("}")
}

// csResultBase are the members of SdkResult (Runtime.cs), which a result's outputs must not hide.
var csResultBase = map[string]bool{"Successful": true, "Type": true, "Error": true, "ErrorCode": true,
	"Status": true, "ResponseBody": true, "Retryable": true, "RetryAfter": true, "Message": true}

// csIsOneShot says whether cb answers one call once: its first parameter is the call's
// ClientResult, and the SDK queues it for RunCallbacks.
func csIsOneShot(cb *desc.Callback) bool {
	if cb.Direct || len(cb.Params) == 0 {
		return false
	}
	p := cb.Params[0]
	return p.Name == "result" && p.Type.Kind == desc.ClassT && p.Type.Class.Name == "ClientResult"
}

// csAsyncInfo is a method with a Task form: its last parameter is a one-shot callback.
type csAsyncInfo struct {
	m     *desc.Method
	cb    *desc.Callback
	abort *desc.Method // Abort<Name>(), which a CancellationToken calls; nil when the API has none
}

// csAsyncs lists c's methods that get a Task form: instance methods returning nothing whose only
// callback is their last parameter, a one-shot callback.
func csAsyncs(c *desc.Class) []csAsyncInfo {
	var out []csAsyncInfo
	for _, m := range c.Methods {
		if m.Static || m.Ret != nil || len(m.Params) == 0 {
			continue
		}
		last := m.Params[len(m.Params)-1].Type
		if last.Kind != desc.CallbackT || !csIsOneShot(last.Callback) {
			continue
		}
		other := false
		for _, p := range m.Params[:len(m.Params)-1] {
			if p.Type.Kind == desc.CallbackT {
				other = true
			}
		}
		if other {
			continue
		}
		a := csAsyncInfo{m: m, cb: last.Callback}
		for _, x := range c.Methods {
			if x.Name == "Abort"+m.Name && len(x.Params) == 0 && x.Ret == nil && !x.Static {
				a.abort = x
			}
		}
		out = append(out, a)
	}
	return out
}

// csPascal is a parameter name as a property name: lobbyId gives LobbyId.
func csPascal(name string) string { return strings.ToUpper(name[:1]) + name[1:] }

// csResultName is the class of the outcome of calls answered by cb: CreateOrJoinLobbyCallback
// gives CreateOrJoinLobbyResult.
func csResultName(cb *desc.Callback) string {
	return strings.TrimSuffix(cb.Name, "Callback") + "Result"
}

// csResultType is the C# type a Task form's task gives: SdkResult when cb has no outputs.
func csResultType(cb *desc.Callback) string {
	if len(cb.Params) == 1 {
		return csNS + "SdkResult"
	}
	return csNS + cb.Owner.Name + "." + csResultName(cb)
}

// csResultClass writes the read-only outcome of the calls cb answers: SdkResult's fields and
// cb's outputs.
func csResultClass(w *csWriter, cb *desc.Callback) {
	name := csResultName(cb)
	w.doc([]string{"The outcome of a call that " + cb.Name + " answers, as its Task form gives it: the result and the outputs."}, "",
		"Read-only; it holds no native object unless an output is one (those belong to the caller).")
	w.line("public sealed class %s : %sSdkResult", name, csNS)
	w.line("{")
	var ps, sets []string
	for _, p := range cb.Params[1:] {
		ps = append(ps, csOut(p.Type)+" "+csIdent(p.Name))
		sets = append(sets, fmt.Sprintf("this.%s = %s;", csPascal(p.Name), csIdent(p.Name)))
	}
	w.line("internal %s(%sClientResult result, %s) : base(result)", name, csNS, strings.Join(ps, ", "))
	w.line("{")
	for _, st := range sets {
		w.line("%s", st)
	}
	w.line("}")
	for _, p := range cb.Params[1:] {
		w.line("")
		w.doc([]string{"The " + p.Name + " the call gave (see " + cb.Name + ")."}, "", csNullRemark(p.Type, true)...)
		w.line("public %s %s { get; private set; }", csOut(p.Type), csPascal(p.Name))
	}
	w.line("}")
}

// csAsync writes the Task form of a method: it completes inside the callback, which runs in
// Sdk.RunCallbacks, so that continuations run on that thread (or on the awaiting code's
// SynchronizationContext).
func csAsync(w *csWriter, c *desc.Class, a csAsyncInfo) {
	rt := csResultType(a.cb)
	task := "global::System.Threading.Tasks.Task<" + rt + ">"
	var ps, args, cbps []string
	for _, p := range a.m.Params[:len(a.m.Params)-1] {
		ps = append(ps, csIn(p.Type)+" "+csIdent(p.Name))
		args = append(args, csIdent(p.Name))
	}
	for _, p := range a.cb.Params {
		cbps = append(cbps, "__p_"+p.Name)
	}
	if a.abort != nil {
		ps = append(ps, "global::System.Threading.CancellationToken cancellationToken = default(global::System.Threading.CancellationToken)")
	}
	remarks := []string{
		"The Task form of " + a.m.Name + ": the task completes inside Sdk.RunCallbacks, so continuations run on the thread that calls it (or are posted to the awaiting code's SynchronizationContext).",
		"A failure is the result's (Successful false, Type, Error); call ThrowIfFailed on it for an SdkException instead.",
	}
	if a.abort != nil {
		remarks = append(remarks, "Cancelling cancellationToken calls "+a.abort.Name+"; the result then has ErrorType.Aborted.")
	}
	w.doc(a.m.Doc, "Calls "+a.m.Name+" and gives its outcome as a task.", remarks...)
	w.paramDocs(a.m.Params[:len(a.m.Params)-1], nil)
	if a.abort != nil {
		w.line("/// <param name=\"cancellationToken\">Cancelling it calls %s.</param>", a.abort.Name)
	}
	w.line("/// <returns>A task that completes inside Sdk.RunCallbacks with %s.</returns>", csCref(csResultType(a.cb)))
	if a.m.Deprecated {
		w.line("[global::System.Obsolete(\"Deprecated: see the documentation of %s.%s.\")]", c.Name, a.m.Name)
	}
	w.line("public %s %sAsync(%s)", task, a.m.Name, strings.Join(ps, ", "))
	w.line("{")
	w.line("var __tcs = new global::System.Threading.Tasks.TaskCompletionSource<%s>();", rt)
	var result string
	if len(a.cb.Params) == 1 {
		result = "new " + rt + "(__p_result)"
	} else {
		result = "new " + rt + "(" + strings.Join(cbps, ", ") + ")"
	}
	if a.abort != nil {
		w.line("global::System.Threading.CancellationTokenRegistration __reg = default(global::System.Threading.CancellationTokenRegistration);")
		w.line("this.%s(%s(%s) =>", csIdent(a.m.Name), strings.Join(append(args, ""), ", "), strings.Join(cbps, ", "))
		w.line("{")
		w.line("__reg.Dispose();")
		w.line("__tcs.TrySetResult(%s);", result)
		w.line("});")
		w.line("if (cancellationToken.CanBeCanceled)")
		w.line("{")
		w.line("__reg = cancellationToken.Register(%sSdkResult.Aborter(this, __tcs.Task, __self => __self.%s()));", csNS, csIdent(a.abort.Name))
		w.line("}")
	} else {
		w.line("this.%s(%s(%s) => __tcs.TrySetResult(%s));", csIdent(a.m.Name), strings.Join(append(args, ""), ", "), strings.Join(cbps, ", "), result)
	}
	w.line("return __tcs.Task;")
	w.line("}")
}

// csEventInfo is an event the binding adds for a SetXCallback method: a handler slot the method
// fills.
type csEventInfo struct {
	name   string       // the event: SetLobbyCreatedCallback gives LobbyCreated
	setter *desc.Method // the SetXCallback method
	cb     *desc.Callback
}

// csEvents lists c's events: one per method Set<X>Callback whose only parameter is a callback
// that runs inside RunCallbacks. The name is X without a leading "On".
func csEvents(c *desc.Class) []csEventInfo {
	var out []csEventInfo
	for _, m := range c.Methods {
		if m.Static || m.Ret != nil || len(m.Params) != 1 || m.Params[0].Type.Kind != desc.CallbackT {
			continue
		}
		cb := m.Params[0].Type.Callback
		if cb.Direct || !strings.HasPrefix(m.Name, "Set") || !strings.HasSuffix(m.Name, "Callback") {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(m.Name, "Set"), "Callback")
		if strings.HasPrefix(name, "On") && len(name) > 2 && name[2] >= 'A' && name[2] <= 'Z' {
			name = name[2:]
		}
		if name == "" {
			continue
		}
		out = append(out, csEventInfo{name: name, setter: m, cb: cb})
	}
	return out
}

// csEvent writes an event over a SetXCallback slot: the first subscriber installs, through the
// setter, a dispatcher that calls the handlers subscribed at that moment. The dispatcher holds
// the handler list, not the object, so a removed handler (and what it captured) is collectable.
func csEvent(w *csWriter, ev csEventInfo) {
	dtype := csCallbackRef(ev.cb)
	field := "__ev_" + ev.name
	var params, args, disposals []string
	for _, p := range ev.cb.Params {
		n := "__p_" + p.Name
		params = append(params, n)
		args = append(args, n)
		if e := csOptElem(p.Type); e.Kind == desc.ClassT {
			disposals = append(disposals, fmt.Sprintf("if (%s != null) { %s.Dispose(); }", n, n))
		} else if e.Kind == desc.List && e.Elem.Kind == desc.ClassT {
			disposals = append(disposals, fmt.Sprintf("if (%s != null) { foreach (var __o in %s) { if (__o != null) { __o.Dispose(); } } }", n, n))
		}
	}
	doc := append([]string{}, ev.cb.Doc...)
	if len(doc) == 0 {
		doc = []string{"Raised for each " + ev.cb.Name + "."}
	}
	remarks := []string{
		"Handlers run inside Sdk.RunCallbacks on the thread that calls it, in the order they were added; a handler removed with -= is not called again and is not kept.",
		"The event fills the slot of " + ev.setter.Name + ": calling that method replaces the event's handlers until the next += installs them again.",
	}
	if len(disposals) > 0 {
		remarks = append(remarks, "The objects given to the handlers are disposed after the last handler returns: Clone what you keep.")
	}
	w.doc(doc, "", remarks...)
	w.line("public event %s %s", dtype, ev.name)
	w.line("{")
	w.line("add")
	w.line("{")
	// The lambdas do not capture this: the dispatcher must not keep the object alive.
	w.line("%sEventSlot<%s>.Of(ref this.%s).Subscribe(value, this, (__self, __slot) => __self.%s((%s) =>", csNS, dtype, field, csIdent(ev.setter.Name), strings.Join(params, ", "))
	w.line("{")
	w.line("%s __h = __slot.Handlers;", dtype)
	if len(disposals) > 0 {
		w.line("try")
		w.line("{")
	}
	w.line("if (__h != null)")
	w.line("{")
	w.line("__h(%s);", strings.Join(args, ", "))
	w.line("}")
	if len(disposals) > 0 {
		w.line("}")
		w.line("finally")
		w.line("{")
		for _, d := range disposals {
			w.line("%s", d)
		}
		w.line("}")
	}
	w.line("}));")
	w.line("}")
	w.line("remove")
	w.line("{")
	w.line("%sEventSlot<%s>.Of(ref this.%s).Remove(value);", csNS, dtype, field)
	w.line("}")
	w.line("}")
	w.line("%sEventSlot<%s> %s;", csNS, dtype, field)
}

// csCopyName is the name of the Copy form of a getter that hands the caller new native objects
// to own (EOS's convention: "Copy" and the name without "Get"), or "" for any other member. A
// getter is a property's, a method named Get..., or a const method without parameters; it hands
// over ownership when it returns a class, an optional class or a list of classes. m is nil for a
// property.
func csCopyName(name string, ret *desc.Type, prop bool, m *desc.Method) string {
	if ret == nil || !csOwned(ret) {
		return ""
	}
	if !prop && (m.Static || !(strings.HasPrefix(name, "Get") || m.Const && len(m.Params) == 0)) {
		return ""
	}
	return "Copy" + strings.TrimPrefix(name, "Get")
}

// csOwned says whether a value of type t, returned, is new native objects the caller owns.
func csOwned(t *desc.Type) bool {
	if t.Kind == desc.Opt || t.Kind == desc.List {
		t = t.Elem
	}
	return t.Kind == desc.ClassT
}

// csOwnedRemark is the remark of a getter that has a Copy form: the caller owns the result.
func csOwnedRemark(t *desc.Type, copyName string) []string {
	r := []string{"The caller owns the result: dispose it (its finalizer releases it otherwise). <see cref=\"" + copyName + "\"/> is the same call, named for that, as EOS names such getters."}
	if t.Kind == desc.Opt {
		r = append(r, "Null when the value is absent.")
	}
	return r
}

// csCopyRemark is the remark of a getter's Copy form.
func csCopyRemark(t *desc.Type, name string) []string {
	r := []string{"The caller owns the result: dispose it (its finalizer releases it otherwise). The API reference names this call " + name + ", which is kept beside it."}
	if t.Kind == desc.Opt {
		r = append(r, "Null when the value is absent.")
	}
	return r
}

// csNullRemark documents what null means for a value of type t.
func csNullRemark(t *desc.Type, out bool) []string {
	switch {
	case t.Kind == desc.Opt && out:
		return []string{"Null when the value is absent."}
	case t.Kind == desc.Opt:
		return []string{"Null clears the value."}
	case out && t.Kind == desc.ClassT:
		return []string{"The caller owns the returned object; null if the library refused the call."}
	case !out && (t.IsString() || t.Kind == desc.ClassT || t.Kind == desc.List || t.Kind == desc.Props):
		return []string{"Null throws ArgumentNullException."}
	}
	return nil
}

// csBody writes the statements of a wrapper: argument conversion, the P/Invoke call and the
// conversion of its result.
//
// bind says to call this.Live() first (an instance member: it throws after Dispose and binds the
// thread); constructors and static methods have already called Abi.Ensure, which binds it.
func csBody(w *csWriter, fn, self string, params []desc.Param, ret *desc.Type, bind bool) {
	var pre, args, post, callbacks []string
	arena := false
	if bind {
		w.line("this.Live();")
	}
	if self != "" {
		args = append(args, self)
	}
	for _, p := range params {
		n := csIdent(p.Name)
		a := "__a_" + p.Name // generated locals all start with __, arguments with __a_
		t := p.Type
		nullCheck := fmt.Sprintf("if (%s == null) { throw new %s(%q); }", n, csArgNull, p.Name)
		switch t.Kind {
		case desc.Prim:
			if t.IsString() {
				arena = true
				pre = append(pre, fmt.Sprintf("%sNativeString %s = __arena.String(%s, %q);", csNS, a, n, p.Name))
				args = append(args, a)
			} else {
				args = append(args, n)
			}
		case desc.EnumT:
			args = append(args, n)
		case desc.ClassT:
			pre = append(pre, nullCheck, fmt.Sprintf("%s %s = %s.handle;", csIntPtr, a, n))
			args = append(args, "ref "+a)
			post = append(post, fmt.Sprintf("%s.KeepAlive(%s);", csGC, n))
		case desc.Opt:
			arena = true
			e := t.Elem
			var box string
			switch {
			case e.Kind == desc.Prim && e.Prim == "bool":
				box = fmt.Sprintf("__arena.BoxBool(%s.Value)", n)
			case e.Kind == desc.EnumT:
				box = fmt.Sprintf("__arena.BoxInt32((int)%s.Value)", n)
			case e.IsString():
				box = fmt.Sprintf("__arena.Box(__arena.String(%s, %q))", n, p.Name)
			case e.Kind == desc.Prim:
				box = fmt.Sprintf("__arena.Box(%s.Value)", n)
			case e.Kind == desc.ClassT:
				box = fmt.Sprintf("__arena.BoxId(%s.handle)", n)
				post = append(post, fmt.Sprintf("%s.KeepAlive(%s);", csGC, n))
			case e.Kind == desc.Props:
				box = fmt.Sprintf("__arena.BoxProperties(__arena.Properties(%s, %q))", n, p.Name)
			default:
				panic(fmt.Sprintf("emit_cs: opt of type kind %d is not supported", e.Kind))
			}
			pre = append(pre, fmt.Sprintf("%s %s = %s == null ? %s.Zero : %s;", csIntPtr, a, n, csIntPtr, box))
			args = append(args, a)
		case desc.List:
			arena = true
			if t.Elem.Kind == desc.ClassT {
				pre = append(pre, nullCheck,
					fmt.Sprintf("%s[] %s_ids = new %s[%s.Count];", csIntPtr, a, csIntPtr, n),
					fmt.Sprintf("for (int __i = 0; __i < %s_ids.Length; __i++)", a),
					"{",
					fmt.Sprintf("%s __el = %s[__i];", csClassRef(t.Elem.Class), n),
					fmt.Sprintf("if (__el == null) { throw new %s(\"element \" + __i + \" is null\", %q); }", csArgExc, p.Name),
					fmt.Sprintf("%s_ids[__i] = __el.handle;", a),
					"}",
					fmt.Sprintf("%sNativeSpan %s = __arena.Ids(%s_ids);", csNS, a, a))
				post = append(post, fmt.Sprintf("%s.KeepAlive(%s);", csGC, n))
			} else {
				pre = append(pre, fmt.Sprintf("%sNativeSpan %s = __arena.UInt64s(%s, %q);", csNS, a, n, p.Name))
			}
			args = append(args, a)
		case desc.Props:
			arena = true
			pre = append(pre, fmt.Sprintf("%sNativeProperties %s = __arena.Properties(%s, %q);", csNS, a, n, p.Name))
			args = append(args, a)
		case desc.CallbackT:
			pre = append(pre, nullCheck)
			callbacks = append(callbacks, p.Name)
			args = append(args, csNS+"Trampolines."+t.Callback.FullName(), csNS+"CallbackRegistry.FreeUserData", "__ud_"+p.Name)
		}
	}

	// The call and its result.
	var decl, call []string
	result := "" // the public result, returned after post
	invoke := fmt.Sprintf("%s(%s)", fn, strings.Join(args, ", "))
	switch {
	case ret == nil:
		call = append(call, invoke+";")
	case returnsDirect(ret):
		decl = append(decl, fmt.Sprintf("%s __result;", csOut(ret)))
		call = append(call, fmt.Sprintf("__result = %s;", invoke))
		result = "__result"
	default:
		decl = append(decl, fmt.Sprintf("%s __result;", csOut(ret)))
		outArgs := append(append([]string{}, args...), "out __rv")
		invoke = fmt.Sprintf("%s(%s)", fn, strings.Join(outArgs, ", "))
		call = append(call, fmt.Sprintf("%s __rv;", csNativeOut(ret)))
		if ret.Kind == desc.Opt {
			conv := csTake(ret.Elem, "__rv")
			if isValueOpt(ret.Elem) {
				conv = "(" + csOut(ret) + ")" + conv
			}
			call = append(call, fmt.Sprintf("__result = %s ? %s : null;", invoke, conv))
		} else {
			call = append(call, invoke+";", fmt.Sprintf("__result = %s;", csTake(ret, "__rv")))
		}
		result = "__result"
	}
	if len(callbacks) > 0 {
		// Register last, so that nothing can throw between registering and handing over; if the
		// call never reached the library, forget the callbacks again.
		var wrapped []string
		for _, cb := range callbacks {
			wrapped = append(wrapped, fmt.Sprintf("%s __ud_%s = %sCallbackRegistry.Register(%s);", csIntPtr, cb, csNS, csIdent(cb)))
		}
		wrapped = append(wrapped, "bool __handedOver = false;", "try", "{")
		wrapped = append(wrapped, call...)
		wrapped = append(wrapped, "__handedOver = true;", "}", "finally", "{", "if (!__handedOver)", "{")
		for _, cb := range callbacks {
			wrapped = append(wrapped, fmt.Sprintf("%sCallbackRegistry.Remove(__ud_%s);", csNS, cb))
		}
		wrapped = append(wrapped, "}", "}")
		call = wrapped
	}
	if len(callbacks) == 0 && len(post) == 0 && len(call) > 0 && strings.HasPrefix(call[len(call)-1], "__result = ") {
		// Nothing runs after the call: return its result directly.
		call[len(call)-1] = "return " + strings.TrimPrefix(call[len(call)-1], "__result = ")
		decl, result = nil, ""
	}
	call = append(decl, call...)
	var body []string
	body = append(body, pre...)
	body = append(body, call...)
	body = append(body, post...)
	if result != "" {
		body = append(body, "return "+result+";")
	}
	if arena {
		w.line("using (%sArena __arena = new %sArena())", csNS, csNS)
		w.line("{")
		w.lines(body)
		w.line("}")
		return
	}
	w.lines(body)
}

// csTake converts a value the library returned in v (a returnValue or a callback argument),
// taking ownership: strings, spans and maps are freed, objects adopted.
func csTake(t *desc.Type, v string) string {
	switch t.Kind {
	case desc.Prim:
		switch t.Prim {
		case "string":
			return csNS + "Marshaling.TakeString(" + v + ")"
		case "bool":
			return "(" + v + " != 0)"
		}
		return v
	case desc.EnumT:
		return v
	case desc.ClassT:
		return csClassRef(t.Class) + ".Adopt(" + v + ")"
	case desc.List:
		if t.Elem.Kind == desc.ClassT {
			return fmt.Sprintf("%sMarshaling.TakeObjects<%s>(%s, %s.Adopt)", csNS, csClassRef(t.Elem.Class), v, csClassRef(t.Elem.Class))
		}
		return csNS + "Marshaling.TakeUInt64s(" + v + ")"
	case desc.Props:
		return csNS + "Marshaling.TakeProperties(" + v + ")"
	}
	panic(fmt.Sprintf("emit_cs: cannot convert a returned value of type kind %d", t.Kind))
}

// csReadPtr reads an optional scalar callback argument through its pointer p.
func csReadPtr(t *desc.Type, p string) string {
	if t.Kind == desc.EnumT {
		return fmt.Sprintf("(%s)%s.ReadInt32(%s)", csEnumRef(t.Enum), csMarshal, p)
	}
	switch t.Prim {
	case "bool":
		return fmt.Sprintf("(%s.ReadByte(%s) != 0)", csMarshal, p)
	case "u8":
		return fmt.Sprintf("%s.ReadByte(%s)", csMarshal, p)
	case "i16":
		return fmt.Sprintf("%s.ReadInt16(%s)", csMarshal, p)
	case "i32":
		return fmt.Sprintf("%s.ReadInt32(%s)", csMarshal, p)
	case "u32":
		return fmt.Sprintf("unchecked((uint)%s.ReadInt32(%s))", csMarshal, p)
	case "u64":
		return fmt.Sprintf("unchecked((ulong)%s.ReadInt64(%s))", csMarshal, p)
	case "float":
		return fmt.Sprintf("global::System.BitConverter.ToSingle(global::System.BitConverter.GetBytes(%s.ReadInt32(%s)), 0)", csMarshal, p)
	}
	panic("emit_cs: cannot read an optional " + t.Prim + " callback argument")
}

// csTrampoline writes the static function the library calls for callback cb, and the delegate
// instance that keeps it alive for the whole process.
func csTrampoline(w *csWriter, cb *desc.Callback) {
	name := cb.FullName()
	var ps, conv, args, cleanup []string
	for _, p := range cb.Params {
		n := csIdent(p.Name)
		a := "__a_" + p.Name
		t := p.Type
		ps = append(ps, csCallbackNativeArg(t)+" "+n)
		var expr string
		switch {
		case t.Kind == desc.ClassT:
			expr = fmt.Sprintf("%s.Adopt(%sMarshaling.ReadId(%s))", csClassRef(t.Class), csNS, n)
			cleanup = append(cleanup, fmt.Sprintf("if (%s != null) { %s.Dispose(); }", a, a))
		case t.Kind == desc.Opt && t.Elem.Kind == desc.ClassT:
			expr = fmt.Sprintf("%s.Adopt(%sMarshaling.ReadId(%s))", csClassRef(t.Elem.Class), csNS, n)
			cleanup = append(cleanup, fmt.Sprintf("if (%s != null) { %s.Dispose(); }", a, a))
		case t.Kind == desc.Opt:
			expr = fmt.Sprintf("%s == %s.Zero ? (%s)null : (%s)%s", n, csIntPtr, csOut(t), csOut(t), csReadPtr(t.Elem, n))
		case t.Kind == desc.List && t.Elem.Kind == desc.ClassT:
			expr = csTake(t, n)
			cleanup = append(cleanup, fmt.Sprintf("foreach (%s __o in %s) { if (__o != null) { __o.Dispose(); } }", csClassRef(t.Elem.Class), a))
		case t.Kind == desc.EnumT || (t.Kind == desc.Prim && !t.IsString()) || t.Kind == desc.Samples:
			args = append(args, n) // passed as is
			continue
		case t.Kind == desc.Out:
			args = append(args, "ref "+n) // the game writes through it
			continue
		default:
			expr = csTake(t, n)
		}
		conv = append(conv, fmt.Sprintf("%s %s = %s;", csOut(t), a, expr))
		args = append(args, a)
	}
	ps = append(ps, csIntPtr+" __userData")
	w.line("internal static readonly %s %s = %s_Impl;", csNativeDelegate(cb), name, name)
	w.line("")
	w.line("[global::Sdkpp.AOT.MonoPInvokeCallback(typeof(%s))]", csNativeDelegate(cb))
	w.line("static void %s_Impl(%s)", name, strings.Join(ps, ", "))
	w.line("{")
	w.line("try")
	w.line("{")
	if cb.Direct {
		w.line("%sSdkThread.Enter();", csNS)
	}
	w.line("// Take ownership of every argument first, so that nothing leaks whatever happens next.")
	w.lines(conv)
	w.line("%s __cb = %sCallbackRegistry.Get(__userData) as %s;", csCallbackRef(cb), csNS, csCallbackRef(cb))
	w.line("if (__cb == null)")
	w.line("{")
	w.lines(cleanup)
	w.line("return;")
	w.line("}")
	w.line("// The game's code runs without the gate, so that it may wait for a thread that calls the SDK.")
	w.line("int __held = %sGate.Release();", csNS)
	w.line("try")
	w.line("{")
	w.line("__cb(%s);", strings.Join(args, ", "))
	w.line("}")
	w.line("finally")
	w.line("{")
	w.line("%sGate.Reacquire(__held);", csNS)
	w.line("}")
	w.line("}")
	w.line("catch (global::System.Exception __e)")
	w.line("{")
	w.line("%sCallbackRegistry.Report(\"callback %s.%s\", __e);", csNS, cb.Owner.Name, cb.Name)
	w.line("}")
	w.line("}")
}

// csOptElem is t's element when t is optional, else t.
func csOptElem(t *desc.Type) *desc.Type {
	if t.Kind == desc.Opt {
		return t.Elem
	}
	return t
}
