package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConvertSchema(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"nil", `null`, `{"type":"object","properties":{}}`},
		{"empty", `{}`, `{"type":"object","properties":{}}`},
		{"object without properties", `{"type":"object"}`, `{"type":"object","properties":{}}`},
		{"kept keywords",
			`{"type":"object","title":"T","description":"D","required":["n"],"additionalProperties":false,
			  "properties":{"n":{"type":"integer","minimum":1,"maximum":9,"default":3,"description":"n"},
			    "tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":3},
			    "when":{"type":["string","null"],"format":"date-time"},
			    "either":{"anyOf":[{"type":"string"},{"type":"number"}]},
			    "one":{"oneOf":[{"type":"boolean"}]},
			    "map":{"type":"object","additionalProperties":{"type":"string"}}}}`,
			`{"type":"object","title":"T","description":"D","required":["n"],"additionalProperties":false,
			  "properties":{"n":{"type":"integer","minimum":1,"maximum":9,"default":3,"description":"n"},
			    "tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":3},
			    "when":{"type":["string","null"],"format":"date-time"},
			    "either":{"anyOf":[{"type":"string"},{"type":"number"}]},
			    "one":{"oneOf":[{"type":"boolean"}]},
			    "map":{"type":"object","additionalProperties":{"type":"string"}}}}`},
		{"dropped keywords",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x","type":"object","examples":[{}],
			  "patternProperties":{"^x":{}},"properties":{"s":{"type":"string","pattern":"^a","minLength":1,"examples":["a"],"x-custom":1}}}`,
			`{"type":"object","properties":{"s":{"type":"string"}}}`},
		{"const", `{"type":"object","properties":{"k":{"const":"fixed"}}}`,
			`{"type":"object","properties":{"k":{"enum":["fixed"]}}}`},
		{"$defs inlined",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/addr","description":"home"},"b":{"$ref":"#/definitions/n"}},
			  "$defs":{"addr":{"type":"object","description":"an address","properties":{"city":{"type":"string"}}}},
			  "definitions":{"n":{"type":"number"}}}`,
			`{"type":"object","properties":{"a":{"type":"object","description":"home","properties":{"city":{"type":"string"}}},"b":{"type":"number"}}}`},
		{"same $ref twice is no recursion",
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/p"},"b":{"type":"array","items":{"$ref":"#/$defs/p"}}},"$defs":{"p":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"string"}}}}`},
		{"allOf merged",
			`{"type":"object","properties":{"x":{"allOf":[{"$ref":"#/$defs/base"},{"properties":{"b":{"type":"string"}},"required":["b"]}],"description":"X"}},
			  "$defs":{"base":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}`,
			`{"type":"object","properties":{"x":{"type":"object","description":"X","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a","b"]}}}`},
		{"tuple items", `{"type":"object","properties":{"p":{"type":"array","items":[{"type":"number"},{"type":"number"}]}}}`,
			`{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"number"},{"type":"number"}]}}}`},
		{"boolean property schema", `{"type":"object","properties":{"any":true}}`, `{"type":"object","properties":{"any":{}}}`},
		{"properties without type", `{"properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			got, err := convertSchema(in)
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			// Compare as JSON values: numbers and lists as decoded.
			b, _ := json.Marshal(got)
			var gotJSON map[string]any
			_ = json.Unmarshal(b, &gotJSON)
			if diff := cmp.Diff(gotJSON, want); diff != "" {
				t.Errorf("convertSchema (-got +want):\n%s", diff)
			}
		})
	}
}

func TestConvertSchemaErrors(t *testing.T) {
	deep := `{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`
	for i := range 10 {
		if i > 0 {
			deep += ","
		}
		deep += `"d` + string(rune('0'+i)) + `":{"type":"object","properties":{"n":{"$ref":"#/$defs/d` + string(rune('0'+i+1)) + `"}}}`
	}
	deep += `,"d:":{"type":"string"}}}`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"recursive", `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`,
			`property "n": property "next": $ref "#/$defs/node" is recursive`},
		{"root recursion", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, `$ref "#" is recursive`},
		{"too deep", deep, "more than 8 $refs nested"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.invalid/s.json"}}}`, "is not local"},
		{"missing ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, `$ref "#/$defs/nope": not found`},
		{"not an object", `{"type":"string"}`, "the input schema's type is string, not object"},
		{"not a schema", `[1]`, "not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			_, err := convertSchema(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCapDescription(t *testing.T) {
	if got := capDescription("short"); got != "short" {
		t.Errorf("capDescription(short) = %q", got)
	}
	got := capDescription(strings.Repeat("é", 1500))
	if n := len([]rune(got)); n != maxDescription || !strings.HasSuffix(got, "…") {
		t.Errorf("capped description: %d runes, ends %q", n, got[len(got)-5:])
	}
}

// TestConvertSchemaBlowUp: $defs that each refer to the next several times would inline into
// exponentially many schemas; the conversion stops and the tool is left out, at once.
func TestConvertSchemaBlowUp(t *testing.T) {
	defs := map[string]any{"d7": map[string]any{"type": "string"}}
	for i := 6; i >= 0; i-- {
		props := map[string]any{}
		for j := range 10 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d0"}}, "$defs": defs}
	_, err := convertSchema(schema)
	if err == nil || !strings.Contains(err.Error(), "over 5000 schemas") {
		t.Fatalf("convertSchema = %v, want the bound", err)
	}
}
