package desc

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTheDescription(t *testing.T) {
	f, err := os.Open("../../../api/sdkpp.api")
	require.NoError(t, err)
	defer f.Close()
	api, err := Parse(f)
	require.NoError(t, err)
	var client *Class
	for _, c := range api.Classes {
		if c.Name == "Client" {
			client = c
		}
	}
	require.NotNil(t, client)
	assert.Equal(t, KindClient, client.Kind)
	assert.True(t, client.NoCopy)
	assert.Len(t, client.Enums, 3)
	for _, m := range client.Methods {
		if m.Name == "AddLogCallback" {
			assert.Equal(t, CallbackT, m.Params[0].Type.Kind)
			assert.Equal(t, EnumT, m.Params[1].Type.Kind)
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
	require.NoError(t, err)
	assert.Equal(t, [3]int{1, 2, 3}, api.Version)
	require.Len(t, api.Enums, 2)
	assert.True(t, api.Enums[0].Open)
	assert.Equal(t, int64(16), api.Enums[0].Values[1].Value)

	require.Len(t, api.Classes, 1)
	th := api.Classes[0]
	assert.Equal(t, TagOf("Thing"), th.TypeID)
	assert.True(t, th.Ctor)
	assert.Equal(t, []string{"A thing."}, th.Doc)
	assert.Len(t, th.Ctors, 1)
	assert.Len(t, th.Enums, 1)

	require.Len(t, th.Props, 5)
	name := th.Props[0]
	assert.Equal(t, Opt, name.Type.Kind)
	assert.True(t, name.Type.Elem.IsString())
	assert.Equal(t, []string{"Its name."}, name.Doc)
	assert.True(t, th.Props[1].ReadOnly)
	assert.Equal(t, List, th.Props[1].Type.Kind)
	assert.Equal(t, List, th.Props[2].Type.Kind)
	assert.Same(t, th, th.Props[2].Type.Elem.Class)
	assert.Equal(t, EnumT, th.Props[3].Type.Kind)
	assert.Equal(t, Props, th.Props[4].Type.Kind)

	require.Len(t, th.Methods, 3)
	mk := th.Methods[1]
	assert.True(t, mk.Static)
	assert.Equal(t, Opt, mk.Ret.Kind)
	assert.Same(t, th, mk.Ret.Elem.Class)
	assert.Same(t, th.Callbacks[0], th.Methods[2].Params[0].Type.Callback)
}

func TestParseDirectCallback(t *testing.T) {
	api, err := Parse(strings.NewReader("class A record {\n callback Heard(id: u64, data: samples, n: u64, mute: out bool) direct\n callback Queued(id: u64)\n}\n"))
	require.NoError(t, err)
	cbs := api.Classes[0].Callbacks
	require.Len(t, cbs, 2)
	assert.True(t, cbs[0].Direct)
	assert.Equal(t, "Heard", cbs[0].Name)
	assert.Equal(t, Samples, cbs[0].Params[1].Type.Kind)
	assert.Equal(t, Out, cbs[0].Params[3].Type.Kind)
	assert.Equal(t, "bool", cbs[0].Params[3].Type.Elem.Prim)
	assert.False(t, cbs[1].Direct)
}

func TestParseDeprecated(t *testing.T) {
	api, err := Parse(strings.NewReader("class A record {\n method Old(on: bool) -> bool deprecated\n method New()\n}\n"))
	require.NoError(t, err)
	ms := api.Classes[0].Methods
	require.Len(t, ms, 2)
	assert.True(t, ms[0].Deprecated)
	assert.Equal(t, "Old", ms[0].Name)
	assert.Equal(t, "bool", ms[0].Ret.Prim)
	assert.False(t, ms[1].Deprecated)
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
		"samples queued":    "class A record {\n callback C(data: samples)\n}\n",
		"out queued":        "class A record {\n callback C(mute: out bool)\n}\n",
		"samples prop":      "class A record {\n prop X: samples\n}\n",
		"out param":         "class A record {\n method M(x: out bool)\n}\n",
		"samples return":    "class A record {\n method M() -> samples\n}\n",
		"opt samples":       "class A record {\n callback C(data: opt samples) direct\n}\n",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(src))
			assert.Error(t, err)
		})
	}
}

// TestTagsFollowNames: a class's tag is TagOf its name, whatever the order of the declarations.
func TestTagsFollowNames(t *testing.T) {
	decls := []string{
		"class Alpha record {\n}\n",
		"class Beta handle {\n}\n",
		"class Gamma record ctor {\n}\n",
		"class Client client nocopy {\n}\n",
	}
	orders := []struct {
		name  string
		order []int
	}{
		{"declared", []int{0, 1, 2, 3}},
		{"reversed", []int{3, 2, 1, 0}},
		{"two swapped", []int{0, 2, 1, 3}},
		{"one left out", []int{3, 0, 2}},
	}
	want := map[string]int{}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			var src strings.Builder
			for _, i := range o.order {
				src.WriteString(decls[i])
			}
			api, err := Parse(strings.NewReader(src.String()))
			require.NoError(t, err)
			require.Len(t, api.Classes, len(o.order))
			for _, c := range api.Classes {
				assert.Equal(t, TagOf(c.Name), c.TypeID, c.Name)
				if prev, ok := want[c.Name]; ok {
					assert.Equal(t, prev, c.TypeID, "%s's tag changed with the order", c.Name)
				}
				want[c.Name] = c.TypeID
			}
		})
	}
}

func TestTagOf(t *testing.T) {
	seen := map[int]string{}
	collided := false
	for i := range 2000 {
		name := fmt.Sprintf("Class%d", i)
		tag := TagOf(name)
		require.GreaterOrEqual(t, tag, 1, name)
		require.LessOrEqual(t, tag, 0xFFFF, name)
		if other, ok := seen[tag]; ok && !collided {
			collided = true
			// Two names with one tag: Parse refuses them, naming both.
			src := fmt.Sprintf("class %s record {\n}\nclass %s record {\n}\n", other, name)
			_, err := Parse(strings.NewReader(src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), other)
			assert.Contains(t, err.Error(), name)
		}
		seen[tag] = name
	}
	require.True(t, collided, "2000 names in 65535 tags should give a collision to test")
}
