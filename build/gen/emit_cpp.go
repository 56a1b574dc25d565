package main

import (
	"fmt"
	"strings"

	"sdkpp/build/gen/desc"
)

// emitCpp writes include/sdkpp.hpp: header-only C++17 classes over the C ABI. Declarations come
// first; definitions sit in the SDKPP_IMPLEMENTATION block that one translation unit enables.
func emitCpp(api *desc.API) string {
	var decl, impl strings.Builder
	d := func(format string, a ...any) { fmt.Fprintf(&decl, format, a...) }
	m := func(format string, a ...any) { fmt.Fprintf(&impl, format, a...) }

	d(cppPrologue, generatedNote)
	for _, e := range api.Enums {
		if e.Owner == "" {
			cppEnum(&decl, "", e)
		}
	}
	for _, c := range api.Classes {
		d("class %s;\n", c.Name)
	}
	d("\n")
	for _, c := range api.Classes {
		cppClass(&decl, &impl, c)
	}
	for _, e := range api.Enums {
		d("/// The name of a %s value, or \"unknown\".\ninline const char* EnumToString(sdkpp::%s value)\n{\n    switch (value) {\n", e.CppName(), e.CppName())
		for _, v := range e.Values {
			d("    case sdkpp::%s::%s:\n        return %q;\n", e.CppName(), v.Name, v.Name)
		}
		d("    default:\n        return \"unknown\";\n    }\n}\n\n")
	}
	d("} // namespace sdkpp\n\n#endif // SDKPP_HPP\n")

	var out strings.Builder
	out.WriteString(decl.String())
	out.WriteString(cppImplPrologue)
	for _, c := range api.Classes {
		m("const %s %s::nullobj{{}, SdkppObjectState::Invalid};\n", c.Name, c.Name)
	}
	out.WriteString(impl.String())
	out.WriteString("} // namespace sdkpp\n#endif // SDKPP_IMPLEMENTATION\n")
	return out.String()
}

func cppEnum(b *strings.Builder, indent string, e *desc.Enum) {
	writeCppDoc(b, indent, e.Doc)
	fmt.Fprintf(b, "%senum class %s : int32_t {\n", indent, e.Name)
	for _, v := range e.Values {
		fmt.Fprintf(b, "%s    %s = %d,\n", indent, v.Name, v.Value)
	}
	fmt.Fprintf(b, "%s};\n\n", indent)
}

func writeCppDoc(b *strings.Builder, indent string, doc []string) {
	for _, l := range doc {
		fmt.Fprintf(b, "%s/// %s\n", indent, l)
	}
}

// cppType is the C++ type of t.
func cppType(t *desc.Type) string {
	switch t.Kind {
	case desc.Prim:
		if t.Prim == "string" {
			return "std::string"
		}
		return cPrim[t.Prim]
	case desc.EnumT:
		return "sdkpp::" + t.Enum.CppName()
	case desc.ClassT:
		return "sdkpp::" + t.Class.Name
	case desc.CallbackT:
		return "sdkpp::" + t.Callback.Owner.Name + "::" + t.Callback.Name
	case desc.Samples:
		return "int16_t*"
	case desc.Out:
		return cppType(t.Elem) + "&"
	case desc.Opt:
		return "std::optional<" + cppType(t.Elem) + ">"
	case desc.List:
		return "std::vector<" + cppType(t.Elem) + ">"
	case desc.Props:
		return "std::unordered_map<std::string, std::string>"
	}
	panic("cppType")
}

// cppParam is how a parameter is declared: big values by const reference in methods.
func cppParam(p desc.Param, byValue bool) string {
	t := cppType(p.Type)
	if !byValue && (p.Type.IsString() || p.Type.Kind == desc.Props || p.Type.Kind == desc.List) {
		return t + " const& " + p.Name
	}
	return t + " " + p.Name
}

func cppParams(ps []desc.Param, byValue bool) string {
	var out []string
	for _, p := range ps {
		out = append(out, cppParam(p, byValue))
	}
	return strings.Join(out, ", ")
}

func cppClass(decl, impl *strings.Builder, c *desc.Class) {
	d := func(format string, a ...any) { fmt.Fprintf(decl, format, a...) }
	m := func(format string, a ...any) { fmt.Fprintf(impl, format, a...) }
	n, cn := c.Name, cClass(c)

	writeCppDoc(decl, "", c.Doc)
	d("class %s {\n    mutable %s instance_{};\n    SdkppObjectState state_ = SdkppObjectState::Invalid;\n\npublic:\n", n, cn)
	for _, e := range c.Enums {
		cppEnum(decl, "    ", e)
	}
	for _, cb := range c.Callbacks {
		writeCppDoc(decl, "    ", cb.Doc)
		d("    using %s = std::function<void(%s)>;\n", cb.Name, cppParams(cb.Params, true))
	}
	if len(c.Callbacks) > 0 {
		d("\n")
	}
	d("    /// The C object this wraps.\n    %s* instance() const { return &instance_; }\n", cn)
	d("    /// An instance that holds no object.\n    static const %s nullobj;\n", n)
	d("    /// Adopts a C object (Owned: this wrapper drops it).\n    explicit %s(%s instance, SdkppObjectState state);\n", n, cn)
	d("    ~%s();\n    %s(%s&& other) noexcept;\n    %s& operator=(%s&& other) noexcept;\n", n, n, n, n, n)
	if c.NoCopy {
		d("    %s(const %s&) = delete;\n    %s& operator=(const %s&) = delete;\n", n, n, n, n)
	} else {
		d("    /// A deep copy.\n    %s(const %s& other);\n    /// Becomes a deep copy of other.\n    %s& operator=(const %s& other);\n", n, n, n, n)
	}
	if c.Ctor {
		d("    /// A new object.\n    explicit %s();\n", n)
	}
	for _, ct := range c.Ctors {
		writeCppDoc(decl, "    ", ct.Doc)
		d("    explicit %s(%s);\n", n, cppParams(ct.Params, true))
	}
	d("    /// Releases the object now; the wrapper becomes invalid.\n    void Drop();\n")
	d("    /// True while the wrapper holds an object.\n    operator bool() const { return state_ != SdkppObjectState::Invalid; }\n\n")

	// Special members.
	m("\n%s::%s(%s instance, SdkppObjectState state)\n    : instance_(instance)\n    , state_(state)\n{\n}\n", n, n, cn)
	m("%s::~%s()\n{\n    Drop();\n}\n", n, n)
	m("%s::%s(%s&& other) noexcept\n    : instance_(std::exchange(other.instance_, %s{}))\n    , state_(std::exchange(other.state_, SdkppObjectState::Invalid))\n{\n}\n", n, n, n, cn)
	m("%s& %s::operator=(%s&& other) noexcept\n{\n    if (this != &other) {\n        Drop();\n        instance_ = std::exchange(other.instance_, %s{});\n        state_ = std::exchange(other.state_, SdkppObjectState::Invalid);\n    }\n    return *this;\n}\n", n, n, n, cn)
	if !c.NoCopy {
		m("%s::%s(const %s& other)\n{\n    if (other.state_ == SdkppObjectState::Owned) {\n        %s_Clone(&instance_, other.instance());\n        state_ = detail::StateOf(instance_.opaque);\n    }\n}\n", n, n, n, cn)
		m("%s& %s::operator=(const %s& other)\n{\n    if (this != &other) {\n        Drop();\n        if (other.state_ == SdkppObjectState::Owned) {\n            %s_Clone(&instance_, other.instance());\n            state_ = detail::StateOf(instance_.opaque);\n        }\n    }\n    return *this;\n}\n", n, n, n, cn)
	}
	if c.Ctor {
		m("%s::%s()\n{\n    %s_Init(&instance_);\n    state_ = detail::StateOf(instance_.opaque);\n}\n", n, n, cn)
	}
	for _, ct := range c.Ctors {
		m("%s::%s(%s)\n{\n", n, n, cppParams(ct.Params, true))
		args := cppArgs(impl, ct.Params)
		m("    %s_%s(%s);\n    state_ = detail::StateOf(instance_.opaque);\n}\n", cn, ct.Name, strings.Join(append([]string{"&instance_"}, args...), ", "))
	}
	m("void %s::Drop()\n{\n    if (state_ != SdkppObjectState::Owned) {\n        return;\n    }\n    %s_Drop(&instance_);\n    state_ = SdkppObjectState::Invalid;\n}\n", n, cn)

	for _, p := range c.Props {
		writeCppDoc(decl, "    ", p.Doc)
		cppMethod(decl, impl, c, &desc.Method{Class: c, Name: p.Name, Ret: p.Type, Const: true}, true)
		if !p.ReadOnly {
			cppMethod(decl, impl, c, &desc.Method{Class: c, Name: "Set" + p.Name, Params: []desc.Param{{Name: "value", Type: p.Type}}}, true)
		}
	}
	for _, mt := range c.Methods {
		writeCppDoc(decl, "    ", mt.Doc)
		cppMethod(decl, impl, c, mt, false)
	}
	d("};\n\n")
}

// cppArgs writes the conversions of C++ arguments to C and returns the C argument expressions.
func cppArgs(b *strings.Builder, ps []desc.Param) []string {
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var args []string
	for _, p := range ps {
		n := p.Name
		t := p.Type
		switch t.Kind {
		case desc.Prim:
			if t.IsString() {
				args = append(args, "detail::Borrow("+n+")")
			} else {
				args = append(args, n)
			}
		case desc.EnumT:
			args = append(args, fmt.Sprintf("static_cast<%s>(%s)", cEnum(t.Enum), n))
		case desc.ClassT:
			args = append(args, n+".instance()")
		case desc.Opt:
			e := t.Elem
			switch e.Kind {
			case desc.ClassT:
				args = append(args, fmt.Sprintf("%s ? %s->instance() : nullptr", n, n))
			default:
				w("    %s %s__value{};\n", cValue(e), n)
				conv := "*" + n
				if e.IsString() {
					conv = "detail::Borrow(*" + n + ")"
				} else if e.Kind == desc.EnumT {
					conv = fmt.Sprintf("static_cast<%s>(*%s)", cEnum(e.Enum), n)
				}
				w("    if (%s) {\n        %s__value = %s;\n    }\n", n, n, conv)
				args = append(args, fmt.Sprintf("%s ? &%s__value : nullptr", n, n))
			}
		case desc.Props:
			w("    detail::BorrowedProperties %s__props(%s);\n", n, n)
			args = append(args, n+"__props.c")
		case desc.List:
			if t.Elem.Kind == desc.ClassT {
				w("    std::vector<%s> %s__items;\n    %s__items.reserve(%s.size());\n    for (auto const& item : %s) {\n        %s__items.push_back(*item.instance());\n    }\n",
					cClass(t.Elem.Class), n, n, n, n, n)
				args = append(args, fmt.Sprintf("%s{%s__items.data(), %s__items.size()}", cSpan(t.Elem), n, n))
			} else {
				args = append(args, fmt.Sprintf("Sdkpp_UInt64Span{const_cast<uint64_t*>(%s.data()), %s.size()}", n, n))
			}
		case desc.CallbackT:
			cb := t.Callback
			full := cppType(t)
			w("    auto* %s__userData = new %s(std::move(%s));\n", n, full, n)
			var cps, conv []string
			for _, cp := range cb.Params {
				cps = append(cps, cCallbackArg(cp.Type)+" "+cp.Name)
				switch {
				case cp.Type.IsString():
					conv = append(conv, "detail::Take("+cp.Name+")")
				case cp.Type.Kind == desc.EnumT:
					conv = append(conv, fmt.Sprintf("static_cast<%s>(%s)", cppType(cp.Type), cp.Name))
				case cp.Type.Kind == desc.ClassT:
					conv = append(conv, fmt.Sprintf("%s(*%s, SdkppObjectState::Owned)", cppType(cp.Type), cp.Name))
				case cp.Type.Kind == desc.Opt && cp.Type.Elem.Kind == desc.ClassT:
					conv = append(conv, fmt.Sprintf("%s ? std::optional<%s>(%s(*%s, SdkppObjectState::Owned)) : std::nullopt",
						cp.Name, cppType(cp.Type.Elem), cppType(cp.Type.Elem), cp.Name))
				case cp.Type.Kind == desc.Prim || cp.Type.Kind == desc.Samples:
					conv = append(conv, cp.Name)
				case cp.Type.Kind == desc.Out:
					conv = append(conv, "*"+cp.Name)
				case cp.Type.Kind == desc.List || cp.Type.Kind == desc.Props:
					conv = append(conv, cppFromC(cp.Type, cp.Name)) // the callback owns the span or map
				default:
					panic("C++ callback argument kind not supported yet")
				}
			}
			cps = append(cps, "void* userData__")
			w("    %s %s__trampoline = [](%s) {\n", cCallback(cb), n, strings.Join(cps, ", "))
			w("        auto& fn__ = *static_cast<%s*>(userData__);\n", full)
			for i, cp := range cb.Params {
				if cp.Type.Kind == desc.Out {
					w("        auto& %s__arg = %s;\n", cp.Name, conv[i])
					continue
				}
				w("        auto %s__arg = %s;\n", cp.Name, conv[i])
			}
			var call []string
			for _, cp := range cb.Params {
				if cp.Type.Kind == desc.Out {
					call = append(call, cp.Name+"__arg")
					continue
				}
				call = append(call, "std::move("+cp.Name+"__arg)")
			}
			w("        detail::Invoke([&] { fn__(%s); });\n    };\n", strings.Join(call, ", "))
			args = append(args, fmt.Sprintf("*%s__userData ? %s__trampoline : nullptr", n, n),
				"detail::Delete<"+full+">", n+"__userData")
		}
	}
	return args
}

// cppMethod declares and defines one member function.
func cppMethod(decl, impl *strings.Builder, c *desc.Class, mt *desc.Method, setterByValue bool) {
	d := func(format string, a ...any) { fmt.Fprintf(decl, format, a...) }
	w := func(format string, a ...any) { fmt.Fprintf(impl, format, a...) }
	ret := "void"
	if mt.Ret != nil {
		ret = cppType(mt.Ret)
	}
	params := cppParams(mt.Params, setterByValue)
	qual := ""
	if mt.Const {
		qual = " const"
	}
	prefix := "    "
	if mt.Static {
		prefix = "    static "
	}
	if mt.Deprecated {
		prefix += "[[deprecated(\"see the SDK's documentation of " + c.Name + "::" + mt.Name + "\")]] "
	}
	d("%s%s %s(%s)%s;\n", prefix, ret, mt.Name, params, qual)

	w("%s %s::%s(%s)%s\n{\n", ret, c.Name, mt.Name, params, qual)
	args := cppArgs(impl, mt.Params)
	if !mt.Static {
		args = append([]string{"&instance_"}, args...)
	}
	fn := cClass(c) + "_" + mt.Name
	t := mt.Ret
	switch {
	case t == nil:
		w("    %s(%s);\n", fn, strings.Join(args, ", "))
	case returnsDirect(t):
		if t.Kind == desc.EnumT {
			w("    return static_cast<%s>(%s(%s));\n", cppType(t), fn, strings.Join(args, ", "))
		} else {
			w("    return %s(%s);\n", fn, strings.Join(args, ", "))
		}
	case t.Kind == desc.Opt:
		e := t.Elem
		w("    %s returnValue{};\n", cValue(e))
		w("    if (!%s(%s)) {\n        return std::nullopt;\n    }\n", fn, strings.Join(append(args, "&returnValue"), ", "))
		w("    return %s;\n", cppFromC(e, "returnValue"))
	default:
		w("    %s returnValue{};\n", cValue(t))
		w("    %s(%s);\n", fn, strings.Join(append(args, "&returnValue"), ", "))
		w("    return %s;\n", cppFromC(t, "returnValue"))
	}
	w("}\n")
}

// cppFromC converts a C value v, which the caller owns, into the C++ value of t.
func cppFromC(t *desc.Type, v string) string {
	switch t.Kind {
	case desc.Prim:
		if t.IsString() {
			return "detail::Take(" + v + ")"
		}
		return v
	case desc.EnumT:
		return fmt.Sprintf("static_cast<%s>(%s)", cppType(t), v)
	case desc.ClassT:
		return fmt.Sprintf("%s(%s, detail::StateOf(%s.opaque))", cppType(t), v, v)
	case desc.Props:
		return "detail::TakeProperties(" + v + ")"
	case desc.List:
		if t.Elem.Kind == desc.ClassT {
			return fmt.Sprintf("detail::TakeObjects<%s>(%s)", cppType(t.Elem), v)
		}
		return "detail::TakeIds(" + v + ")"
	}
	panic("cppFromC")
}

const cppPrologue = `// %s
//
// sdkpp: header-only C++17 classes over the C ABI of include/sdkpp.h.
//
// Include this header anywhere; in exactly one translation unit define SDKPP_IMPLEMENTATION
// before including it. Every class wraps one C object: copies are deep, moves leave the source
// invalid, nullobj is an invalid instance, and a call on an invalid object is refused by the
// library (it logs an error and returns the default value) rather than crashing the game.
// Callbacks run only inside sdkpp::RunCallbacks(), on the thread that calls it.
#ifndef SDKPP_HPP
#define SDKPP_HPP

#include "sdkpp.h"

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sdkpp {

/// Whether a wrapper holds an object.
enum class SdkppObjectState { Invalid, Owned };

/// Runs every queued callback on the calling thread; call it once per frame.
inline void RunCallbacks()
{
    Sdkpp_RunCallbacks();
}

/// Blocks the calling thread until a callback is queued or timeout passes; true if callbacks are
/// queued. It runs none: call RunCallbacks next. For a thread that serves callbacks and has
/// nothing else to do, instead of polling RunCallbacks in a loop.
inline bool WaitForCallbacks(std::chrono::milliseconds timeout)
{
    auto ms = timeout.count();
    return Sdkpp_WaitForCallbacks(ms <= 0 ? 0u : ms >= 0xffffffffLL ? 0xffffffffu : static_cast<uint32_t>(ms));
}

/// Discards queued callbacks without running them.
inline void ResetCallbacks()
{
    Sdkpp_ResetCallbacks();
}

/// Number of live SDK objects, for finding leaks.
inline uint64_t GetObjectCount()
{
    return Sdkpp_GetObjectCount();
}

/// Returns the library to its state at load (Sdkpp_Shutdown): drops every object, closes every
/// Client, fires pending callbacks once and frees their userData. C++ wrappers still held are
/// stale afterwards; their destructors are harmless.
inline void Shutdown()
{
    Sdkpp_Shutdown();
}

`

const cppImplPrologue = `
#ifdef SDKPP_IMPLEMENTATION
#include <cstdio>
#include <cstdlib>

namespace sdkpp {
namespace detail {

inline SdkppObjectState StateOf(void* opaque)
{
    return opaque ? SdkppObjectState::Owned : SdkppObjectState::Invalid;
}

// Borrow views a string for the duration of one C call.
inline Sdkpp_String Borrow(std::string const& s)
{
    return Sdkpp_String{reinterpret_cast<uint8_t*>(const_cast<char*>(s.data())), s.size()};
}

// Take copies and frees a string the SDK returned.
inline std::string Take(Sdkpp_String s)
{
    std::string out;
    if (s.ptr) {
        out.assign(reinterpret_cast<char const*>(s.ptr), s.size);
        Sdkpp_Free(s.ptr);
    }
    return out;
}

inline std::unordered_map<std::string, std::string> TakeProperties(Sdkpp_Properties p)
{
    std::unordered_map<std::string, std::string> out;
    for (size_t i = 0; i < p.size; ++i) {
        out.emplace(std::string(reinterpret_cast<char const*>(p.keys[i].ptr), p.keys[i].size),
                    std::string(reinterpret_cast<char const*>(p.values[i].ptr), p.values[i].size));
    }
    Sdkpp_FreeProperties(p);
    return out;
}

inline std::vector<uint64_t> TakeIds(Sdkpp_UInt64Span s)
{
    std::vector<uint64_t> out(s.ptr, s.ptr + s.size);
    Sdkpp_Free(s.ptr);
    return out;
}

template <typename T, typename Span>
std::vector<T> TakeObjects(Span s)
{
    std::vector<T> out;
    out.reserve(s.size);
    for (size_t i = 0; i < s.size; ++i) {
        out.emplace_back(s.ptr[i], StateOf(s.ptr[i].opaque));
    }
    Sdkpp_Free(s.ptr);
    return out;
}

// BorrowedProperties views a map for the duration of one C call.
struct BorrowedProperties {
    std::vector<Sdkpp_String> keys, values;
    Sdkpp_Properties c{};
    explicit BorrowedProperties(std::unordered_map<std::string, std::string> const& m)
    {
        for (auto const& kv : m) {
            keys.push_back(Borrow(kv.first));
            values.push_back(Borrow(kv.second));
        }
        c = Sdkpp_Properties{m.size(), keys.data(), values.data()};
    }
};

template <typename T>
void SDKPP_CALL Delete(void* p)
{
    delete static_cast<T*>(p);
}

// Invoke runs a game callback; an exception must not unwind into the SDK.
template <typename F>
void Invoke(F&& f)
{
#if defined(__cpp_exceptions) || defined(_CPPUNWIND)
    try {
        f();
    }
    catch (std::exception const& e) {
        std::fprintf(stderr, "sdkpp: a callback threw an exception (caught at the SDK boundary): %s\n", e.what());
    }
    catch (...) {
        std::fprintf(stderr, "sdkpp: a callback threw an exception (caught at the SDK boundary)\n");
    }
#else
    f();
#endif
}

// The ABI check runs once when the program starts: a header that does not match the library
// makes the library refuse to create objects, and says why on standard error.
struct AbiCheck {
    AbiCheck()
    {
        Sdkpp_AbiInfo info = SDKPP_ABI_INFO_INIT;
        if (!Sdkpp_CheckAbi(&info)) {
            std::fprintf(stderr,
                         "sdkpp: FATAL: include/sdkpp.hpp (ABI %u, version %u) does not match the loaded library "
                         "(ABI %u, version %u); rebuild against the library's headers\n",
                         unsigned(SDKPP_ABI_VERSION), unsigned(SDKPP_VERSION), unsigned(Sdkpp_GetAbiVersion()),
                         unsigned(Sdkpp_GetVersion()));
        }
    }
};
static AbiCheck abiCheck;

} // namespace detail

`
