package main

import (
	"fmt"
	"slices"
	"strings"

	"sdkpp/build/gen/desc"
)

// emitStress writes tests/c/stress_gen.h: for every exported function of sdkpp.h, a caller that
// makes up its arguments at random (forged, dropped, NULL and live objects, odd strings, sizes
// and enum values, callbacks with counted userData) and takes ownership of what it returns; a
// trampoline for every callback type that takes what it is given; and the table of all callers.
// tests/c/stress_test.c defines the helpers it uses (rnd_*, take_*, ud_new) and the callers of
// the runtime functions, which need hand-made arguments, and runs the table from several threads.
func emitStress(api *desc.API) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("/* %s */\n", generatedNote)
	w("/* Included once, by tests/c/stress_test.c, which defines what is declared but not defined here. */\n\n")

	w("enum {\n")
	for _, c := range api.Classes {
		w("    CLASS_%s,\n", c.Name)
	}
	w("    CLASS_COUNT\n};\n\n")
	w("static const char* const stress_class_names[CLASS_COUNT] = {\n")
	for _, c := range api.Classes {
		w("    %q,\n", c.Name)
	}
	w("};\n\n")
	w("/* stress_drop releases an object of each class by its id. */\n")
	for _, c := range api.Classes {
		w("static void stress_drop_%s(void* id)\n{\n    %s h = {id};\n    %s_Drop(&h);\n}\n", c.Name, cClass(c), cClass(c))
	}
	w("static void (*const stress_drop[CLASS_COUNT])(void*) = {\n")
	for _, c := range api.Classes {
		w("    stress_drop_%s,\n", c.Name)
	}
	w("};\n\n")

	w("/* The runtime's functions, called by hand-written callers. */\n")
	for _, f := range runtimeFuncs {
		w("static void call_%s(Rng* r);\n", f.Name)
	}
	w("\n/* Callback trampolines: each takes what it is given and counts its call on userData. */\n")
	for _, c := range api.Classes {
		for _, cb := range c.Callbacks {
			var ps []string
			for _, p := range cb.Params {
				ps = append(ps, cCallbackArg(p.Type)+" a_"+p.Name)
			}
			ps = append(ps, "void* userData")
			w("static void SDKPP_CALL stress_cb_%s(%s)\n{\n", cb.FullName(), strings.Join(ps, ", "))
			for _, p := range cb.Params {
				w("%s", stressTakeArg(p.Type, "a_"+p.Name))
			}
			w("    ud_called(userData);\n}\n")
		}
	}

	var names []string
	w("\n/* Callers of the exports of the description. */\n")
	for _, c := range api.Classes {
		for _, f := range stressFuncs(c) {
			names = append(names, f.name)
			w("static void call_%s(Rng* r)\n{\n    (void)r;\n%s}\n", f.name, f.body)
		}
	}
	want := []string{}
	for _, c := range api.Classes {
		for _, f := range functionsOf(c) {
			want = append(want, f.Name)
		}
	}
	if !slices.Equal(names, want) {
		panic(fmt.Sprintf("stress callers %v do not match the header's functions %v", names, want))
	}
	for _, f := range runtimeFuncs {
		names = append(names, f.Name)
	}
	w("\n/* Every export of sdkpp.h. */\nstatic const struct {\n    const char* name;\n    void (*call)(Rng*);\n} stress_calls[] = {\n")
	for _, n := range names {
		w("    {%q, call_%s},\n", n, n)
	}
	w("};\n#define STRESS_CALLS (sizeof stress_calls / sizeof stress_calls[0])\n")
	return b.String()
}

// stressFunc is the caller of one export.
type stressFunc struct {
	name string
	body string
}

// stressFuncs writes the callers of c's functions, in functionsOf's order.
func stressFuncs(c *desc.Class) []stressFunc {
	cn := cClass(c)
	var out []stressFunc
	newObj := func(name string, params []desc.Param) stressFunc {
		var b strings.Builder
		fmt.Fprintf(&b, "    %s self = {0};\n", cn)
		args := append([]string{"rnd_null(r) ? NULL : &self"}, stressArgs(&b, params)...)
		fmt.Fprintf(&b, "    %s(%s);\n    take_obj(CLASS_%s, self.opaque);\n", name, strings.Join(args, ", "), c.Name)
		return stressFunc{name, b.String()}
	}
	if c.Ctor {
		out = append(out, newObj(cn+"_Init", nil))
	}
	for _, m := range c.Ctors {
		out = append(out, newObj(cn+"_"+m.Name, m.Params))
	}
	out = append(out, stressFunc{cn + "_Drop", fmt.Sprintf(
		"    if (rnd_null(r)) {\n        %s_Drop(NULL);\n        return;\n    }\n    %s self = {rnd_take(r, CLASS_%s)};\n    %s_Drop(&self);\n",
		cn, cn, c.Name, cn)})
	if !c.NoCopy {
		out = append(out, stressFunc{cn + "_Clone", fmt.Sprintf(
			"    %s self = {0};\n    %s other = {rnd_id(r, CLASS_%s)};\n    %s_Clone(rnd_null(r) ? NULL : &self, rnd_null(r) ? NULL : &other);\n    take_obj(CLASS_%s, self.opaque);\n",
			cn, cn, c.Name, cn, c.Name)})
	}
	method := func(name string, static bool, params []desc.Param, ret *desc.Type) stressFunc {
		var b strings.Builder
		var args []string
		if !static {
			fmt.Fprintf(&b, "    %s self = {rnd_id(r, CLASS_%s)};\n", cn, c.Name)
			args = append(args, "rnd_null(r) ? NULL : &self")
		}
		args = append(args, stressArgs(&b, params)...)
		call := fmt.Sprintf("%s(%s)", name, strings.Join(args, ", "))
		switch r, o := cRet(ret); {
		case o != "":
			fmt.Fprintf(&b, "    %s returnValue;\n    memset(&returnValue, 0, sizeof returnValue);\n", strings.TrimSuffix(o, "*"))
			call = fmt.Sprintf("%s(%s)", name, strings.Join(append(args, "rnd_null(r) ? NULL : &returnValue"), ", "))
			if r == "bool" {
				fmt.Fprintf(&b, "    if (%s) {\n    %s    }\n", call, stressTake(ret.Elem, "returnValue"))
			} else {
				fmt.Fprintf(&b, "    %s;\n%s", call, stressTake(ret, "returnValue"))
			}
		case r != "void":
			fmt.Fprintf(&b, "    (void)%s;\n", call)
		default:
			fmt.Fprintf(&b, "    %s;\n", call)
		}
		return stressFunc{name, b.String()}
	}
	for _, p := range c.Props {
		out = append(out, method(cn+"_"+p.Name, false, nil, p.Type))
		if !p.ReadOnly {
			out = append(out, method(cn+"_Set"+p.Name, false, []desc.Param{{Name: "value", Type: p.Type}}, nil))
		}
	}
	for _, m := range c.Methods {
		out = append(out, method(cn+"_"+m.Name, m.Static, m.Params, m.Ret))
	}
	return out
}

// stressArgs writes locals holding random values of params and returns the arguments.
func stressArgs(b *strings.Builder, params []desc.Param) []string {
	var args []string
	for _, p := range params {
		n, t := "a_"+p.Name, p.Type
		switch t.Kind {
		case desc.Prim, desc.EnumT:
			args = append(args, stressValue(t))
		case desc.ClassT:
			fmt.Fprintf(b, "    %s %s = {rnd_id(r, CLASS_%s)};\n", cClass(t.Class), n, t.Class.Name)
			args = append(args, "rnd_null(r) ? NULL : &"+n)
		case desc.Opt:
			if t.Elem.Kind == desc.ClassT {
				fmt.Fprintf(b, "    %s %s = {rnd_id(r, CLASS_%s)};\n", cClass(t.Elem.Class), n, t.Elem.Class.Name)
			} else {
				fmt.Fprintf(b, "    %s %s = %s;\n", cValue(t.Elem), n, stressValue(t.Elem))
			}
			args = append(args, "rnd_null(r) ? NULL : &"+n)
		case desc.Props:
			args = append(args, "rnd_props(r)")
		case desc.List:
			if t.Elem.Kind == desc.ClassT {
				fmt.Fprintf(b, "    void* %s_ids[8];\n    %s %s = {(%s*)%s_ids, rnd_ids_of(r, CLASS_%s, %s_ids, 8)};\n",
					n, cSpan(t.Elem), n, cClass(t.Elem.Class), n, t.Elem.Class.Name, n)
				args = append(args, n)
			} else {
				args = append(args, "rnd_uint64s(r)")
			}
		case desc.CallbackT:
			fmt.Fprintf(b, "    Sdkpp_FreeFn %s_free;\n    void* %s_ud = ud_new(r, &%s_free);\n", n, n, n)
			args = append(args, "rnd_null(r) ? NULL : stress_cb_"+t.Callback.FullName(), n+"_free", n+"_ud")
		default:
			panic(fmt.Sprintf("stress: parameter %s of kind %d", p.Name, t.Kind))
		}
	}
	return args
}

// stressValue is an expression giving a random value of a primitive or enum type.
func stressValue(t *desc.Type) string {
	if t.Kind == desc.EnumT {
		return fmt.Sprintf("(%s)rnd_enum(r)", cEnum(t.Enum))
	}
	switch t.Prim {
	case "string":
		return "rnd_string(r)"
	case "bool":
		return "rnd_bool(r)"
	case "float":
		return "rnd_float(r)"
	}
	return fmt.Sprintf("(%s)rnd_u64(r)", cPrim[t.Prim])
}

// stressTake releases a value of type t the caller owns, in v.
func stressTake(t *desc.Type, v string) string {
	switch t.Kind {
	case desc.Prim:
		if t.IsString() {
			return fmt.Sprintf("    Sdkpp_Free(%s.ptr);\n", v)
		}
		return ""
	case desc.EnumT:
		return ""
	case desc.ClassT:
		return fmt.Sprintf("    take_obj(CLASS_%s, %s.opaque);\n", t.Class.Name, v)
	case desc.Props:
		return fmt.Sprintf("    Sdkpp_FreeProperties(%s);\n", v)
	case desc.List:
		if t.Elem.Kind == desc.ClassT {
			return fmt.Sprintf("    for (size_t i = 0; i < %s.size; i++) {\n        take_obj(CLASS_%s, %s.ptr[i].opaque);\n    }\n    Sdkpp_Free(%s.ptr);\n",
				v, t.Elem.Class.Name, v, v)
		}
		return fmt.Sprintf("    Sdkpp_Free(%s.ptr);\n", v)
	}
	panic(fmt.Sprintf("stress: returned kind %d", t.Kind))
}

// stressTakeArg releases a callback argument of type t.
func stressTakeArg(t *desc.Type, v string) string {
	switch t.Kind {
	case desc.Samples:
		return fmt.Sprintf("    if (%s) {\n        %s[0] = 0;\n    }\n", v, v)
	case desc.Out:
		return fmt.Sprintf("    if (%s) {\n        *%s = false;\n    }\n", v, v)
	case desc.ClassT:
		return fmt.Sprintf("    take_obj(CLASS_%s, %s->opaque);\n", t.Class.Name, v)
	case desc.Opt:
		if t.Elem.Kind == desc.ClassT {
			return fmt.Sprintf("    if (%s) {\n        take_obj(CLASS_%s, %s->opaque);\n    }\n", v, t.Elem.Class.Name, v)
		}
		panic("stress: optional callback argument of kind " + fmt.Sprint(t.Elem.Kind))
	case desc.Prim, desc.EnumT:
		if s := stressTake(t, v); s != "" {
			return s
		}
		return fmt.Sprintf("    (void)%s;\n", v)
	}
	return stressTake(t, v)
}
