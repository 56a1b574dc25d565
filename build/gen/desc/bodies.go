package desc

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ApplyGoBodies reads the Go side table of core's facade and sets the Go field of the members it
// names. Each line is "Class.Member = EXPR": EXPR is the Go body of a handle property's getter
// (an expression of the receiver h) or of a method of the Client or of a handle (an expression
// of the receiver, c or h, and the parameters). Blank lines and "#" lines are skipped. The table
// belongs to the Go generator, so that the description stays free of any one language.
func ApplyGoBodies(api *API, r io.Reader) error {
	classes := map[string]*Class{}
	for _, c := range api.Classes {
		classes[c.Name] = c
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if err := applyGoBody(classes, seen, l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

// applyGoBody applies one line of the side table.
func applyGoBody(classes map[string]*Class, seen map[string]bool, l string) error {
	key, expr, ok := strings.Cut(l, " = ")
	cls, member, dotted := strings.Cut(strings.TrimSpace(key), ".")
	expr = strings.TrimSpace(expr)
	if !ok || !dotted || expr == "" {
		return fmt.Errorf("want: Class.Member = EXPR")
	}
	if seen[key] {
		return fmt.Errorf("%s: given twice", key)
	}
	seen[key] = true
	c := classes[cls]
	if c == nil {
		return fmt.Errorf("%s: no class %s", key, cls)
	}
	for _, p := range c.Props {
		if p.Name == member {
			if c.Kind != KindHandle || !p.ReadOnly {
				return fmt.Errorf("%s: only a handle's read-only property has a getter expression", key)
			}
			p.Go = expr
			return nil
		}
	}
	for _, m := range c.Methods {
		if m.Name == member {
			if c.Kind == KindRecord || m.Static {
				return fmt.Errorf("%s: only a method of the Client or of a handle has a Go body", key)
			}
			m.Go = expr
			return nil
		}
	}
	return fmt.Errorf("%s: %s has no property or method %s", key, cls, member)
}
