package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// args reads a call's arguments as decoded from JSON (numbers are float64) or built by hand
// (ints). The first problem found is kept, worded for the model, and reading goes on with zero
// values so a tool can read all its arguments and then check once.
type args struct {
	m       map[string]any
	problem string
}

func (a *args) fail(format string, v ...any) {
	if a.problem == "" {
		a.problem = fmt.Sprintf(format, v...)
	}
}

// str returns a string argument; ok is false when it is absent.
func (a *args) str(name string, required bool) (s string, ok bool) {
	v, present := a.m[name]
	if !present || v == nil {
		if required {
			a.missing(name)
		}
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		a.fail("argument %q must be a string, got %s", name, typeName(v))
		return "", false
	}
	return s, true
}

// num returns a numeric argument; ok is false when it is absent.
func (a *args) num(name string) (f float64, ok bool) {
	v, present := a.m[name]
	if !present || v == nil {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			a.fail("argument %q must be a number, got %q", name, n.String())
			return 0, false
		}
	default:
		a.fail("argument %q must be a number, got %s", name, typeName(v))
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		a.fail("argument %q must be a finite number", name)
		return 0, false
	}
	return f, true
}

// flag returns a boolean argument, false when absent. Models sometimes send "true" as a string:
// it is accepted, as are "false", 1 and 0.
func (a *args) flag(name string) bool {
	v, present := a.m[name]
	if !present || v == nil {
		return false
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		switch strings.ToLower(b) {
		case "true", "1":
			return true
		case "false", "0", "":
			return false
		}
	case float64:
		if b == 0 || b == 1 {
			return b == 1
		}
	case int:
		if b == 0 || b == 1 {
			return b == 1
		}
	}
	a.fail("argument %q must be true or false, got %s", name, typeName(v))
	return false
}

// positive returns a whole-number argument ≥ 1; ok is false when it is absent.
func (a *args) positive(name string) (n int, ok bool) {
	f, ok := a.num(name)
	if !ok {
		return 0, false
	}
	if f != math.Trunc(f) || f < 1 || f > math.MaxInt32 {
		a.fail("argument %q must be a whole number ≥ 1, got %v", name, f)
		return 0, false
	}
	return int(f), true
}

// missing names the absent argument and, since models often misspell them, the ones given.
func (a *args) missing(name string) {
	var got []string
	for k := range a.m {
		got = append(got, k)
	}
	slices.Sort(got)
	if len(got) == 0 {
		a.fail("missing argument %q", name)
		return
	}
	a.fail("missing argument %q (got: %s)", name, strings.Join(got, ", "))
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int32, int64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
