package interactions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// modal decodes a MODAL response's data.
func modal(t *testing.T, s string) *wire.ModalData {
	t.Helper()
	var d wire.ModalData
	require.NoError(t, json.Unmarshal([]byte(s), &d))
	return &d
}

// errPath returns the path of the first field a 50035 error names, "" for another error.
func errPath(err error) string {
	e, ok := err.(*wire.APIError)
	if !ok || e.Code != wire.CodeInvalidFormBody {
		return ""
	}
	path := ""
	node := e.Errors
	for {
		if _, ok := node["_errors"]; ok {
			return path
		}
		for k, v := range node {
			if path != "" {
				path += "."
			}
			path += k
			node, _ = v.(map[string]any)
		}
		if node == nil {
			return path
		}
	}
}

func wrap(components string) string {
	return `{"custom_id": "m", "title": "Feedback", "components": [` + components + `]}`
}

// The modal components: MOD-1 Label (one child of the allowed types), MOD-2 Text Display,
// MOD-3 Text Input (no label in a Label; the deprecated action row accepted with one), MOD-4 and
// ERR-2 String Select (required defaults to true, disabled refused), MOD-5 Radio Group, MOD-6
// Checkbox Group, MOD-7 Checkbox, MOD-8 File Upload (0..10 files).
func TestCheckModal(t *testing.T) {
	label := func(child string) string {
		return `{"type": 18, "label": "L", "description": "D", "component": ` + child + `}`
	}
	opts := `"options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]`
	cases := []struct {
		rule, name, components string
		path                   string // "" when valid
	}{
		{"MOD-1", "label with text input", label(`{"type": 4, "custom_id": "t", "style": 1}`), ""},
		{"MOD-1", "label without child", `{"type": 18, "label": "L"}`, "data.components.0.component"},
		{"MOD-1", "label with two children", `{"type": 18, "label": "L", "component": {"type": 4, "custom_id": "t", "style": 1}, "components": [{"type": 4}]}`, "data.components.0.component"},
		{"MOD-1", "label without label", `{"type": 18, "component": {"type": 4, "custom_id": "t", "style": 1}}`, "data.components.0.label"},
		{"MOD-1", "label with a button", label(`{"type": 2, "custom_id": "b"}`), "data.components.0.component.type"},
		{"MOD-1", "label with user select", label(`{"type": 5, "custom_id": "u"}`), ""},
		{"MOD-1", "label with role select", label(`{"type": 6, "custom_id": "u"}`), ""},
		{"MOD-1", "label with mentionable select", label(`{"type": 7, "custom_id": "u"}`), ""},
		{"MOD-1", "label with channel select", label(`{"type": 8, "custom_id": "u"}`), ""},
		{"MOD-2", "text display", `{"type": 10, "content": "# Hello *there*"}`, ""},
		{"MOD-2", "empty text display", `{"type": 10, "content": ""}`, "data.components.0.content"},
		{"MOD-3", "text input with its own label in a label", label(`{"type": 4, "custom_id": "t", "style": 1, "label": "x"}`), "data.components.0.component.label"},
		{"MOD-3", "deprecated action row", `{"type": 1, "components": [{"type": 4, "custom_id": "t", "style": 2, "label": "Why"}]}`, ""},
		{"MOD-3", "action row text input without label", `{"type": 1, "components": [{"type": 4, "custom_id": "t", "style": 2}]}`, "data.components.0.components.0.label"},
		{"MOD-3", "action row with a select", `{"type": 1, "components": [{"type": 3, "custom_id": "s", ` + opts + `}]}`, "data.components.0.components"},
		{"MOD-4", "string select", label(`{"type": 3, "custom_id": "s", ` + opts + `}`), ""},
		{"ERR-2", "disabled string select", label(`{"type": 3, "custom_id": "s", "disabled": true, ` + opts + `}`), "data.components.0.component.disabled"},
		{"ERR-2", "disabled false string select", label(`{"type": 3, "custom_id": "s", "disabled": false, ` + opts + `}`), "data.components.0.component.disabled"},
		{"MOD-4", "select without options", label(`{"type": 3, "custom_id": "s"}`), "data.components.0.component.options"},
		{"MOD-5", "radio group optional", label(`{"type": 21, "custom_id": "r", "required": false, ` + opts + `}`), ""},
		{"MOD-5", "radio group of one", label(`{"type": 21, "custom_id": "r", "options": [{"label": "A", "value": "a"}]}`), "data.components.0.component.options"},
		{"MOD-5", "radio group two defaults", label(`{"type": 21, "custom_id": "r", "options": [{"label": "A", "value": "a", "default": true}, {"label": "B", "value": "b", "default": true}]}`), "data.components.0.component.options"},
		{"MOD-6", "checkbox group", label(`{"type": 22, "custom_id": "c", "min_values": 1, "max_values": 2, ` + opts + `}`), ""},
		{"MOD-6", "checkbox group max over options", label(`{"type": 22, "custom_id": "c", "max_values": 3, ` + opts + `}`), "data.components.0.component.max_values"},
		{"MOD-6", "checkbox group min over max", label(`{"type": 22, "custom_id": "c", "min_values": 2, "max_values": 1, ` + opts + `}`), "data.components.0.component.min_values"},
		{"MOD-7", "checkbox", label(`{"type": 23, "custom_id": "x"}`), ""},
		{"MOD-7", "checkbox with options", label(`{"type": 23, "custom_id": "x", ` + opts + `}`), "data.components.0.component.options"},
		{"MOD-8", "file upload 0..10", label(`{"type": 19, "custom_id": "f", "min_values": 0, "max_values": 10, "required": false}`), ""},
		{"MOD-8", "file upload max 11", label(`{"type": 19, "custom_id": "f", "max_values": 11}`), "data.components.0.component.max_values"},
		{"MOD-8", "file upload min -1", label(`{"type": 19, "custom_id": "f", "min_values": -1}`), "data.components.0.component.min_values"},
		{"MOD-1", "button at top level", `{"type": 2, "custom_id": "b"}`, "data.components.0.type"},
		{"MOD-1", "duplicate custom ids", label(`{"type": 23, "custom_id": "x"}`) + "," + label(`{"type": 23, "custom_id": "x"}`), "data.components.1.component.custom_id"},
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.name, func(t *testing.T) {
			_, err := checkModal(modal(t, wrap(c.components)))
			if c.path == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, c.path, errPath(err), "%v", err)
		})
	}
	_, err := checkModal(modal(t, `{"custom_id": "", "title": "t", "components": [{"type": 10, "content": "x"}]}`))
	assert.Equal(t, "data.custom_id", errPath(err))
	_, err = checkModal(modal(t, `{"custom_id": "m", "title": "t", "components": []}`))
	assert.Equal(t, "data.components", errPath(err))
}

// Submitted values are checked against the modal: required inputs (MOD-4: a String Select is
// required by default), options, counts (MOD-6, MOD-8), the radio group's single optional
// choice (MOD-5) and the checkbox's boolean (MOD-7).
func TestCheckSubmit(t *testing.T) {
	fields, err := checkModal(modal(t, wrap(`
		{"type": 10, "content": "Tell us"},
		{"type": 18, "label": "Why", "component": {"type": 4, "custom_id": "why", "style": 2, "min_length": 3, "max_length": 10}},
		{"type": 18, "label": "Pick", "component": {"type": 3, "custom_id": "pick", "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]}},
		{"type": 18, "label": "One", "component": {"type": 21, "custom_id": "one", "required": false, "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}]}},
		{"type": 18, "label": "Many", "component": {"type": 22, "custom_id": "many", "min_values": 1, "max_values": 2, "options": [{"label": "A", "value": "a"}, {"label": "B", "value": "b"}, {"label": "C", "value": "c"}]}}`)))
	require.NoError(t, err)
	fields2, err := checkModal(modal(t, wrap(`
		{"type": 18, "label": "Ok", "component": {"type": 23, "custom_id": "ok"}},
		{"type": 18, "label": "Files", "component": {"type": 19, "custom_id": "files", "min_values": 1, "max_values": 2}}`)))
	require.NoError(t, err)
	in := func(child string) string { return `{"type": 18, "component": ` + child + `}` }
	why := in(`{"type": 4, "custom_id": "why", "value": "because"}`)
	pick := in(`{"type": 3, "custom_id": "pick", "values": ["a"]}`)
	many := in(`{"type": 22, "custom_id": "many", "values": ["a", "c"]}`)
	cases := []struct {
		rule, name string
		fields     []field
		components string
		path       string
	}{
		{"MOD-4", "all given", fields, why + "," + pick + "," + many, ""},
		{"MOD-5", "radio group chosen", fields, why + "," + pick + "," + many + "," + in(`{"type": 21, "custom_id": "one", "value": "b"}`), ""},
		{"MOD-5", "radio group not an option", fields, why + "," + pick + "," + many + "," + in(`{"type": 21, "custom_id": "one", "value": "z"}`), "data.components.one.value"},
		{"MOD-5", "radio group two values", fields, why + "," + pick + "," + many + "," + in(`{"type": 21, "custom_id": "one", "value": ["a", "b"]}`), "data.components.one.value"},
		{"MOD-4", "string select missing", fields, why + "," + many, "data.components.pick"},
		{"MOD-4", "string select not an option", fields, why + "," + many + "," + in(`{"type": 3, "custom_id": "pick", "values": ["z"]}`), "data.components.pick.values"},
		{"MOD-4", "string select two values", fields, why + "," + many + "," + in(`{"type": 3, "custom_id": "pick", "values": ["a", "b"]}`), "data.components.pick.values"},
		{"MOD-3", "text too short", fields, pick + "," + many + "," + in(`{"type": 4, "custom_id": "why", "value": "no"}`), "data.components.why.value"},
		{"MOD-3", "text missing", fields, pick + "," + many, "data.components.why"},
		{"MOD-6", "checkbox group over max", fields, why + "," + pick + "," + in(`{"type": 22, "custom_id": "many", "values": ["a", "b", "c"]}`), "data.components.many.values"},
		{"MOD-6", "checkbox group none", fields, why + "," + pick + "," + in(`{"type": 22, "custom_id": "many", "values": []}`), "data.components.many"},
		{"MOD-1", "unknown input", fields, why + "," + pick + "," + many + "," + in(`{"type": 4, "custom_id": "other", "value": "x"}`), "data.components.other"},
		{"MOD-1", "type mismatch", fields, why + "," + many + "," + in(`{"type": 4, "custom_id": "pick", "value": "a"}`), "data.components.pick.type"},
		{"MOD-7", "checkbox true", fields2, in(`{"type": 23, "custom_id": "ok", "value": true}`) + "," + in(`{"type": 19, "custom_id": "files", "values": ["1"]}`), ""},
		{"MOD-7", "checkbox not a boolean", fields2, in(`{"type": 23, "custom_id": "ok", "value": "yes"}`) + "," + in(`{"type": 19, "custom_id": "files", "values": ["1"]}`), "data.components.ok.value"},
		{"MOD-8", "too many files", fields2, in(`{"type": 19, "custom_id": "files", "values": ["1", "2", "3"]}`), "data.components.files.values"},
		{"MOD-8", "no file", fields2, "", "data.components.files"},
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.name, func(t *testing.T) {
			var list []wire.Component
			require.NoError(t, json.Unmarshal([]byte("["+c.components+"]"), &list))
			err := checkSubmit(c.fields, list)
			if c.path == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, c.path, errPath(err), "%v", err)
		})
	}
}
