package catalog

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Auto is the thinking setting that sends nothing: the model thinks as it does by default.
const Auto = "auto"

// knownLevels are the thinking levels of the Gemini API, weakest first (XHIGH on some Gemini 4
// models only).
var knownLevels = []string{"MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH"}

// ThinkingChoice is what a thinking setting sends with each request: a level, a budget, or
// neither (the model's default). Never both: the API answers 400 to a budget beside a level.
type ThinkingChoice struct {
	Level  string // a thinkingLevel value, upper case; "" sends none
	Budget *int   // a thinkingBudget; nil sends none
}

// IsZero tells whether the choice sends nothing.
func (c ThinkingChoice) IsZero() bool { return c.Level == "" && c.Budget == nil }

// ParseThinking checks the spelling of a thinking setting: "auto" (or "") or a level name in any
// case. It returns "auto" or the level in upper case.
func ParseThinking(setting string) (string, error) {
	s := strings.TrimSpace(setting)
	if s == "" || strings.EqualFold(s, Auto) {
		return Auto, nil
	}
	up := strings.ToUpper(s)
	if !slices.Contains(knownLevels, up) {
		return "", fmt.Errorf("thinking %q is not auto nor a level (%s)", setting, strings.ToLower(strings.Join(knownLevels, ", ")))
	}
	return up, nil
}

// Accepted are the levels a user may name for the model, weakest first: its levels, or the
// levels its budgets are given for.
func (t Thinking) Accepted() []string {
	if len(t.Levels) > 0 {
		return slices.Clone(t.Levels)
	}
	levels := slices.Collect(maps.Keys(t.Budgets))
	slices.SortFunc(levels, func(a, b string) int { return cmp.Compare(t.Budgets[a], t.Budgets[b]) })
	return levels
}

// Thinking resolves a thinking setting for model name in c: auto sends nothing; a level is sent
// as thinkingLevel on a model that takes levels, as its budget on a model set by budget (2.5),
// and as a level on a model the catalogue does not know (every current model takes levels). A
// level the model does not accept is an error that lists those it does.
func (c *Catalog) Thinking(name, setting string) (ThinkingChoice, error) {
	level, err := ParseThinking(setting)
	if err != nil || level == Auto {
		return ThinkingChoice{}, err
	}
	m, ok := c.Lookup(name)
	if !ok {
		return ThinkingChoice{Level: level}, nil
	}
	t := m.Thinking
	if b, ok := t.Budgets[level]; ok && len(t.Levels) == 0 {
		return ThinkingChoice{Budget: &b}, nil
	}
	if slices.Contains(t.Levels, level) {
		return ThinkingChoice{Level: level}, nil
	}
	accepted := t.Accepted()
	if len(accepted) == 0 {
		return ThinkingChoice{}, fmt.Errorf("%s takes no thinking setting: use auto", m.ID)
	}
	return ThinkingChoice{}, fmt.Errorf("%s does not accept thinking level %s: it accepts %s (or auto, its default)",
		m.ID, strings.ToLower(level), strings.ToLower(strings.Join(accepted, ", ")))
}

// ThinkingRank orders thinking settings for model by how much they may think: the index of the
// level among MINIMAL…XHIGH, auto counting as the model's default level (MEDIUM when the model
// or its default is unknown, or set by budget). A setting that does not parse ranks above all.
func ThinkingRank(c *Catalog, model, setting string) int {
	level, err := ParseThinking(setting)
	if err != nil {
		return len(knownLevels)
	}
	if level == Auto {
		level = "MEDIUM"
		if m, ok := c.Lookup(model); ok && slices.Contains(knownLevels, m.Thinking.Default) {
			level = m.Thinking.Default
		}
	}
	return slices.Index(knownLevels, level)
}
