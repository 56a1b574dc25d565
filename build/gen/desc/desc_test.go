package desc

import (
	"os"
	"strings"
	"testing"
)

func TestParseTheDescription(t *testing.T) {
	f, err := os.Open("../../../api/sdkpp.api")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	api, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var client *Class
	for _, c := range api.Classes {
		if c.Name == "Client" {
			client = c
		}
	}
	if client == nil || client.Kind != KindClient || !client.NoCopy || len(client.Enums) != 3 {
		t.Fatalf("Client = %+v", client)
	}
	for _, m := range client.Methods {
		if m.Name == "AddLogCallback" && (m.Params[0].Type.Kind != CallbackT || m.Params[1].Type.Kind != EnumT) {
			t.Fatalf("AddLogCallback params = %+v", m.Params)
		}
	}
}

func TestParse(t *testing.T) {
	src := `version 1.2.3
# An enum.
enum Color open {
  Red = 1
  Blue = 0x10
}
enum Thing.Kind {
  A = 0
}
# A thing.
class Thing record ctor {
  callback Done(result: Thing, ok: bool)
  # Its name.
  prop Name: opt string
  prop Ids: list u64 readonly
  prop Children: list Thing
  prop Kind: Kind
  prop Tags: props
  const method Count(c: Color) -> i32
  static Make(name: string) -> opt Thing
  method Go(cb: Done)
  ctor InitNamed(name: string)
}
`
	api, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if api.Version != [3]int{1, 2, 3} || len(api.Enums) != 2 || !api.Enums[0].Open || api.Enums[0].Values[1].Value != 16 {
		t.Fatalf("api = %+v", api)
	}
	th := api.Classes[0]
	if th.TypeID != 1 || !th.Ctor || th.Doc[0] != "A thing." || len(th.Ctors) != 1 || len(th.Enums) != 1 {
		t.Fatalf("class = %+v", th)
	}
	if p := th.Props[0]; p.Type.Kind != Opt || !p.Type.Elem.IsString() || p.Doc[0] != "Its name." {
		t.Fatalf("Name = %+v", p)
	}
	if p := th.Props[1]; !p.ReadOnly || p.Type.Kind != List {
		t.Fatalf("Ids = %+v", p)
	}
	if p := th.Props[2]; p.Type.Kind != List || p.Type.Elem.Class != th {
		t.Fatalf("Children = %+v", p)
	}
	if th.Props[3].Type.Kind != EnumT || th.Props[4].Type.Kind != Props {
		t.Fatal("Kind or Tags")
	}
	if m := th.Methods[1]; !m.Static || m.Ret.Kind != Opt || m.Ret.Elem.Class != th {
		t.Fatalf("Make = %+v", m)
	}
	if m := th.Methods[2]; m.Params[0].Type.Callback != th.Callbacks[0] {
		t.Fatalf("Go = %+v", m)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"unknown type":      "class A record {\n prop X: Nope\n}\n",
		"unterminated":      "class A record {\n",
		"bad kind":          "class A widget {\n}\n",
		"bad enum value":    "enum E {\n A = x\n}\n",
		"duplicate class":   "class A record {\n}\nclass A record {\n}\n",
		"stray brace":       "}\n",
		"bad member":        "class A record {\n field X: u8\n}\n",
		"list of string":    "class A record {\n prop X: list string\n}\n",
		"list of enum":      "enum E {\n A = 0\n}\nclass A record {\n prop X: list E\n}\n",
		"opt of list":       "class A record {\n prop X: opt list u64\n}\n",
		"ctor with return":  "class A record {\n ctor X() -> u8\n}\n",
		"nested enum owner": "enum Nope.E {\n A = 0\n}\n",
		"bad version":       "version 1.2\n",
	}
	for name, src := range cases {
		if _, err := Parse(strings.NewReader(src)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
