package mcp

import (
	"encoding/json"
	"testing"
)

func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", `{"a": [1, 2]}`, `{"a": [1, 2]}`},
		{"line comment", "{\"a\": 1 // one\n}", "{\"a\": 1       \n}"},
		{"block comment", "{/* x\ny */\"a\": 1}", "{    \n    \"a\": 1}"},
		{"trailing comma in object", `{"a": 1,}`, `{"a": 1 }`},
		{"trailing comma in array", `[1, 2, ]`, `[1, 2  ]`},
		{"trailing comma before a comment", "[1, // last\n]", "[1         \n]"},
		{"comment markers in a string", `{"url": "http://x/*y*/", "c": "//"}`, `{"url": "http://x/*y*/", "c": "//"}`},
		{"escaped quote in a string", `{"a": "say \"hi\" // not a comment",}`, `{"a": "say \"hi\" // not a comment" }`},
		{"comma inside a string", `["a,]"]`, `["a,]"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stripJSONC([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("stripJSONC(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("result is not valid JSON: %q", got)
			}
		})
	}
	for _, bad := range []string{`{"a": "open`, `{/* open`} {
		if _, err := stripJSONC([]byte(bad)); err == nil {
			t.Errorf("stripJSONC(%q) gave no error", bad)
		}
	}
}

func FuzzStripJSONC(f *testing.F) {
	f.Add(`{"a": [1, 2,], /* c */ "b": "x//y", // z` + "\n}")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := stripJSONC([]byte(in))
		if err != nil {
			return
		}
		if len(out) != len(in) {
			t.Errorf("length changed: %d -> %d", len(in), len(out))
		}
		// Valid JSON has neither comments nor trailing commas: it is left as it is.
		if json.Valid([]byte(in)) && string(out) != in {
			t.Errorf("valid JSON %q became %q", in, out)
		}
	})
}
