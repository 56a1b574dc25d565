package main

import (
	"fmt"

	"sdkpp/build/gen/desc"
)

// This file holds the C shape of every described type: how a value is passed in, returned and
// handed to a callback. The C, C++, C# and Go emitters all derive their signatures from it.

var cPrim = map[string]string{
	"bool": "bool", "u8": "uint8_t", "i16": "int16_t", "i32": "int32_t", "u32": "uint32_t",
	"u64": "uint64_t", "float": "float", "string": "Sdkpp_String",
}

func cClass(c *desc.Class) string { return "Sdkpp_" + c.Name }
func cEnum(e *desc.Enum) string   { return "Sdkpp_" + e.FullName() }
func cCallback(cb *desc.Callback) string {
	return "Sdkpp_" + cb.FullName()
}

// cSpan is the span type of a list element.
func cSpan(elem *desc.Type) string {
	if elem.Kind == desc.ClassT {
		return "Sdkpp_" + elem.Class.Name + "Span"
	}
	return "Sdkpp_UInt64Span"
}

// cValue is the C type of a plain value of t (no pointer for classes).
func cValue(t *desc.Type) string {
	switch t.Kind {
	case desc.Prim:
		return cPrim[t.Prim]
	case desc.EnumT:
		return cEnum(t.Enum)
	case desc.ClassT:
		return cClass(t.Class)
	case desc.List:
		return cSpan(t.Elem)
	case desc.Props:
		return "Sdkpp_Properties"
	}
	panic(fmt.Sprintf("cValue of kind %d", t.Kind))
}

// cIn is the C type of an input parameter of type t.
func cIn(t *desc.Type) string {
	switch t.Kind {
	case desc.ClassT:
		return cClass(t.Class) + "*"
	case desc.Opt:
		return cValue(t.Elem) + "*"
	}
	return cValue(t)
}

// returnsDirect reports whether a getter or method of type t returns its value directly
// (scalars and enums) rather than through a returnValue out-parameter.
func returnsDirect(t *desc.Type) bool {
	return (t.Kind == desc.Prim && t.Prim != "string") || t.Kind == desc.EnumT
}

// cRet is the C return type and, when the value goes through an out-parameter, that
// parameter's type.
func cRet(t *desc.Type) (ret, out string) {
	switch {
	case t == nil:
		return "void", ""
	case returnsDirect(t):
		return cValue(t), ""
	case t.Kind == desc.Opt:
		return "bool", cValue(t.Elem) + "*"
	}
	return "void", cValue(t) + "*"
}

// cCallbackArg is the C type of a callback argument of type t.
func cCallbackArg(t *desc.Type) string {
	switch t.Kind {
	case desc.Samples:
		return "int16_t*"
	case desc.Out:
		return cValue(t.Elem) + "*"
	case desc.ClassT:
		return cClass(t.Class) + "*"
	case desc.Opt:
		if t.Elem.Kind == desc.ClassT {
			return cClass(t.Elem.Class) + "*"
		}
		return cValue(t.Elem) + "*"
	}
	return cValue(t)
}

// cParams lists the C parameters of a function, expanding callbacks into their triple.
func cParams(self *desc.Class, params []desc.Param, extra ...cField) []cField {
	var out []cField
	if self != nil {
		out = append(out, cField{cClass(self) + "*", "self"})
	}
	for _, p := range params {
		if p.Type.Kind == desc.CallbackT {
			out = append(out,
				cField{cCallback(p.Type.Callback), p.Name},
				cField{"Sdkpp_FreeFn", p.Name + "__userDataFree"},
				cField{"void*", p.Name + "__userData"})
			continue
		}
		out = append(out, cField{cIn(p.Type), p.Name})
	}
	return append(out, extra...)
}

// functionsOf lists every C function of a class in header order.
func functionsOf(c *desc.Class) []cFunc {
	var fs []cFunc
	self := c
	if c.Ctor {
		fs = append(fs, cFunc{Name: cClass(c) + "_Init", Ret: "void", Params: cParams(self, nil),
			Doc: []string{"Makes a new " + c.Name + " in self (self's old contents are not read)."}})
	}
	for _, m := range c.Ctors {
		fs = append(fs, cFunc{Name: cClass(c) + "_" + m.Name, Ret: "void", Params: cParams(self, m.Params), Doc: m.Doc})
	}
	fs = append(fs, cFunc{Name: cClass(c) + "_Drop", Ret: "void", Params: cParams(self, nil),
		Doc: []string{"Releases the object and zeroes self; later calls on it are refused."}})
	if !c.NoCopy {
		fs = append(fs, cFunc{Name: cClass(c) + "_Clone", Ret: "void",
			Params: cParams(self, nil, cField{cClass(c) + "*", "other"}),
			Doc:    []string{"Makes self a deep copy of other (self's old contents are not read)."}})
	}
	for _, p := range c.Props {
		ret, out := cRet(p.Type)
		var extra []cField
		if out != "" {
			extra = append(extra, cField{out, "returnValue"})
		}
		fs = append(fs, cFunc{Name: cClass(c) + "_" + p.Name, Ret: ret, Params: cParams(self, nil, extra...), Doc: p.Doc})
		if !p.ReadOnly {
			fs = append(fs, cFunc{Name: cClass(c) + "_Set" + p.Name, Ret: "void",
				Params: cParams(self, []desc.Param{{Name: "value", Type: p.Type}})})
		}
	}
	for _, m := range c.Methods {
		ret, out := cRet(m.Ret)
		var extra []cField
		if out != "" {
			extra = append(extra, cField{out, "returnValue"})
		}
		var s *desc.Class
		if !m.Static {
			s = self
		}
		fs = append(fs, cFunc{Name: cClass(c) + "_" + m.Name, Ret: ret, Params: cParams(s, m.Params, extra...), Doc: m.Doc})
	}
	return fs
}

// listElems returns every class used as a list element, for span declarations.
func listElems(api *desc.API) []*desc.Class {
	seen := map[*desc.Class]bool{}
	var out []*desc.Class
	visit := func(t *desc.Type) {
		for t != nil {
			if t.Kind == desc.List && t.Elem.Kind == desc.ClassT && !seen[t.Elem.Class] {
				seen[t.Elem.Class] = true
				out = append(out, t.Elem.Class)
			}
			t = t.Elem
		}
	}
	for _, c := range api.Classes {
		for _, p := range c.Props {
			visit(p.Type)
		}
		for _, m := range append(append([]*desc.Method{}, c.Methods...), c.Ctors...) {
			visit(m.Ret)
			for _, p := range m.Params {
				visit(p.Type)
			}
		}
		for _, cb := range c.Callbacks {
			for _, p := range cb.Params {
				visit(p.Type)
			}
		}
	}
	return out
}
