package interactions

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"sdkpp/wire"
)

// Limits of modals (the platform's).
const (
	MaxModalTitle      = 45
	MaxCustomID        = 100
	MaxModalComponents = 5
	MaxLabelChars      = 45
	MaxLabelDesc       = 100
	MaxTextDisplay     = 4000
	MaxTextInput       = 4000
	MaxSelectOptions   = 25
	MaxGroupOptions    = 10 // Radio Group and Checkbox Group options
	MaxUploadFiles     = 10 // File Upload min_values and max_values (rule MOD-8)
)

// field is a modal input (a Label's child or a deprecated ActionRow's Text Input), normalized:
// Required set, select bounds defaulted.
type field struct {
	path string
	c    wire.Component
	min  int
	max  int
}

// bad is a 400 50035 at path.
func bad(path, code, message string) error { return wire.InvalidAt(path, code, message) }

func length(path string, s string, lo, hi int) error {
	n := utf8.RuneCountInString(s)
	if !utf8.ValidString(s) || n < lo || n > hi {
		return bad(path, "BASE_TYPE_BAD_LENGTH", "Must be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi)+" in length.")
	}
	return nil
}

func within(path string, v *int, lo, hi, def int) (int, error) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, bad(path, "NUMBER_TYPE_MAX", "Must be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi)+".")
	}
	return *v, nil
}

// checkModal validates a MODAL response's data (rules MOD-1 to MOD-8, ERR-2) and returns its
// inputs in order.
func checkModal(d *wire.ModalData) ([]field, error) {
	if err := length("data.custom_id", d.CustomID, 1, MaxCustomID); err != nil {
		return nil, err
	}
	if err := length("data.title", d.Title, 1, MaxModalTitle); err != nil {
		return nil, err
	}
	if len(d.Components) < 1 || len(d.Components) > MaxModalComponents {
		return nil, bad("data.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
	}
	var fields []field
	seen := map[string]bool{}
	for i := range d.Components {
		c := &d.Components[i]
		path := "data.components." + strconv.Itoa(i)
		var f field
		var err error
		switch c.Type {
		case wire.ComponentLabel: // MOD-1
			if c.Label == nil {
				return nil, bad(path+".label", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if err := length(path+".label", *c.Label, 1, MaxLabelChars); err != nil {
				return nil, err
			}
			if c.Description != nil {
				if err := length(path+".description", *c.Description, 0, MaxLabelDesc); err != nil {
					return nil, err
				}
			}
			if c.Component == nil || len(c.Components) > 0 {
				return nil, bad(path+".component", "COMPONENT_LABEL_CHILD", "A Label has exactly one child component.")
			}
			f, err = checkInput(path+".component", *c.Component, true)
		case wire.ComponentTextDisplay: // MOD-2
			if c.Content == nil {
				return nil, bad(path+".content", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if err := length(path+".content", *c.Content, 1, MaxTextDisplay); err != nil {
				return nil, err
			}
			continue
		case wire.ComponentActionRow: // MOD-3: deprecated, a Text Input with its own label
			if len(c.Components) != 1 || c.Components[0].Type != wire.ComponentTextInput {
				return nil, bad(path+".components", "COMPONENT_INVALID_CHILD", "An action row in a modal holds exactly one Text Input.")
			}
			f, err = checkInput(path+".components.0", c.Components[0], false)
		default:
			return nil, bad(path+".type", "UNION_TYPE_CHOICES", "A modal's top-level components are Label (18), Text Display (10) or Action Row (1).")
		}
		if err != nil {
			return nil, err
		}
		if seen[f.c.CustomID] {
			return nil, bad(f.path+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
		}
		seen[f.c.CustomID] = true
		fields = append(fields, f)
	}
	return fields, nil
}

// checkOptions validates the options of a select or group: lo to hi of them, unique values.
func checkOptions(path string, opts []wire.SelectOption, lo, hi int) error {
	if len(opts) < lo || len(opts) > hi {
		return bad(path, "BASE_TYPE_BAD_LENGTH", "Must be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi)+" in length.")
	}
	values := map[string]bool{}
	for i, o := range opts {
		p := path + "." + strconv.Itoa(i)
		if err := length(p+".label", o.Label, 1, 100); err != nil {
			return err
		}
		if err := length(p+".value", o.Value, 1, 100); err != nil {
			return err
		}
		if values[o.Value] {
			return bad(p+".value", "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED", "Option values must be unique")
		}
		values[o.Value] = true
	}
	return nil
}

// checkInput validates a modal input at path; inLabel tells whether a Label holds it.
func checkInput(path string, c wire.Component, inLabel bool) (field, error) {
	f := field{path: path, c: c}
	if err := length(path+".custom_id", c.CustomID, 1, MaxCustomID); err != nil {
		return f, err
	}
	required := c.Required == nil || *c.Required // default true in modals (MOD-4)
	f.c.Required = &required
	var err error
	switch c.Type {
	case wire.ComponentTextInput:
		if inLabel && c.Label != nil { // MOD-3
			return f, bad(path+".label", "COMPONENT_LABEL_NOT_ALLOWED", "A Text Input in a Label may not have a label: the Label's is used.")
		}
		if !inLabel {
			if c.Label == nil {
				return f, bad(path+".label", "BASE_TYPE_REQUIRED", "This field is required")
			}
			if err := length(path+".label", *c.Label, 1, MaxLabelChars); err != nil {
				return f, err
			}
		}
		if c.Style != 1 && c.Style != 2 {
			return f, bad(path+".style", "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")
		}
		if f.min, err = within(path+".min_length", c.MinLength, 0, MaxTextInput, 0); err != nil {
			return f, err
		}
		if f.max, err = within(path+".max_length", c.MaxLength, 1, MaxTextInput, MaxTextInput); err != nil {
			return f, err
		}
		if len(c.Value) > 0 {
			var v string
			if json.Unmarshal(c.Value, &v) != nil {
				return f, bad(path+".value", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			}
			if err := length(path+".value", v, 0, f.max); err != nil {
				return f, err
			}
		}
	case wire.ComponentStringSelect, wire.ComponentUserSelect, wire.ComponentRoleSelect, wire.ComponentMention,
		wire.ComponentChannelSelect:
		if !inLabel {
			return f, bad(path+".type", "COMPONENT_INVALID_CHILD", "A select in a modal goes inside a Label.")
		}
		if c.Disabled != nil { // MOD-4, ERR-2
			return f, bad(path+".disabled", "COMPONENT_DISABLED_NOT_ALLOWED", "A select menu in a modal may not use disabled.")
		}
		if c.Type == wire.ComponentStringSelect {
			if err := checkOptions(path+".options", c.Options, 1, MaxSelectOptions); err != nil {
				return f, err
			}
		} else if len(c.Options) > 0 {
			return f, bad(path+".options", "COMPONENT_OPTIONS_NOT_ALLOWED", "Only a String Select has options.")
		}
		if f.min, err = within(path+".min_values", c.MinValues, 0, MaxSelectOptions, 1); err != nil {
			return f, err
		}
		if f.max, err = within(path+".max_values", c.MaxValues, 1, MaxSelectOptions, 1); err != nil {
			return f, err
		}
		if c.Type == wire.ComponentStringSelect && f.max > len(c.Options) {
			return f, bad(path+".max_values", "NUMBER_TYPE_MAX", "Must be at most the number of options.")
		}
	case wire.ComponentRadioGroup: // MOD-5: one choice, optional when required is false
		if err := checkOptions(path+".options", c.Options, 2, MaxGroupOptions); err != nil {
			return f, err
		}
		defaults := 0
		for _, o := range c.Options {
			if o.Default {
				defaults++
			}
		}
		if defaults > 1 {
			return f, bad(path+".options", "COMPONENT_RADIO_DEFAULTS", "A Radio Group has at most one default option.")
		}
		f.min, f.max = 0, 1
		if required {
			f.min = 1
		}
	case wire.ComponentCheckboxGroup: // MOD-6
		if err := checkOptions(path+".options", c.Options, 1, MaxGroupOptions); err != nil {
			return f, err
		}
		if f.min, err = within(path+".min_values", c.MinValues, 0, len(c.Options), 1); err != nil {
			return f, err
		}
		if f.max, err = within(path+".max_values", c.MaxValues, 1, len(c.Options), len(c.Options)); err != nil {
			return f, err
		}
	case wire.ComponentCheckbox: // MOD-7: a boolean
		if len(c.Options) > 0 {
			return f, bad(path+".options", "COMPONENT_OPTIONS_NOT_ALLOWED", "A Checkbox has no options.")
		}
		if c.Required != nil {
			return f, bad(path+".required", "COMPONENT_REQUIRED_NOT_ALLOWED", "A Checkbox is a toggle: it has no required.")
		}
		f.c.Required = nil
	case wire.ComponentFileUpload: // MOD-8
		if f.min, err = within(path+".min_values", c.MinValues, 0, MaxUploadFiles, 1); err != nil {
			return f, err
		}
		if f.max, err = within(path+".max_values", c.MaxValues, 0, MaxUploadFiles, 1); err != nil {
			return f, err
		}
	default:
		return f, bad(path+".type", "UNION_TYPE_CHOICES", "Not a modal input component.")
	}
	if !inLabel && c.Type != wire.ComponentTextInput {
		return f, bad(path+".type", "COMPONENT_INVALID_CHILD", "Only a Text Input may go in an action row of a modal.")
	}
	if f.min > f.max {
		return f, bad(path+".min_values", "NUMBER_TYPE_MAX", "Must be at most max_values.")
	}
	return f, nil
}

// submitted collects a submission's inputs by custom_id: top-level ones, Labels' children and
// action rows' children. A custom_id given twice is an error.
func submitted(list []wire.Component) (map[string]wire.Component, error) {
	out := map[string]wire.Component{}
	var add func(path string, c wire.Component) error
	add = func(path string, c wire.Component) error {
		switch {
		case c.Type == wire.ComponentLabel && c.Component != nil:
			return add(path+".component", *c.Component)
		case c.Type == wire.ComponentActionRow:
			for i, cc := range c.Components {
				if err := add(path+".components."+strconv.Itoa(i), cc); err != nil {
					return err
				}
			}
			return nil
		case c.Type == wire.ComponentTextDisplay:
			return nil
		}
		if _, ok := out[c.CustomID]; ok || c.CustomID == "" {
			return bad(path+".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Each input is submitted once, by its custom_id.")
		}
		out[c.CustomID] = c
		return nil
	}
	for i, c := range list {
		if err := add("data.components."+strconv.Itoa(i), c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkSubmit checks a modal submission's values against the modal's fields: every input
// known and of its type, required ones given, text lengths, select and group values among the
// options, value counts within min_values and max_values.
func checkSubmit(fields []field, list []wire.Component) error {
	got, err := submitted(list)
	if err != nil {
		return err
	}
	for _, f := range fields {
		path := "data.components." + f.c.CustomID
		s, ok := got[f.c.CustomID]
		delete(got, f.c.CustomID)
		if ok && s.Type != f.c.Type {
			return bad(path+".type", "COMPONENT_TYPE_MISMATCH", "The submitted component's type is not the modal's.")
		}
		required := f.c.Required != nil && *f.c.Required
		missing := bad(path, "BASE_TYPE_REQUIRED", "This field is required")
		switch f.c.Type {
		case wire.ComponentTextInput:
			var v string
			if ok && len(s.Value) > 0 && json.Unmarshal(s.Value, &v) != nil {
				return bad(path+".value", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			}
			if v == "" {
				if required {
					return missing
				}
				continue
			}
			if err := length(path+".value", v, max(f.min, 1), f.max); err != nil {
				return err
			}
		case wire.ComponentCheckbox:
			if ok && len(s.Value) > 0 {
				var b bool
				if json.Unmarshal(s.Value, &b) != nil {
					return bad(path+".value", "BOOLEAN_TYPE_CONVERT", "Must be either true or false.")
				}
			}
		case wire.ComponentRadioGroup:
			var v *string
			if ok && len(s.Value) > 0 && json.Unmarshal(s.Value, &v) != nil {
				return bad(path+".value", "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
			}
			if v == nil {
				if required {
					return missing
				}
				continue
			}
			if !hasOption(f.c.Options, *v) {
				return bad(path+".value", "COMPONENT_INVALID_OPTION", "Not one of the options.")
			}
		default: // the selects, Checkbox Group, File Upload: values
			vals := s.Values
			if len(vals) == 0 && !required {
				continue
			}
			if len(vals) == 0 && required {
				return missing
			}
			if len(vals) < f.min || len(vals) > f.max {
				return bad(path+".values", "BASE_TYPE_BAD_LENGTH",
					"Must be between "+strconv.Itoa(f.min)+" and "+strconv.Itoa(f.max)+" in length.")
			}
			uniq := map[string]bool{}
			for _, v := range vals {
				if uniq[v] {
					return bad(path+".values", "COMPONENT_DUPLICATE_VALUE", "Values must be unique.")
				}
				uniq[v] = true
				switch f.c.Type {
				case wire.ComponentStringSelect, wire.ComponentCheckboxGroup:
					if !hasOption(f.c.Options, v) {
						return bad(path+".values", "COMPONENT_INVALID_OPTION", "Not one of the options.")
					}
				default:
					if _, ok := wire.ParseSnowflake(v); !ok {
						return bad(path+".values", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
					}
				}
			}
		}
	}
	for id := range got {
		return bad("data.components."+id, "COMPONENT_UNKNOWN", "The modal has no such input.")
	}
	return nil
}

func hasOption(opts []wire.SelectOption, v string) bool {
	return slices.ContainsFunc(opts, func(o wire.SelectOption) bool { return o.Value == v })
}
