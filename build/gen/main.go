// Command gen writes the C header, the C++ header, the C# binding, the Go glue and the Markdown
// reference (docs/reference.md) of sdkpp from the one description in api/sdkpp.api (and, for
// core's one-expression facade members, the Go side table build/gen/facade_bodies.txt).
//
//	go run ./build/gen          regenerate every output
//	go run ./build/gen -check   fail if any committed output differs from a fresh generation
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"

	"sdkpp/build/gen/desc"
)

func main() {
	check := flag.Bool("check", false, "compare instead of writing; exit 1 on any difference")
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// bodiesPath is the Go generator's side table: the Go of core's one-expression facade members,
// kept out of the language-neutral description.
const bodiesPath = "build/gen/facade_bodies.txt"

func run(root string, check bool) error {
	f, err := os.Open(filepath.Join(root, "api", "sdkpp.api"))
	if err != nil {
		return err
	}
	api, err := desc.Parse(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("api/sdkpp.api: %w", err)
	}
	if f, err = os.Open(filepath.Join(root, bodiesPath)); err != nil {
		return err
	}
	err = desc.ApplyGoBodies(api, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", bodiesPath, err)
	}
	outputs := []struct {
		path  string
		text  string
		gofmt bool
	}{
		{"include/sdkpp.h", emitC(api), false},
		{"include/sdkpp.hpp", emitCpp(api), false},
		{"bindings/csharp/Sdkpp.g.cs", emitCSharp(api), false},
		{"capi/exports_gen.go", emitCapi(api), true},
		{"core/api_gen.go", emitCoreEnums(api), true},
		{"core/records_gen.go", emitCoreRecordAliases(api), true},
		{"core/records/enums_gen.go", emitRecordsEnums(api), true},
		{"core/records/records_gen.go", emitCoreRecords(api), true},
		{"core/facade_gen.go", emitCoreFacade(api), true},
		{"core/handlers_gen.go", emitCoreHandlers(api), true},
		{"tests/c/stress_gen.h", emitStress(api), false},
		{"docs/reference.md", emitDocs(api), false},
	}
	stale := 0
	for _, o := range outputs {
		text := []byte(o.text)
		if o.gofmt {
			formatted, err := format.Source(text)
			if err != nil {
				return fmt.Errorf("%s: generated Go does not parse: %w", o.path, err)
			}
			text = formatted
		}
		path := filepath.Join(root, o.path)
		if check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, text) {
				fmt.Fprintf(os.Stderr, "gen: %s is not current; run make generate and commit the result\n", o.path)
				stale++
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, text, 0o644); err != nil {
			return err
		}
	}
	if stale > 0 {
		return fmt.Errorf("%d generated file(s) out of date", stale)
	}
	return nil
}
