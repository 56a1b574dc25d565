package main

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"sdkpp/build/gen/desc"
)

// emitCoreEnums writes core/api_gen.go: the version, the callback types, the class-level
// functions that follow from the description, and the enums as aliases of core/records' with
// their values.
func emitCoreEnums(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("// %s\n\npackage core\n\nimport \"sdkpp/core/records\"\n\n", generatedNote)
	w("// Version of the described surface.\nconst (\n\tVersionMajor = %d\n\tVersionMinor = %d\n\tVersionPatch = %d\n)\n\n",
		api.Version[0], api.Version[1], api.Version[2])
	for _, c := range api.Classes {
		for _, cb := range c.Callbacks {
			var ps []string
			for _, p := range cb.Params {
				ps = append(ps, goIdent(p.Name)+" "+strings.ReplaceAll(goCore(p.Type), "core.", ""))
			}
			writeGoDoc(&b, cb.GoName(), cb.Doc)
			w("type %s = func(%s)\n\n", cb.GoName(), strings.Join(ps, ", "))
		}
	}
	for _, c := range api.Classes {
		for _, m := range c.Methods {
			if f := mechanicalStatic(m); f != "" {
				writeGoDoc(&b, c.Name+m.Name, m.Doc)
				w("%s\n\n", f)
			}
		}
	}
	for _, e := range api.Enums {
		g := e.GoName()
		writeGoDoc(&b, g, e.Doc)
		w("type %s = records.%s\n\n", g, g)
		w("// Values of %s.\nconst (\n", g)
		for _, v := range e.Values {
			w("\t%s%s = records.%s%s\n", g, v.Name, g, v.Name)
		}
		w(")\n\n")
	}
	return b.String()
}

// emitRecordsEnums writes core/records/enums_gen.go: the Go enum types with String and Valid.
func emitRecordsEnums(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("// %s\n\npackage records\n\n", generatedNote)
	for _, e := range api.Enums {
		g := e.GoName()
		writeGoDoc(&b, g, e.Doc)
		w("type %s int32\n\n", g)
		w("// Values of %s.\nconst (\n", g)
		for _, v := range e.Values {
			w("\t%s%s %s = %d\n", g, v.Name, g, v.Value)
		}
		w(")\n\n")
		w("// String returns the enumerator's name, or \"unknown\".\nfunc (e %s) String() string {\n\tswitch e {\n", g)
		for _, v := range e.Values {
			w("\tcase %s%s:\n\t\treturn %q\n", g, v.Name, v.Name)
		}
		w("\t}\n\treturn \"unknown\"\n}\n\n")
		if e.Open {
			w("// Valid reports true: every value of the open enum %s is valid.\nfunc (e %s) Valid() bool {\n\treturn true\n}\n\n", g, g)
		} else {
			w("// Valid reports whether e is one of the enumerators.\nfunc (e %s) Valid() bool {\n\treturn e.String() != \"unknown\"\n}\n\n", g)
		}
	}
	return b.String()
}

// emitCoreRecordAliases writes core/records_gen.go: each record of core/records under its name
// in core, with the constructor of those the game may construct.
func emitCoreRecordAliases(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("// %s\n\npackage core\n\nimport \"sdkpp/core/records\"\n", generatedNote)
	for _, c := range api.Classes {
		if c.Kind != desc.KindRecord {
			continue
		}
		w("\n")
		writeGoDoc(&b, c.Name, c.Doc)
		w("type %s = records.%s\n", c.Name, c.Name)
		if c.Ctor {
			w("\n// New%s returns a new %s (records.New%s).\nfunc New%s() *%s { return records.New%s() }\n",
				c.Name, c.Name, c.Name, c.Name, c.Name, c.Name)
		}
	}
	return b.String()
}

func writeGoDoc(b *strings.Builder, name string, doc []string) {
	if len(doc) == 0 {
		fmt.Fprintf(b, "// %s is described in api/sdkpp.api.\n", name)
		return
	}
	for i, d := range doc {
		if i == 0 {
			fmt.Fprintf(b, "// %s: %s\n", name, d)
			continue
		}
		fmt.Fprintf(b, "// %s\n", d)
	}
}

// goCType is the cgo type of a C value type.
func goCType(t *desc.Type) string {
	switch t.Kind {
	case desc.Prim:
		if t.Prim == "string" {
			return "C.Sdkpp_String"
		}
		return "C." + cPrim[t.Prim]
	case desc.EnumT:
		return "C." + cEnum(t.Enum)
	case desc.ClassT:
		return "C." + cClass(t.Class)
	case desc.List:
		return "C." + cSpan(t.Elem)
	case desc.Props:
		return "C.Sdkpp_Properties"
	}
	panic("goCType")
}

// goCIn is the cgo type of an input parameter.
func goCIn(t *desc.Type) string {
	switch t.Kind {
	case desc.ClassT:
		return "*" + goCType(t)
	case desc.Opt:
		return "*" + goCType(t.Elem)
	}
	return goCType(t)
}

// goCore is the Go type core uses for t.
func goCore(t *desc.Type) string {
	switch t.Kind {
	case desc.Prim:
		return map[string]string{"bool": "bool", "u8": "uint8", "i16": "int16", "i32": "int32", "u32": "uint32",
			"u64": "uint64", "float": "float32", "string": "string"}[t.Prim]
	case desc.EnumT:
		return "core." + t.Enum.GoName()
	case desc.ClassT:
		return "*core." + t.Class.Name
	case desc.List:
		return "[]" + goCore(t.Elem)
	case desc.Props:
		return "map[string]string"
	case desc.CallbackT:
		return "core.Callback[core." + t.Callback.GoName() + "]"
	case desc.Samples:
		return "[]int16"
	case desc.Out:
		return "*" + goCore(t.Elem)
	case desc.Opt:
		if t.Elem.Kind == desc.ClassT {
			return goCore(t.Elem)
		}
		return "*" + goCore(t.Elem)
	}
	panic("goCore")
}

type capiWriter struct {
	b strings.Builder
}

func (cw *capiWriter) w(format string, a ...any) { fmt.Fprintf(&cw.b, format, a...) }

// emitCapi writes capi/exports_gen.go: one //export function per C function.
func emitCapi(api *desc.API) string {
	cw := &capiWriter{}
	cw.w("// %s\n\npackage main\n\n/*\n#include \"sdkpp.h\"\n\n", generatedNote)
	cw.w("// capi/internal/hookrelay: runs fn(arg) on the calling thread's companion thread.\n")
	cw.w("void sdkpp_hook_relay(void (*fn)(void*), void* arg);\n\n")
	for _, c := range api.Classes {
		for _, cb := range c.Callbacks {
			cw.trampoline(cb)
		}
	}
	cw.w("*/\nimport \"C\"\n\nimport (\n\t\"unsafe\"\n\n\t\"sdkpp/capi/internal/handle\"\n\t\"sdkpp/core\"\n)\n\n")
	cw.w("var _ = unsafe.Pointer(nil)\n\n")
	cw.w("// abiVersion is SDKPP_ABI_VERSION of the header generated with this file. It lives here\n")
	cw.w("// too so that a changed header always changes this package and rebuilds the library.\n")
	cw.w("const abiVersion = %d\n\n", abiVersion(api))
	cw.w("// Type tags of the object table, one per class: a hash of its name (desc.TagOf), so\n// reordering the description never changes them.\nconst (\n")
	for _, c := range api.Classes {
		cw.w("\ttype%s handle.Type = %d\n", c.Name, c.TypeID)
	}
	cw.w(")\n\n")
	cw.w("// typeNames names each type tag for error messages.\nvar typeNames = map[handle.Type]string{\n")
	for _, c := range api.Classes {
		cw.w("\ttype%s: %q,\n", c.Name, c.Name)
	}
	cw.w("}\n\n")
	for _, c := range api.Classes {
		cw.class(c)
	}
	return cw.b.String()
}

// trampoline writes the static C function through which Go calls a game's callback.
func (cw *capiWriter) trampoline(cb *desc.Callback) {
	var params, args, pre []string
	params = append(params, cCallback(cb)+" cb")
	for _, p := range cb.Params {
		switch {
		case p.Type.Kind == desc.ClassT:
			params = append(params, "uintptr_t "+p.Name)
			pre = append(pre, fmt.Sprintf("%s %s_obj; %s_obj.opaque = (void*)%s;", cClass(p.Type.Class), p.Name, p.Name, p.Name))
			args = append(args, "&"+p.Name+"_obj")
		case p.Type.Kind == desc.Opt && p.Type.Elem.Kind == desc.ClassT:
			params = append(params, "bool "+p.Name+"_has", "uintptr_t "+p.Name)
			pre = append(pre, fmt.Sprintf("%s %s_obj; %s_obj.opaque = (void*)%s;", cClass(p.Type.Elem.Class), p.Name, p.Name, p.Name))
			args = append(args, p.Name+"_has ? &"+p.Name+"_obj : NULL")
		case p.Type.Kind == desc.Opt:
			params = append(params, "bool "+p.Name+"_has", cValue(p.Type.Elem)+" "+p.Name)
			args = append(args, p.Name+"_has ? &"+p.Name+" : NULL")
		case p.Type.Kind == desc.Samples || p.Type.Kind == desc.Out:
			params = append(params, cCallbackArg(p.Type)+" "+p.Name)
			args = append(args, p.Name)
		default:
			params = append(params, cValue(p.Type)+" "+p.Name)
			args = append(args, p.Name)
		}
	}
	params = append(params, "uintptr_t userData")
	args = append(args, "(void*)userData")
	if cb.Direct {
		cw.relayTrampoline(cb, params, pre)
		return
	}
	cw.w("static inline void sdkpp_call_%s(%s) {\n", cb.FullName(), strings.Join(params, ", "))
	for _, p := range pre {
		cw.w("\t%s\n", p)
	}
	cw.w("\tcb(%s);\n}\n\n", strings.Join(args, ", "))
}

// relayTrampoline writes the C function through which Go calls a direct (audio-thread) callback:
// it packs the arguments and has the calling thread's companion make the call
// (capi/internal/hookrelay), so that the thread that runs the audio processing in Go never runs
// the game's code and a managed runtime never attaches it.
func (cw *capiWriter) relayTrampoline(cb *desc.Callback, params, pre []string) {
	for _, p := range cb.Params {
		if len(pre) > 0 || p.Type.Kind == desc.Opt || p.Type.Kind == desc.ClassT {
			panic("emit_go: direct callback " + cb.FullName() + " takes an object or an optional value, which a relayed call does not carry")
		}
	}
	name := cb.FullName()
	cw.w("typedef struct {\n")
	var fields, args []string
	for _, p := range params {
		cw.w("\t%s;\n", p)
		fields = append(fields, p[strings.LastIndexAny(p, " *")+1:])
	}
	cw.w("} sdkpp_args_%s;\n\n", name)
	for _, f := range fields[1:] {
		if f == "userData" {
			args = append(args, "(void*)a->userData")
		} else {
			args = append(args, "a->"+f)
		}
	}
	cw.w("static inline void sdkpp_relayed_%s(void* p) {\n", name)
	cw.w("\tsdkpp_args_%s* a = p;\n\ta->cb(%s);\n}\n\n", name, strings.Join(args, ", "))
	cw.w("static inline void sdkpp_call_%s(%s) {\n", name, strings.Join(params, ", "))
	cw.w("\tsdkpp_args_%s a = {%s};\n", name, strings.Join(fields, ", "))
	cw.w("\tsdkpp_hook_relay(sdkpp_relayed_%s, &a);\n}\n\n", name)
}

func (cw *capiWriter) class(c *desc.Class) {
	g := "*core." + c.Name
	record := c.Kind == desc.KindRecord
	cw.w("// get%s finds the %s behind self, or logs why it cannot.\n", c.Name, c.Name)
	cw.w("func get%s(fn string, self *C.%s) (%s, *handle.Entry, bool) {\n", c.Name, cClass(c), g)
	cw.w("\te, ok := lookup(fn, unsafe.Pointer(self), type%s)\n\tif !ok {\n\t\treturn nil, nil, false\n\t}\n", c.Name)
	cw.w("\treturn e.Value.(%s), e, true\n}\n\n", g)

	if c.Ctor {
		cw.export(cClass(c)+"_Init", "self *C."+cClass(c), "")
		cw.w("\tif self == nil {\n\t\trefuse(fn, \"self is NULL\")\n\t\treturn\n\t}\n")
		cw.w("\tsetID(unsafe.Pointer(self), 0)\n")
		cw.w("\tadd(fn, unsafe.Pointer(self), type%s, core.New%s())\n}\n\n", c.Name, c.Name)
	}
	for _, m := range c.Ctors {
		params := []string{"self *C." + cClass(c)}
		params = append(params, cw.goParams(m.Params)...)
		cw.export(cClass(c)+"_"+m.Name, strings.Join(params, ", "), "")
		cw.w("\tif self == nil {\n\t\trefuse(fn, \"self is NULL\")\n\t\treturn\n\t}\n")
		cw.w("\tsetID(unsafe.Pointer(self), 0)\n")
		args := cw.convertParams(m.Params, "")
		cw.w("\tadd(fn, unsafe.Pointer(self), type%s, core.New%s%s(%s))\n}\n\n", c.Name, c.Name,
			strings.TrimPrefix(m.Name, "Init"), strings.Join(args, ", "))
	}

	cw.export(cClass(c)+"_Drop", "self *C."+cClass(c), "")
	if c.Kind == desc.KindClient {
		cw.w("\tif v, ok := drop(fn, unsafe.Pointer(self), type%s); ok {\n\t\tv.(%s).Close()\n\t}\n}\n\n", c.Name, g)
	} else {
		cw.w("\tdrop(fn, unsafe.Pointer(self), type%s)\n}\n\n", c.Name)
	}

	if !c.NoCopy {
		cw.export(cClass(c)+"_Clone", "self *C."+cClass(c)+", other *C."+cClass(c), "")
		cw.w("\tif self == nil {\n\t\trefuse(fn, \"self is NULL\")\n\t\treturn\n\t}\n")
		entry := "e"
		if !record {
			entry = "_" // only records lock their entry
		}
		cw.w("\to, %s, ok := get%s(fn, other)\n\tsetID(unsafe.Pointer(self), 0)\n\tif !ok {\n\t\treturn\n\t}\n", entry, c.Name)
		cw.lock(record, "e")
		cw.w("\tv := o.Clone()\n")
		cw.unlock(record, "e")
		cw.w("\tadd(fn, unsafe.Pointer(self), type%s, v)\n}\n\n", c.Name)
	}

	for _, p := range c.Props {
		cw.method(c, &desc.Method{Class: c, Name: p.Name, Ret: p.Type, Const: true})
		if !p.ReadOnly {
			cw.method(c, &desc.Method{Class: c, Name: "Set" + p.Name, Params: []desc.Param{{Name: "value", Type: p.Type}}})
		}
	}
	for _, m := range c.Methods {
		cw.method(c, m)
	}
}

// export opens an exported function; the body that follows has `fn` and a panic guard.
func (cw *capiWriter) export(name, params, ret string) {
	cw.w("//export %s\nfunc %s(%s) %s {\n", name, name, params, ret)
	cw.w("\tconst fn = %q\n\tdefer guard(fn)\n", strings.TrimPrefix(name, "Sdkpp_"))
}

func (cw *capiWriter) lock(record bool, e string) {
	if record {
		cw.w("\t%s.Mu.Lock()\n", e)
	}
}

func (cw *capiWriter) unlock(record bool, e string) {
	if record {
		cw.w("\t%s.Mu.Unlock()\n", e)
	}
}

// goParams renders the Go parameters of an export.
func (cw *capiWriter) goParams(params []desc.Param) []string {
	var out []string
	for _, p := range params {
		if p.Type.Kind == desc.CallbackT {
			n := goIdent(p.Name)
			out = append(out, n+" C."+cCallback(p.Type.Callback),
				n+"__userDataFree C.Sdkpp_FreeFn", n+"__userData unsafe.Pointer")
			continue
		}
		out = append(out, goIdent(p.Name)+" "+goCIn(p.Type))
	}
	return out
}

// goIdent makes a described name usable as a Go identifier.
func goIdent(name string) string {
	switch name {
	case "break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough", "for",
		"func", "go", "goto", "if", "import", "interface", "map", "package", "range", "return", "select",
		"struct", "switch", "type", "var", "fn", "e", "o", "ok", "v":
		return name + "_"
	}
	return name
}

// zeroOf is the default return of a direct-return type.
func zeroOf(t *desc.Type) string {
	if t.Kind == desc.Prim && t.Prim == "bool" {
		return "false"
	}
	return "0"
}

// convertParams writes the code that turns C arguments into core values (returning the
// function's zero value on bad input) and returns the Go argument expressions.
func (cw *capiWriter) convertParams(params []desc.Param, fail string) []string {
	var args []string
	for _, p := range params {
		n := goIdent(p.Name)
		v := "arg_" + n
		t := p.Type
		switch t.Kind {
		case desc.Prim:
			if t.Prim == "string" {
				cw.w("\t%s, ok := goString(fn, %q, %s)\n\tif !ok {\n\t\treturn%s\n\t}\n", v, n, n, fail)
			} else {
				cw.w("\t%s := %s(%s)\n", v, goCore(t), n)
			}
		case desc.EnumT:
			cw.w("\t%s := %s(%s)\n\tif !%s.Valid() {\n\t\trefuse(fn, \"%s: %%d is not a value of %s\", int64(%s))\n\t\treturn%s\n\t}\n",
				v, goCore(t), n, v, n, t.Enum.CppName(), n, fail)
		case desc.ClassT:
			cw.w("\t%s_o, %s_e, ok := get%s(fn+\": %s\", %s)\n\tif !ok {\n\t\treturn%s\n\t}\n", v, v, t.Class.Name, n, n, fail)
			cw.lock(t.Class.Kind == desc.KindRecord, v+"_e")
			cw.w("\t%s := %s_o.Clone()\n", v, v)
			cw.unlock(t.Class.Kind == desc.KindRecord, v+"_e")
		case desc.Opt:
			e := t.Elem
			cw.w("\tvar %s %s\n\tif %s != nil {\n", v, goCore(t), n)
			switch e.Kind {
			case desc.Prim:
				if e.Prim == "string" {
					cw.w("\t\ts, ok := goString(fn, %q, *%s)\n\t\tif !ok {\n\t\t\treturn%s\n\t\t}\n\t\t%s = &s\n", n, n, fail, v)
				} else {
					cw.w("\t\tx := %s(*%s)\n\t\t%s = &x\n", goCore(e), n, v)
				}
			case desc.EnumT:
				cw.w("\t\tx := %s(*%s)\n\t\tif !x.Valid() {\n\t\t\trefuse(fn, \"%s: %%d is not a value of %s\", int64(x))\n\t\t\treturn%s\n\t\t}\n\t\t%s = &x\n",
					goCore(e), n, n, e.Enum.CppName(), fail, v)
			case desc.ClassT:
				cw.w("\t\to, e, ok := get%s(fn+\": %s\", %s)\n\t\tif !ok {\n\t\t\treturn%s\n\t\t}\n", e.Class.Name, n, n, fail)
				cw.lock(e.Class.Kind == desc.KindRecord, "e")
				cw.w("\t\t%s = o.Clone()\n", v)
				cw.unlock(e.Class.Kind == desc.KindRecord, "e")
			default:
				panic("opt of " + fmt.Sprint(e.Kind))
			}
			cw.w("\t}\n")
		case desc.Props:
			cw.w("\t%s, ok := goProperties(fn, %q, %s)\n\tif !ok {\n\t\treturn%s\n\t}\n", v, n, n, fail)
		case desc.List:
			if t.Elem.Kind == desc.ClassT {
				cl := t.Elem.Class
				cw.w("\tvar %s %s\n\tif !goSpan(fn, %q, unsafe.Pointer(%s.ptr), uint64(%s.size)) {\n\t\treturn%s\n\t}\n",
					v, goCore(t), n, n, n, fail)
				cw.w("\tfor i, el := range unsafe.Slice(%s.ptr, int(%s.size)) {\n", n, n)
				cw.w("\t\to, e, ok := get%s(fn+\": %s element\", &el)\n\t\tif !ok {\n\t\t\t_ = i\n\t\t\treturn%s\n\t\t}\n", cl.Name, n, fail)
				cw.lock(cl.Kind == desc.KindRecord, "e")
				cw.w("\t\t%s = append(%s, o.Clone())\n", v, v)
				cw.unlock(cl.Kind == desc.KindRecord, "e")
				cw.w("\t}\n")
			} else {
				cw.w("\t%s, ok := goUint64s(fn, %q, unsafe.Pointer(%s.ptr), uint64(%s.size))\n\tif !ok {\n\t\treturn%s\n\t}\n", v, n, n, n, fail)
			}
		case desc.CallbackT:
			cw.callbackArg(p, fail)
		}
		args = append(args, v)
	}
	return args
}

// callbackArg wraps a C callback triple into a core.Callback. The userData is freed right away
// when the call is refused, and otherwise once core releases the callback.
func (cw *capiWriter) callbackArg(p desc.Param, fail string) {
	n := goIdent(p.Name)
	cb := p.Type.Callback
	cw.w("\tif %s == nil {\n\t\trefuse(fn, \"%s is NULL\")\n\t\treturn%s\n\t}\n", n, n, fail)
	var params, args, pre []string
	for _, cp := range cb.Params {
		cn := goIdent(cp.Name)
		params = append(params, cn+" "+goCore(cp.Type))
		t := cp.Type
		switch {
		case t.Kind == desc.Samples:
			// Go memory without pointers, valid for the C call only: the game edits it in place.
			args = append(args, fmt.Sprintf("(*C.int16_t)(unsafe.Pointer(unsafe.SliceData(%s)))", cn))
		case t.Kind == desc.Out:
			args = append(args, fmt.Sprintf("(*C.%s)(unsafe.Pointer(%s))", cPrim[t.Elem.Prim], cn))
		case t.Kind == desc.Props:
			args = append(args, "cProperties("+cn+")")
		case t.Kind == desc.List && t.Elem.Kind == desc.ClassT:
			// The callback adopts every handle of the span and frees the span.
			pre = append(pre, fmt.Sprintf("%s_ptr, %s_n := cObjects(type%s, len(%s), func(i int) any { return %s[i] })", cn, cn, t.Elem.Class.Name, cn, cn))
			args = append(args, fmt.Sprintf("C.%s{ptr: (*C.%s)(%s_ptr), size: C.size_t(%s_n)}", cSpan(t.Elem), cClass(t.Elem.Class), cn, cn))
		case t.Kind == desc.List:
			pre = append(pre, fmt.Sprintf("%s_ptr, %s_n := cUint64s(%s)", cn, cn, cn))
			args = append(args, fmt.Sprintf("C.Sdkpp_UInt64Span{ptr: (*C.uint64_t)(%s_ptr), size: C.size_t(%s_n)}", cn, cn))
		case t.Kind == desc.ClassT:
			args = append(args, fmt.Sprintf("C.uintptr_t(addAdopted(type%s, %s))", t.Class.Name, cn))
		case t.Kind == desc.Opt && t.Elem.Kind == desc.ClassT:
			args = append(args, fmt.Sprintf("C.bool(%s != nil)", cn),
				fmt.Sprintf("C.uintptr_t(addAdoptedOpt(type%s, %s))", t.Elem.Class.Name, cn))
		case t.Kind == desc.Opt:
			panic("optional scalar callback arguments are not supported yet")
		case t.IsString():
			args = append(args, "cString("+cn+")")
		case t.Kind == desc.EnumT:
			args = append(args, fmt.Sprintf("C.%s(%s)", cEnum(t.Enum), cn))
		case t.Kind == desc.Prim:
			args = append(args, fmt.Sprintf("C.%s(%s)", cPrim[t.Prim], cn))
		default:
			panic("callback argument kind not supported yet")
		}
	}
	args = append([]string{n}, args...)
	args = append(args, n+"_ud")
	body := ""
	for _, s := range pre {
		body += "\t\t\t" + s + "\n"
	}
	cw.w("\targ_%s := core.Callback[core.%s]{\n\t\tFn: func(%s) {\n%s\t\t\tC.sdkpp_call_%s(%s)\n\t\t},\n\t\tRelease: %s_release,\n\t}\n",
		n, cb.GoName(), strings.Join(params, ", "), body, cb.FullName(), strings.Join(args, ", "), n)
}

// method writes a getter, a setter or a method.
func (cw *capiWriter) method(c *desc.Class, m *desc.Method) {
	record := c.Kind == desc.KindRecord
	var params []string
	if !m.Static {
		params = append(params, "self *C."+cClass(c))
	}
	params = append(params, cw.goParams(m.Params)...)
	ret, out := "", ""
	if m.Ret != nil {
		switch {
		case returnsDirect(m.Ret):
			ret = goCType(m.Ret)
		case m.Ret.Kind == desc.Opt:
			ret = "C.bool"
			out = "*" + goCType(m.Ret.Elem)
		default:
			out = "*" + goCType(m.Ret)
		}
	}
	if out != "" {
		params = append(params, "returnValue "+out)
	}
	cw.export(cClass(c)+"_"+m.Name, strings.Join(params, ", "), ret)
	fail := ""
	if ret != "" {
		fail = " " + zeroOf(m.Ret)
		if m.Ret.Kind == desc.Opt {
			fail = " false"
		}
	}
	hasCallback := false
	for _, p := range m.Params {
		if p.Type.Kind == desc.CallbackT {
			hasCallback = true
		}
	}
	if hasCallback {
		// Until the call is accepted, every refusal hands userData back at once.
		cw.w("\taccepted := false\n")
		for _, p := range m.Params {
			if p.Type.Kind != desc.CallbackT {
				continue
			}
			n := goIdent(p.Name)
			cw.w("\t%s_ud := C.uintptr_t(uintptr(%s__userData))\n", n, n)
			cw.w("\t%s_release := userDataReleaser(%s__userDataFree, %s_ud)\n", n, n, n)
			cw.w("\tdefer func() {\n\t\tif !accepted {\n\t\t\t%s_release()\n\t\t}\n\t}()\n", n)
		}
	}
	if out != "" {
		cw.w("\tif returnValue == nil {\n\t\trefuse(fn, \"returnValue is NULL\")\n\t\treturn%s\n\t}\n", fail)
		if m.Ret.Kind == desc.ClassT || (m.Ret.Kind == desc.Opt && m.Ret.Elem.Kind == desc.ClassT) {
			cw.w("\tsetID(unsafe.Pointer(returnValue), 0)\n")
		} else if elem := optElem(m.Ret); returnsDirect(elem) {
			cw.w("\t*returnValue = 0\n")
		} else {
			cw.w("\t*returnValue = %s{}\n", strings.TrimPrefix(out, "*"))
		}
	}
	recv := "core"
	if !m.Static {
		cw.w("\to, e, ok := get%s(fn, self)\n\tif !ok {\n\t\treturn%s\n\t}\n\t_ = e\n", c.Name, fail)
		recv = "o"
	}
	args := cw.convertParams(m.Params, fail)
	call := fmt.Sprintf("%s.%s(%s)", recv, m.Name, strings.Join(args, ", "))
	if m.Static {
		call = fmt.Sprintf("core.%s%s(%s)", c.Name, m.Name, strings.Join(args, ", "))
	}
	if hasCallback {
		cw.w("\taccepted = true\n")
	}
	lockIt := record && !m.Static
	if m.Ret == nil {
		cw.lock(lockIt, "e")
		cw.w("\t%s\n", call)
		cw.unlock(lockIt, "e")
		cw.w("}\n\n")
		return
	}
	t := m.Ret
	if t.Kind == desc.Opt && t.Elem.Kind != desc.ClassT {
		cw.lock(lockIt, "e")
		cw.w("\tv, has := %s\n", call)
		cw.unlock(lockIt, "e")
		cw.w("\tif !has {\n\t\treturn false\n\t}\n")
		cw.w("\t%s\n\treturn true\n}\n\n", outAssign(t.Elem, "v"))
		return
	}
	cw.lock(lockIt, "e")
	cw.w("\tv := %s\n", call)
	cw.unlock(lockIt, "e")
	switch {
	case t.Kind == desc.Opt:
		cw.w("\tif v == nil {\n\t\treturn false\n\t}\n\tadd(fn, unsafe.Pointer(returnValue), type%s, v)\n\treturn true\n}\n\n", t.Elem.Class.Name)
	case returnsDirect(t):
		cw.w("\treturn %s(v)\n}\n\n", goCType(t))
	default:
		cw.w("\t%s\n}\n\n", outAssign(t, "v"))
	}
}

// outAssign writes v into *returnValue.
func outAssign(t *desc.Type, v string) string {
	switch t.Kind {
	case desc.Prim:
		if t.Prim == "string" {
			return "*returnValue = cString(" + v + ")"
		}
		return "*returnValue = " + goCType(t) + "(" + v + ")"
	case desc.EnumT:
		return "*returnValue = " + goCType(t) + "(" + v + ")"
	case desc.ClassT:
		// A nil object (StartCall refused, say) leaves returnValue invalid.
		return fmt.Sprintf("if %s != nil {\n\t\tadd(fn, unsafe.Pointer(returnValue), type%s, %s)\n\t}", v, t.Class.Name, v)
	case desc.Props:
		return "*returnValue = cProperties(" + v + ")"
	case desc.List:
		if t.Elem.Kind == desc.ClassT {
			// An array of handle structs, each holding a new id the caller adopts.
			return fmt.Sprintf("ptr, n := cObjects(type%s, len(%s), func(i int) any { return %s[i] })\n"+
				"\t*returnValue = C.%s{ptr: (*C.%s)(ptr), size: C.size_t(n)}", t.Elem.Class.Name, v, v, cSpan(t.Elem), cClass(t.Elem.Class))
		}
		return "ptr, n := cUint64s(" + v + ")\n\t*returnValue = C.Sdkpp_UInt64Span{ptr: (*C.uint64_t)(ptr), size: C.size_t(n)}"
	}
	panic("outAssign")
}

// optElem is t's element when t is optional, else t.
func optElem(t *desc.Type) *desc.Type {
	if t.Kind == desc.Opt {
		return t.Elem
	}
	return t
}

// emitCoreRecords writes core/records/records_gen.go: every record's struct (one field per
// property, named by recordField), its constructor and Clone, and the getters and setters of its
// properties. A record marked custom has its struct, constructor and Clone written by hand in
// core/records, one marked defaults its constructor; a property marked custom has hand-written
// accessors.
func emitCoreRecords(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, c := range api.Classes {
		if c.Kind != desc.KindRecord {
			continue
		}
		r := recordRecv(c.Name)
		if !c.Custom {
			b.WriteString(recordStruct(c))
		}
		for _, p := range c.Props {
			if p.Custom {
				continue
			}
			f := r + "." + recordField(p.Name)
			get, set := recordAccess(p.Type, f)
			w("\n")
			writeGoDoc(&b, p.Name, p.Doc)
			w("func (%s *%s) %s() %s {\n\t%s\n}\n", r, c.Name, p.Name, getterType(p.Type), get)
			if p.ReadOnly {
				continue
			}
			w("\n// Set%s sets %s.\n", p.Name, p.Name)
			w("func (%s *%s) Set%s(v %s) {\n", r, c.Name, p.Name, strings.ReplaceAll(goCore(p.Type), "core.", ""))
			if p.Secret {
				if p.Type.Kind != desc.Prim || p.Type.Prim != "string" {
					panic("emit_go: secret property " + c.Name + "." + p.Name + " is not a string")
				}
				w("\tredact.Secrets.Add(v)\n")
			}
			w("\t%s\n}\n", set)
		}
	}
	var imports []string
	for _, pkg := range []string{"sdkpp/core/internal/opt", "sdkpp/core/redact"} {
		if strings.Contains(b.String(), path.Base(pkg)+".") {
			imports = append(imports, strconv.Quote(pkg))
		}
	}
	return fmt.Sprintf("// %s\n\npackage records\n\nimport (\n%s\n)\n", generatedNote, strings.Join(imports, "\n")) + b.String()
}

// recordRecv is the receiver name of a record's methods: its first letter, lowered.
func recordRecv(class string) string { return strings.ToLower(class[:1]) }

// recordField is the struct field that holds property name: its name with the first letter
// lowered ("type" becomes typ).
func recordField(name string) string {
	f := strings.ToLower(name[:1]) + name[1:]
	if f == "type" {
		return "typ"
	}
	return f
}

// getterType is the result of a record's getter of type t.
func getterType(t *desc.Type) string {
	g := strings.ReplaceAll(goCore(t), "core.", "")
	if t.Kind == desc.Opt && t.Elem.Kind != desc.ClassT {
		return "(" + strings.TrimPrefix(g, "*") + ", bool)"
	}
	if t.Kind == desc.ClassT {
		return "*" + strings.TrimPrefix(g, "*")
	}
	return g
}

// recordAccess returns the bodies of the getter and the setter of a property of type t held in
// field f. Records are value snapshots: getters return copies, setters store copies.
func recordAccess(t *desc.Type, f string) (get, set string) {
	switch {
	case t.Kind == desc.Prim || t.Kind == desc.EnumT:
		return "return " + f, f + " = v"
	case t.Kind == desc.ClassT: // held by value
		return "return " + f + ".Clone()", f + " = *v.Clone()"
	case t.Kind == desc.Opt && t.Elem.Kind == desc.ClassT:
		return "if " + f + " == nil {\n\t\treturn nil\n\t}\n\treturn " + f + ".Clone()",
			"if v == nil {\n\t\t" + f + " = nil\n\t\treturn\n\t}\n\t" + f + " = v.Clone()"
	case t.Kind == desc.Opt:
		return "return opt.Of(" + f + ")", f + " = opt.Clone(v)"
	}
	panic("emit_go: a record property of kind " + fmt.Sprint(t.Kind) + " is not supported")
}

// handlerSetters are the Client's methods that only fill a slot with a game's callback:
// Set...Callback(cb) of the client class, not marked custom.
func handlerSetters(api *desc.API) []*desc.Method {
	var out []*desc.Method
	for _, c := range api.Classes {
		if c.Kind != desc.KindClient {
			continue
		}
		for _, m := range c.Methods {
			if !m.Custom && m.Ret == nil && !m.Static && len(m.Params) == 1 && m.Params[0].Type.Kind == desc.CallbackT &&
				strings.HasPrefix(m.Name, "Set") && strings.HasSuffix(m.Name, "Callback") {
				out = append(out, m)
			}
		}
	}
	return out
}

// handlerSlot is the field of the handlers struct that SetXCallback fills: x.
func handlerSlot(m *desc.Method) string {
	return recordField(strings.TrimSuffix(strings.TrimPrefix(m.Name, "Set"), "Callback"))
}

// emitCoreHandlers writes core/handlers_gen.go: the Client's handler slots, one per
// Set...Callback of the description, and the methods that fill them.
func emitCoreHandlers(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("// %s\n\npackage core\n\n", generatedNote)
	setters := handlerSetters(api)
	w("// handlers are the Client's replaceable game callbacks: one slot per Set...Callback method of\n")
	w("// the description. Each slot locks itself, with a leaf lock.\ntype handlers struct {\n")
	for _, m := range setters {
		w("\t%s handlerSlot[%s]\n", handlerSlot(m), m.Params[0].Type.Callback.GoName())
	}
	w("}\n")
	for _, m := range setters {
		w("\n")
		writeGoDoc(&b, m.Name, m.Doc)
		w("func (c *Client) %s(cb Callback[%s]) {\n\tsetHandler(c, &c.handlers.%s, cb)\n}\n",
			m.Name, m.Params[0].Type.Callback.GoName(), handlerSlot(m))
	}
	return b.String()
}

// mechanicalStatic is the Go of a class-level function that follows from the description alone,
// or "": an enum's XToString(e) (its name) and the client's GetVersionMajor, Minor and Patch.
func mechanicalStatic(m *desc.Method) string {
	if !m.Static || m.Ret == nil {
		return ""
	}
	name := m.Class.Name + m.Name
	if len(m.Params) == 1 && m.Params[0].Type.Kind == desc.EnumT && m.Ret.IsString() && strings.HasSuffix(m.Name, "ToString") {
		return fmt.Sprintf("func %s(e %s) string { return e.String() }", name, m.Params[0].Type.Enum.GoName())
	}
	if m.Class.Kind == desc.KindClient && len(m.Params) == 0 {
		switch m.Name {
		case "GetVersionMajor", "GetVersionMinor", "GetVersionPatch":
			return fmt.Sprintf("func %s() int32 { return Version%s }", name, strings.TrimPrefix(m.Name, "GetVersion"))
		}
	}
	return ""
}

// recordStruct is the Go of a record's struct, its constructor (unless the record is marked
// defaults or the game cannot construct it) and its deep Clone (unless nocopy).
func recordStruct(c *desc.Class) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	r := recordRecv(c.Name)
	w("\n")
	writeGoDoc(&b, c.Name, c.Doc)
	w("type %s struct {\n", c.Name)
	var clone []string
	for _, p := range c.Props {
		f := recordField(p.Name)
		switch t := p.Type; {
		case t.Kind == desc.Prim || t.Kind == desc.EnumT:
			w("\t%s %s\n", f, strings.ReplaceAll(goCore(t), "core.", ""))
		case t.Kind == desc.ClassT:
			w("\t%s %s\n", f, t.Class.Name)
			clone = append(clone, fmt.Sprintf("out.%s = *%s.%s.Clone()", f, r, f))
		case t.Kind == desc.Opt && t.Elem.Kind == desc.ClassT:
			w("\t%s *%s\n", f, t.Elem.Class.Name)
			clone = append(clone, fmt.Sprintf("if %s.%s != nil {\n\t\tout.%s = %s.%s.Clone()\n\t}", r, f, f, r, f))
		case t.Kind == desc.Opt:
			w("\t%s %s\n", f, strings.ReplaceAll(goCore(t), "core.", ""))
			clone = append(clone, fmt.Sprintf("out.%s = opt.Clone(%s.%s)", f, r, f))
		default:
			panic("emit_go: record " + c.Name + " holds a property of kind " + fmt.Sprint(t.Kind) + "; mark it custom")
		}
	}
	w("}\n")
	if c.Ctor && !c.Defaults {
		w("\n// New%s returns an empty %s.\nfunc New%s() *%s { return &%s{} }\n", c.Name, c.Name, c.Name, c.Name, c.Name)
	}
	if !c.NoCopy {
		w("\n// Clone returns a deep copy.\nfunc (%s *%s) Clone() *%s {\n\tout := *%s\n", r, c.Name, c.Name, r)
		for _, l := range clone {
			w("\t%s\n", l)
		}
		w("\treturn &out\n}\n")
	}
	return b.String()
}

// emitCoreFacade writes core/facade_gen.go: each handle's Clone, the getters of the handles'
// properties that the side table build/gen/facade_bodies.txt maps to the Client's state with a Go
// expression of the receiver h, and the methods of the Client and the handles whose body is one
// Go expression there that forwards to the capability.
func emitCoreFacade(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, c := range api.Classes {
		if c.Kind != desc.KindHandle {
			continue
		}
		if !c.NoCopy {
			w("\n// Clone returns another view of the same %s.\nfunc (h *%s) Clone() *%s { v := *h; return &v }\n", c.Name, c.Name, c.Name)
		}
		for _, p := range c.Props {
			if p.Go == "" {
				continue
			}
			w("\n")
			writeGoDoc(&b, p.Name, p.Doc)
			w("func (h *%s) %s() %s { return %s }\n", c.Name, p.Name, getterType(p.Type), p.Go)
		}
	}
	for _, c := range api.Classes {
		recv := "h"
		if c.Kind == desc.KindClient {
			recv = "c"
		}
		for _, m := range c.Methods {
			if m.Go == "" {
				continue
			}
			var ps []string
			for _, p := range m.Params {
				ps = append(ps, goIdent(p.Name)+" "+strings.ReplaceAll(goCore(p.Type), "core.", ""))
			}
			ret, body := "", m.Go
			if m.Ret != nil {
				ret, body = " "+getterType(m.Ret), "return "+m.Go
			}
			w("\n")
			writeGoDoc(&b, m.Name, m.Doc)
			w("func (%s *%s) %s(%s)%s {\n\t%s\n}\n", recv, c.Name, m.Name, strings.Join(ps, ", "), ret, body)
		}
	}
	var imports []string
	for _, pkg := range facadeImports {
		if regexp.MustCompile(`(^|[^.\w])` + path.Base(pkg) + `\.`).MatchString(b.String()) {
			imports = append(imports, strconv.Quote(pkg))
		}
	}
	return fmt.Sprintf("// %s\n\npackage core\n\nimport (\n%s\n)\n", generatedNote, strings.Join(imports, "\n")) + b.String()
}

// facadeImports are the packages a Go expression of build/gen/facade_bodies.txt may name; facade_gen.go
// imports those its expressions use.
var facadeImports = []string{"net/http", "sdkpp/core/auth", "sdkpp/core/internal/opt", "sdkpp/core/launch", "sdkpp/core/lobbies", "sdkpp/core/messages", "sdkpp/core/records", "sdkpp/core/rest", "sdkpp/core/social", "sdkpp/core/voice", "sdkpp/wire"}
