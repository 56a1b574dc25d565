package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/build/gen/desc"
)

// TestDocsReference: the reference names every class, method, callback and enum value of the real
// description, each anchor once, and every link lands on an anchor.
func TestDocsReference(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "api", "sdkpp.api"))
	require.NoError(t, err)
	defer f.Close()
	api, err := desc.Parse(f)
	require.NoError(t, err)
	doc := emitDocs(api)

	anchors := map[string]int{}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(doc, -1) {
		anchors[m[1]]++
	}
	for id, n := range anchors {
		assert.Equal(t, 1, n, "anchor %s appears %d times", id, n)
	}
	for _, m := range regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(doc, -1) {
		assert.Contains(t, anchors, m[1], "a link to #%s, which no anchor has", m[1])
	}
	for _, c := range api.Classes {
		assert.Contains(t, anchors, anchor(c.Name), "class %s", c.Name)
		for _, m := range c.Methods {
			assert.Contains(t, anchors, anchor(c.Name+"-"+m.Name), "method %s.%s", c.Name, m.Name)
		}
		for _, cb := range c.Callbacks {
			assert.Contains(t, anchors, anchor(cb.FullName()), "callback %s", cb.FullName())
		}
		for _, p := range c.Props {
			assert.Contains(t, doc, "| `"+p.Name+"`", "property %s.%s", c.Name, p.Name)
		}
	}
	for _, e := range api.Enums {
		assert.Contains(t, anchors, anchor(e.FullName()), "enum %s", e.FullName())
		for _, v := range e.Values {
			assert.Contains(t, doc, "| `"+v.Name+"` |", "enum value %s.%s", e.FullName(), v.Name)
		}
	}
}
