package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCSharpCallbacksAreAOTSafe reads the committed C# binding (Sdkpp.g.cs and Runtime.cs) and
// checks every delegate it passes to native code: each argument of a native function's
// parameter of a delegate type is a static readonly field of exactly that type (so the GC never
// collects it while the library holds the pointer), initialised with a static method that carries
// [MonoPInvokeCallback(typeof(ThatType))] (so IL2CPP and Mono's full AOT give it a native entry
// point). Unity's IL2CPP cannot marshal a lambda or an instance method to native code at all.
func TestCSharpCallbacksAreAOTSafe(t *testing.T) {
	var src strings.Builder
	for _, f := range []string{"Sdkpp.g.cs", "Runtime.cs"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "bindings", "csharp", f))
		require.NoError(t, err)
		src.Write(b)
		src.WriteByte('\n')
	}
	code := src.String()

	delegates := map[string]bool{}
	for _, m := range regexp.MustCompile(`\[(?:global::System\.Runtime\.InteropServices\.)?UnmanagedFunctionPointer\([^\]]*\)\]\s*internal delegate \S+ (\w+)\(`).FindAllStringSubmatch(code, -1) {
		delegates[m[1]] = true
	}
	require.Greater(t, len(delegates), 10, "native delegate types found")

	// The native functions (extern declarations and their gated wrappers in Native) and the
	// delegate type, if any, of each parameter.
	params := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:internal )?static (?:extern )?\S+ (Sdkpp_\w+?)(?:_Raw)?\((.*)\)\s*;?\s*$`).FindAllStringSubmatch(code, -1) {
		var types []string
		for _, p := range splitTopLevel(m[2]) {
			types = append(types, delegateOf(paramType(p), delegates))
		}
		params[m[1]] = types
	}
	require.Greater(t, len(params), 100, "native functions found")

	fields := regexp.MustCompile(`static readonly (\S+) (\w+) = (\w+);`).FindAllStringSubmatch(code, -1)
	checked := map[string]bool{}
	calls := regexp.MustCompile(`(?:global::Sdkpp\.)?Native\.(Sdkpp_\w+)\(`)
	passed := 0
	for _, loc := range calls.FindAllStringSubmatchIndex(code, -1) {
		name := code[loc[2]:loc[3]]
		types, ok := params[name]
		if !ok {
			continue // not a call of a native function (e.g. a field)
		}
		args := splitTopLevel(balanced(code[loc[1]:]))
		for i, arg := range args {
			if i >= len(types) || types[i] == "" {
				continue
			}
			passed++
			arg = strings.TrimSpace(arg)
			if arg == "null" {
				continue
			}
			field := arg[strings.LastIndex(arg, ".")+1:]
			key := types[i] + " " + field
			if checked[key] {
				continue
			}
			checked[key] = true
			checkCallbackField(t, code, fields, name, types[i], field, delegates)
		}
	}
	assert.Greater(t, passed, 100, "delegates passed to native functions")
	assert.Greater(t, len(checked), 10, "distinct callback fields checked")
}

// checkCallbackField checks that field is a static readonly field of delegate type typ,
// initialised with a static method marked [MonoPInvokeCallback(typeof(typ))].
func checkCallbackField(t *testing.T, code string, fields [][]string, call, typ, field string, delegates map[string]bool) {
	t.Helper()
	var method string
	for _, f := range fields {
		if f[2] == field && delegateOf(f[1], delegates) == typ {
			method = f[3]
		}
	}
	if !assert.NotEmpty(t, method, "%s passes %s: not a static readonly field of type %s", call, field, typ) {
		return
	}
	decl := regexp.MustCompile(`\[(?:global::Sdkpp\.)?AOT\.MonoPInvokeCallback\(typeof\((\S+)\)\)\]\s*(?:(?:private|internal) )?static \S+ ` + regexp.QuoteMeta(method) + `\(`).FindStringSubmatch(code)
	if assert.NotNil(t, decl, "%s: %s is not a static method marked [MonoPInvokeCallback]", field, method) {
		assert.Equal(t, typ, delegateOf(decl[1], delegates), "%s: [MonoPInvokeCallback] of %s names another delegate type", field, method)
	}
}

// delegateOf is the simple name of a native delegate type written as typ (qualified or not), or "".
func delegateOf(typ string, delegates map[string]bool) string {
	name := typ[strings.LastIndex(typ, ".")+1:]
	if delegates[name] {
		return name
	}
	return ""
}

// paramType is the type of a C# parameter declaration: attributes, ref/out and the name dropped.
func paramType(p string) string {
	p = regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(p, "")
	fs := strings.Fields(p)
	if len(fs) < 2 {
		return ""
	}
	return fs[len(fs)-2]
}

// balanced is the text after an opening parenthesis up to its matching closing one.
func balanced(s string) string {
	depth := 1
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// splitTopLevel splits a list on the commas outside parentheses and brackets.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, s[start:])
	}
	return out
}
