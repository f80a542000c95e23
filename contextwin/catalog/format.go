package catalog

import (
	"fmt"
	"strings"
)

// The words every front-end shows a model in, so that `reprise models`, VS Code's picker and
// Neovim's list read the same.

// Dollars prints a price per 1M tokens with two to three decimals: $0.75, $0.075, $20.00.
func Dollars(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if !strings.Contains(s, ".") {
		s += ".00"
	} else if len(s)-strings.IndexByte(s, '.') == 2 {
		s += "0"
	}
	return "$" + s
}

// Kilo prints a token count as 1M (a power of two millions), 200k or 512.
func Kilo(n int) string {
	switch {
	case n >= 1_000_000 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprint(n)
	}
}

// Commas prints n with thousands separators: 4,096.
func Commas(n int) string {
	if n < 0 {
		return "-" + Commas(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Describe lists what a thinking setting accepts for the model: its levels, or on a budget model
// the levels its budgets stand for; the default in brackets. "—" when it has none.
func (t Thinking) Describe() string {
	levels := t.Accepted()
	if len(levels) == 0 {
		return "—"
	}
	out := make([]string, 0, len(levels))
	for _, l := range levels {
		l = strings.ToLower(l)
		if strings.EqualFold(l, t.Default) {
			l = "[" + l + "]"
		}
		out = append(out, l)
	}
	s := strings.Join(out, " ")
	if len(t.Levels) == 0 {
		s += " (budgets; default " + t.Default + ")"
	}
	return s
}

// StatusText is the entry's status as a user reads it: "ga", "retired → gemini-3.5-flash-lite",
// "not in the catalogue", with ", not listed for this key" when the API does not list a model the
// catalogue has.
func (e Entry) StatusText() string {
	status := string(e.Status)
	switch {
	case !e.Known:
		return "not in the catalogue"
	case e.Retired:
		status = "retired"
		if e.Replacement != "" {
			status += " → " + e.Replacement
		}
	}
	if !e.Listed && !e.Retired {
		status += ", not listed for this key"
	}
	return status
}

// PriceText is "$0.75 · $0.075 · $3.75" (input, cached input, output per 1M tokens), with the
// long-prompt tier's threshold; "free (local)" for a model a local server serves unpriced, else
// "unknown".
func (e Entry) PriceText() string {
	if e.Local {
		return "free (local)"
	}
	if !e.Priced {
		return "unknown"
	}
	s := fmt.Sprintf("%s · %s · %s", Dollars(e.Rates.Input), Dollars(e.Rates.CachedInput), Dollars(e.Rates.Output))
	if e.Long != nil {
		s += fmt.Sprintf(" (more above %s)", Kilo(e.Long.Above))
	}
	return s
}
