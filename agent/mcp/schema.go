package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxRefDepth bounds how many $refs are inlined one inside the other.
const maxRefDepth = 8

// maxSchemaNodes bounds the schemas a conversion makes: a few $defs that each refer to the next
// several times would otherwise grow exponentially when inlined, and hang the start of every
// server. Far past any real tool's; a tool over it is left out.
const maxSchemaNodes = 5000

// convertSchema turns a tool's inputSchema into the JSON Schema subset Gemini's
// parametersJsonSchema accepts. Local $refs are inlined (Gemini's support for $ref varies by
// model), const becomes a one-value enum, allOf is merged, and keywords Gemini rejects or ignores
// ($schema, $id, examples, patternProperties, pattern, ...) are dropped. A missing schema is an
// object without properties. A schema that is not an object, or whose $refs recurse or point
// outside the schema, is an error: the tool cannot be declared.
func convertSchema(schema any) (map[string]any, error) {
	if schema == nil {
		return emptyObject(), nil
	}
	root, err := asMap(schema)
	if err != nil {
		return nil, err
	}
	if len(root) == 0 {
		return emptyObject(), nil
	}
	c := &converter{root: root}
	out, err := c.node(root, nil)
	if err != nil {
		return nil, err
	}
	if t, _ := out["type"].(string); t != "object" {
		if _, ok := out["type"]; ok || out["properties"] == nil {
			return nil, fmt.Errorf("the input schema's type is %v, not object", out["type"])
		}
		out["type"] = "object"
	}
	if out["properties"] == nil {
		out["properties"] = map[string]any{}
	}
	return out, nil
}

func emptyObject() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// asMap accepts a schema as map[string]any, or as anything that marshals to a JSON object
// (json.RawMessage, a typed schema).
func asMap(schema any) (map[string]any, error) {
	if m, ok := schema.(map[string]any); ok {
		return m, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the input schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("the input schema is not a JSON object")
	}
	return m, nil
}

type converter struct {
	root  map[string]any
	nodes int // schemas made so far
}

// node converts one schema; refs is the chain of $refs being inlined, to detect recursion.
func (c *converter) node(s map[string]any, refs []string) (map[string]any, error) {
	if c.nodes++; c.nodes > maxSchemaNodes {
		return nil, fmt.Errorf("the input schema inlines into over %d schemas", maxSchemaNodes)
	}
	if ref, ok := s["$ref"].(string); ok {
		return c.ref(s, ref, refs)
	}
	out := map[string]any{}
	if all, ok := s["allOf"].([]any); ok {
		for i, sub := range all {
			m, ok := sub.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("allOf[%d] is not a schema", i)
			}
			conv, err := c.node(m, refs)
			if err != nil {
				return nil, err
			}
			mergeSchema(out, conv)
		}
	}
	for k, v := range s {
		if err := c.keyword(out, k, v, refs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ref inlines the schema s refers to; keywords beside the $ref (a description, mostly)
// override the target's.
func (c *converter) ref(s map[string]any, ref string, refs []string) (map[string]any, error) {
	target, err := c.resolve(ref, refs)
	if err != nil {
		return nil, err
	}
	inlined, err := c.node(target, append(refs, ref))
	if err != nil {
		return nil, err
	}
	rest := make(map[string]any, len(s))
	for k, v := range s {
		if k != "$ref" {
			rest[k] = v
		}
	}
	own, err := c.node(rest, refs)
	if err != nil {
		return nil, err
	}
	for k, v := range own {
		inlined[k] = v
	}
	return inlined, nil
}

// keyword converts one keyword k of a schema into out; those Gemini does not take are dropped.
func (c *converter) keyword(out map[string]any, k string, v any, refs []string) error {
	switch k {
	case "type", "description", "title", "default", "format", "enum",
		"minimum", "maximum", "minItems", "maxItems", "nullable", "propertyOrdering":
		out[k] = v
	case "const":
		out["enum"] = []any{v}
	case "required":
		if req, ok := v.([]any); ok {
			out[k] = mergeRequired(out[k], req)
		}
	case "properties":
		return c.properties(out, v, refs)
	case "items":
		switch it := v.(type) {
		case map[string]any:
			conv, err := c.node(it, refs)
			if err != nil {
				return fmt.Errorf("items: %w", err)
			}
			out[k] = conv
		case []any: // an older draft's tuple
			conv, err := c.list(it, refs)
			if err != nil {
				return fmt.Errorf("items: %w", err)
			}
			out["prefixItems"] = conv
		}
	case "prefixItems", "anyOf", "oneOf":
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s is not a list", k)
		}
		conv, err := c.list(list, refs)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		out[k] = conv
	case "additionalProperties":
		switch ap := v.(type) {
		case bool:
			out[k] = ap
		case map[string]any:
			conv, err := c.node(ap, refs)
			if err != nil {
				return fmt.Errorf("additionalProperties: %w", err)
			}
			out[k] = conv
		}
	}
	return nil
}

// properties converts a schema's properties, merged into those allOf gave.
func (c *converter) properties(out map[string]any, v any, refs []string) error {
	props, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("properties is not an object")
	}
	conv := map[string]any{}
	if prev, ok := out["properties"].(map[string]any); ok {
		conv = prev
	}
	for name, p := range props {
		m, ok := p.(map[string]any)
		if !ok {
			// true (anything) or false: neither says what to pass, so accept anything.
			m = map[string]any{}
		}
		cp, err := c.node(m, refs)
		if err != nil {
			return fmt.Errorf("property %q: %w", name, err)
		}
		conv[name] = cp
	}
	out["properties"] = conv
	return nil
}

func (c *converter) list(list []any, refs []string) ([]any, error) {
	out := make([]any, 0, len(list))
	for i, sub := range list {
		m, ok := sub.(map[string]any)
		if !ok {
			if b, isBool := sub.(bool); isBool && b {
				m = map[string]any{}
			} else {
				return nil, fmt.Errorf("[%d] is not a schema", i)
			}
		}
		conv, err := c.node(m, refs)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, conv)
	}
	return out, nil
}

// resolve finds a local $ref: "#", "#/$defs/NAME", "#/definitions/NAME" or any JSON pointer
// into the schema.
func (c *converter) resolve(ref string, refs []string) (map[string]any, error) {
	for _, r := range refs {
		if r == ref {
			return nil, fmt.Errorf("$ref %q is recursive", ref)
		}
	}
	if len(refs) >= maxRefDepth {
		return nil, fmt.Errorf("$ref %q: more than %d $refs nested", ref, maxRefDepth)
	}
	if ref != "#" && !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local to the schema", ref)
	}
	var cur any = c.root
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: not found", ref)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q: not found", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q: not a schema", ref)
	}
	return m, nil
}

// mergeSchema folds src into dst for allOf: properties and required are joined, other keywords
// keep the first value met.
func mergeSchema(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			props, _ := dst[k].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			for name, p := range v.(map[string]any) {
				props[name] = p
			}
			dst[k] = props
		case "required":
			dst[k] = mergeRequired(dst[k], v.([]any))
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

func mergeRequired(prev any, add []any) []any {
	out, _ := prev.([]any)
	out = append([]any(nil), out...)
	for _, r := range add {
		dup := false
		for _, o := range out {
			if o == r {
				dup = true
			}
		}
		if !dup {
			out = append(out, r)
		}
	}
	return out
}
