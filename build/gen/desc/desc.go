// Package desc parses api/sdkpp.api, the one description of sdkpp's public surface, into a model
// that the generators of the C, C++, C# and Go layers walk.
package desc

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
)

// API is the whole public surface.
type API struct {
	Version [3]int
	Enums   []*Enum
	Classes []*Class
}

// Enum is a 32-bit enumeration, optionally nested in a class.
type Enum struct {
	Owner  string // class name for nested enums, else ""
	Name   string
	Doc    []string
	Values []EnumValue
	Open   bool // any 32-bit value is valid, not only the listed ones
}

// EnumValue is one enumerator.
type EnumValue struct {
	Name  string
	Value int64
}

// FullName is Owner_Name for nested enums ("Client_Status") and Name otherwise.
func (e *Enum) FullName() string {
	if e.Owner != "" {
		return e.Owner + "_" + e.Name
	}
	return e.Name
}

// GoName is the name of the enum's Go type in core ("ClientStatus").
func (e *Enum) GoName() string { return e.Owner + e.Name }

// CppName is the qualified C++ name ("Client::Status").
func (e *Enum) CppName() string {
	if e.Owner != "" {
		return e.Owner + "::" + e.Name
	}
	return e.Name
}

// Class kinds.
const (
	KindRecord = "record" // a value snapshot: getters and setters, deep copies
	KindClient = "client" // the Client: internally synchronized, never copied
	KindHandle = "handle" // a live view into the Client's cache: SDK-issued, copyable, synchronized by the Client
)

// Class is one handle class.
type Class struct {
	Name   string
	Kind   string
	Ctor   bool // the game may construct it
	NoCopy bool
	// Custom: a record whose struct, constructor and Clone core writes by hand (it holds more
	// than its properties); the others' are generated.
	Custom bool
	// Defaults: a record whose constructor core writes by hand (it sets defaults).
	Defaults  bool
	Doc       []string
	TypeID    int // tag of its ids in the C ABI's object table: TagOf(Name)
	Props     []*Prop
	Methods   []*Method
	Ctors     []*Method
	Callbacks []*Callback
	Enums     []*Enum
}

// TagOf is the tag of the class named name in the C ABI's object table (capi's handle.Type): the
// name's FNV-1a hash folded into 1..65535. It depends on the name alone, so declaring classes in
// another order, or adding or removing other classes, never changes it; Parse refuses a
// description in which two classes share a tag.
func TagOf(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	s := h.Sum32()
	return int((s^s>>16)%0xFFFF) + 1
}

// Prop is a property: a getter and, unless ReadOnly, a setter.
type Prop struct {
	Name     string
	Type     *Type
	ReadOnly bool
	// Secret: the value is a credential; core's setter registers it for redaction.
	Secret bool
	// Custom: core writes this property's Go accessors by hand (they do more than store); the
	// generator writes none.
	Custom bool
	// Go: a handle property's getter body in core, a Go expression of the receiver h, given by
	// the generator's side table (ApplyGoBodies), not by the description; core writes the getter
	// of a handle property without one by hand.
	Go  string
	Doc []string
}

// Method is a method, a static function or an extra constructor of a class.
type Method struct {
	Class  *Class
	Name   string
	Params []Param
	Ret    *Type // nil for void
	Static bool
	Const  bool
	Doc    []string
	// Deprecated: still works (and logs a warning once); bindings mark it so that compilers warn.
	Deprecated bool
	// Custom: a Set...Callback method of the Client that core writes by hand (it does more than
	// fill the callback's slot); the generator writes neither the method nor the slot.
	Custom bool
	// Go: the method's body in core, a Go expression of the receiver (c for the Client, h for a
	// handle) and the parameters, given by the generator's side table (ApplyGoBodies); core writes
	// a method without one by hand.
	Go string
}

// Callback is a callback type nested in a class.
type Callback struct {
	Owner  *Class
	Name   string
	Params []Param
	Doc    []string
	// Direct: the SDK calls it on its audio thread for every frame, not queued for
	// RunCallbacks. Only direct callbacks may take samples and out parameters.
	Direct bool
}

// FullName is "Client_LogCallback".
func (c *Callback) FullName() string { return c.Owner.Name + "_" + c.Name }

// GoName is the Go func type in core ("ClientLogCallback").
func (c *Callback) GoName() string { return c.Owner.Name + c.Name }

// Param is a named parameter.
type Param struct {
	Name string
	Type *Type
}

// TypeKind says what a Type is.
type TypeKind int

// Type kinds.
const (
	Prim TypeKind = iota
	EnumT
	ClassT
	CallbackT
	Opt
	List
	Props
	Samples // a mutable buffer of int16 PCM samples, valid during a direct callback
	Out     // an out parameter (Elem: bool) of a direct callback
)

// Type is a parameter, property or return type.
type Type struct {
	Kind     TypeKind
	Prim     string // bool u8 i16 i32 u32 u64 float string
	Enum     *Enum
	Class    *Class
	Callback *Callback
	Elem     *Type // for Opt and List
}

// IsString reports whether t is the string primitive.
func (t *Type) IsString() bool { return t.Kind == Prim && t.Prim == "string" }

// Parse reads a description.
func Parse(r io.Reader) (*API, error) {
	p := &parser{api: &API{}, enums: map[string]*Enum{}, classes: map[string]*Class{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		p.line++
		if err := p.parseLine(strings.TrimSpace(sc.Text())); err != nil {
			return nil, fmt.Errorf("line %d: %w", p.line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if p.enum != nil || p.class != nil {
		return nil, fmt.Errorf("unterminated block at end of file")
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	return p.api, nil
}

type pendingType struct {
	t     *Type
	name  string
	owner *Class
	line  int
}

type parser struct {
	api     *API
	line    int
	doc     []string
	enum    *Enum
	class   *Class
	enums   map[string]*Enum
	classes map[string]*Class
	pending []pendingType
	lists   []pendingType // list types, checked once names are resolved
}

func (p *parser) takeDoc() []string {
	d := p.doc
	p.doc = nil
	return d
}

func (p *parser) parseLine(l string) error {
	switch {
	case l == "":
		if p.enum == nil && p.class == nil {
			p.doc = nil // a blank line at top level detaches a comment
		}
		return nil
	case strings.HasPrefix(l, "#"):
		p.doc = append(p.doc, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		return nil
	case l == "}":
		if p.enum != nil {
			p.enum = nil
			return nil
		}
		if p.class != nil {
			p.class = nil
			return nil
		}
		return fmt.Errorf("unexpected }")
	}
	if p.enum != nil {
		return p.enumValue(l)
	}
	if p.class != nil {
		return p.member(l)
	}
	f := strings.Fields(l)
	switch f[0] {
	case "version":
		if len(f) != 2 {
			return fmt.Errorf("version takes MAJOR.MINOR.PATCH")
		}
		parts := strings.Split(f[1], ".")
		if len(parts) != 3 {
			return fmt.Errorf("version takes MAJOR.MINOR.PATCH")
		}
		for i, s := range parts {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 255 {
				return fmt.Errorf("bad version part %q", s)
			}
			p.api.Version[i] = n
		}
		return nil
	case "enum":
		open := len(f) == 4 && f[2] == "open"
		if !(len(f) == 3 || open) || f[len(f)-1] != "{" {
			return fmt.Errorf("want: enum Name [open] {")
		}
		e := &Enum{Name: f[1], Doc: p.takeDoc(), Open: open}
		if i := strings.IndexByte(e.Name, '.'); i >= 0 {
			e.Owner, e.Name = e.Name[:i], e.Name[i+1:]
		}
		key := e.Owner + "." + e.Name
		if p.enums[key] != nil {
			return fmt.Errorf("enum %s declared twice", key)
		}
		p.enums[key] = e
		p.api.Enums = append(p.api.Enums, e)
		p.enum = e
		return nil
	case "class":
		if len(f) < 4 || f[len(f)-1] != "{" {
			return fmt.Errorf("want: class Name KIND [ctor] [nocopy] [custom] [defaults] {")
		}
		c := &Class{Name: f[1], Kind: f[2], Doc: p.takeDoc()}
		if c.Kind != KindRecord && c.Kind != KindClient && c.Kind != KindHandle {
			return fmt.Errorf("unknown class kind %q", c.Kind)
		}
		for _, flag := range f[3 : len(f)-1] {
			switch flag {
			case "ctor":
				c.Ctor = true
			case "nocopy":
				c.NoCopy = true
			case "custom":
				c.Custom = true
			case "defaults":
				c.Defaults = true
			default:
				return fmt.Errorf("unknown class flag %q", flag)
			}
		}
		if p.classes[c.Name] != nil {
			return fmt.Errorf("class %s declared twice", c.Name)
		}
		c.TypeID = TagOf(c.Name)
		for _, o := range p.api.Classes {
			if o.TypeID == c.TypeID {
				return fmt.Errorf("classes %s and %s have the same tag %d (a hash of the name); rename one", o.Name, c.Name, c.TypeID)
			}
		}
		p.classes[c.Name] = c
		p.api.Classes = append(p.api.Classes, c)
		p.class = c
		return nil
	}
	return fmt.Errorf("unknown declaration %q", f[0])
}

func (p *parser) enumValue(l string) error {
	name, val, ok := strings.Cut(l, "=")
	if !ok {
		return fmt.Errorf("want: Name = N")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(val), 0, 64)
	if err != nil {
		return fmt.Errorf("bad enum value: %w", err)
	}
	p.doc = nil
	p.enum.Values = append(p.enum.Values, EnumValue{Name: strings.TrimSpace(name), Value: n})
	return nil
}

func (p *parser) member(l string) error {
	c := p.class
	doc := p.takeDoc()
	word, rest, _ := strings.Cut(l, " ")
	rest = strings.TrimSpace(rest)
	if strings.Contains(l, " = ") {
		return fmt.Errorf("%q: the description names no language; a member's Go body goes in the generator's side table (build/gen/facade_bodies.txt)", l)
	}
	switch word {
	case "prop":
		name, typ, ok := strings.Cut(rest, ":")
		if !ok {
			return fmt.Errorf("want: prop Name: TYPE")
		}
		pr := &Prop{Name: strings.TrimSpace(name), Doc: doc}
		typ = strings.TrimSpace(typ)
		mods := map[string]*bool{"custom": &pr.Custom, "secret": &pr.Secret, "readonly": &pr.ReadOnly}
		for {
			i := strings.LastIndexByte(typ, ' ')
			flag, ok := mods[typ[i+1:]]
			if i < 0 || !ok {
				break
			}
			*flag, typ = true, strings.TrimSpace(typ[:i])
		}
		t, err := p.parseType(typ, c)
		if err != nil {
			return err
		}
		pr.Type = t
		c.Props = append(c.Props, pr)
		return nil
	case "callback":
		direct := false
		if r, ok := strings.CutSuffix(rest, " direct"); ok {
			direct, rest = true, strings.TrimSpace(r)
		}
		name, params, _, err := p.signature(rest, c)
		if err != nil {
			return err
		}
		if !direct {
			for _, prm := range params {
				if prm.Type.Kind == Samples || prm.Type.Kind == Out {
					return fmt.Errorf("callback %s: parameter %s: samples and out parameters are only for direct callbacks", name, prm.Name)
				}
			}
		}
		c.Callbacks = append(c.Callbacks, &Callback{Owner: c, Name: name, Params: params, Doc: doc, Direct: direct})
		return nil
	case "ctor", "method", "static", "const":
		m := &Method{Class: c, Doc: doc}
		if r, ok := strings.CutSuffix(rest, " custom"); ok {
			m.Custom, rest = true, strings.TrimSpace(r)
		}
		if r, ok := strings.CutSuffix(rest, " deprecated"); ok {
			m.Deprecated, rest = true, strings.TrimSpace(r)
		}
		switch word {
		case "static":
			m.Static = true
		case "const":
			w, r, _ := strings.Cut(rest, " ")
			if w != "method" {
				return fmt.Errorf("want: const method ...")
			}
			m.Const = true
			rest = r
		}
		name, params, ret, err := p.signature(rest, c)
		if err != nil {
			return err
		}
		m.Name, m.Params, m.Ret = name, params, ret
		if word == "ctor" {
			if ret != nil {
				return fmt.Errorf("a ctor returns nothing")
			}
			c.Ctors = append(c.Ctors, m)
		} else {
			c.Methods = append(c.Methods, m)
		}
		return nil
	}
	return fmt.Errorf("unknown member %q", word)
}

// signature parses `Name(a: T, b: U) -> R`.
func (p *parser) signature(s string, owner *Class) (string, []Param, *Type, error) {
	open := strings.IndexByte(s, '(')
	close := strings.LastIndexByte(s, ')')
	if open <= 0 || close < open {
		return "", nil, nil, fmt.Errorf("want: Name(params)")
	}
	name := strings.TrimSpace(s[:open])
	var params []Param
	if inner := strings.TrimSpace(s[open+1 : close]); inner != "" {
		for _, ps := range strings.Split(inner, ",") {
			pn, pt, ok := strings.Cut(ps, ":")
			if !ok {
				return "", nil, nil, fmt.Errorf("parameter %q: want name: TYPE", ps)
			}
			t, err := p.parseType(strings.TrimSpace(pt), owner)
			if err != nil {
				return "", nil, nil, err
			}
			params = append(params, Param{Name: strings.TrimSpace(pn), Type: t})
		}
	}
	var ret *Type
	if tail := strings.TrimSpace(s[close+1:]); tail != "" {
		r, ok := strings.CutPrefix(tail, "->")
		if !ok {
			return "", nil, nil, fmt.Errorf("unexpected %q after parameters", tail)
		}
		t, err := p.parseType(strings.TrimSpace(r), owner)
		if err != nil {
			return "", nil, nil, err
		}
		ret = t
	}
	return name, params, ret, nil
}

var prims = map[string]bool{"bool": true, "u8": true, "i16": true, "i32": true, "u32": true, "u64": true, "float": true, "string": true}

func (p *parser) parseType(s string, owner *Class) (*Type, error) {
	if r, ok := strings.CutPrefix(s, "opt "); ok {
		e, err := p.parseType(strings.TrimSpace(r), owner)
		if err != nil {
			return nil, err
		}
		if e.Kind == Opt || e.Kind == List || e.Kind == CallbackT {
			return nil, fmt.Errorf("opt of %q is not supported", r)
		}
		return &Type{Kind: Opt, Elem: e}, nil
	}
	if r, ok := strings.CutPrefix(s, "list "); ok {
		e, err := p.parseType(strings.TrimSpace(r), owner)
		if err != nil {
			return nil, err
		}
		if e.Kind == Prim && e.Prim != "" && e.Prim != "u64" || e.Kind == Opt || e.Kind == List || e.Kind == Props {
			return nil, fmt.Errorf("list of %q is not supported (u64 or a class)", r)
		}
		t := &Type{Kind: List, Elem: e}
		p.lists = append(p.lists, pendingType{t: t, name: r, line: p.line})
		return t, nil
	}
	if prims[s] {
		return &Type{Kind: Prim, Prim: s}, nil
	}
	if s == "samples" {
		return &Type{Kind: Samples}, nil
	}
	if s == "out bool" {
		return &Type{Kind: Out, Elem: &Type{Kind: Prim, Prim: "bool"}}, nil
	}
	if s == "props" {
		return &Type{Kind: Props}, nil
	}
	if s == "" || strings.ContainsAny(s, " ,()") {
		return nil, fmt.Errorf("bad type %q", s)
	}
	t := &Type{}
	p.pending = append(p.pending, pendingType{t: t, name: s, owner: owner, line: p.line})
	return t, nil
}

// resolve binds named types once every declaration is known.
func (p *parser) resolve() error {
	for _, pt := range p.pending {
		name := pt.name
		key := "." + name
		if strings.Contains(name, ".") {
			key = name
		}
		if e := p.enums[key]; e != nil {
			*pt.t = Type{Kind: EnumT, Enum: e}
			continue
		}
		if pt.owner != nil {
			if e := p.enums[pt.owner.Name+"."+name]; e != nil { // a nested enum named from inside its class
				*pt.t = Type{Kind: EnumT, Enum: e}
				continue
			}
		}
		if c := p.classes[name]; c != nil {
			*pt.t = Type{Kind: ClassT, Class: c}
			continue
		}
		if pt.owner != nil {
			if cb := findCallback(pt.owner, name); cb != nil {
				*pt.t = Type{Kind: CallbackT, Callback: cb}
				continue
			}
		}
		return fmt.Errorf("line %d: unknown type %q", pt.line, name)
	}
	for _, l := range p.lists {
		if e := l.t.Elem; e.Kind != ClassT && !(e.Kind == Prim && e.Prim == "u64") {
			return fmt.Errorf("line %d: list of %q is not supported (u64 or a class)", l.line, l.name)
		}
	}
	for _, e := range p.api.Enums {
		if e.Owner == "" {
			continue
		}
		c := p.classes[e.Owner]
		if c == nil {
			return fmt.Errorf("enum %s.%s: no class %s", e.Owner, e.Name, e.Owner)
		}
		c.Enums = append(c.Enums, e)
	}
	onlyDirect := func(t *Type) bool {
		return t != nil && (t.Kind == Samples || t.Kind == Out || (t.Elem != nil && (t.Elem.Kind == Samples || t.Elem.Kind == Out)))
	}
	for _, c := range p.api.Classes {
		for _, pr := range c.Props {
			if onlyDirect(pr.Type) {
				return fmt.Errorf("%s.%s: samples and out are only for parameters of direct callbacks", c.Name, pr.Name)
			}
		}
		for _, m := range append(append([]*Method{}, c.Methods...), c.Ctors...) {
			bad := onlyDirect(m.Ret)
			for _, prm := range m.Params {
				bad = bad || onlyDirect(prm.Type)
			}
			if bad {
				return fmt.Errorf("%s.%s: samples and out are only for parameters of direct callbacks", c.Name, m.Name)
			}
		}
		for _, cb := range c.Callbacks {
			for _, prm := range cb.Params {
				if t := prm.Type; (t.Kind == Opt || t.Kind == List) && onlyDirect(t) {
					return fmt.Errorf("%s.%s: samples and out cannot be optional or in a list", c.Name, cb.Name)
				}
			}
		}
	}
	for _, c := range p.api.Classes {
		for _, m := range c.Methods {
			for _, prm := range m.Params {
				if prm.Type.Kind == CallbackT && prm.Type.Callback.Owner != c {
					return fmt.Errorf("%s.%s: callback of another class", c.Name, m.Name)
				}
			}
		}
	}
	return nil
}

func findCallback(c *Class, name string) *Callback {
	for _, cb := range c.Callbacks {
		if cb.Name == name {
			return cb
		}
	}
	return nil
}
