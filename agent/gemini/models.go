package gemini

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ListedModel is one model the API lists for this key (models.list), as the catalogue joins it.
type ListedModel struct {
	ID               string `json:"id"` // without "models/"
	DisplayName      string `json:"displayName,omitempty"`
	InputTokenLimit  int    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit int    `json:"outputTokenLimit,omitempty"`
}

// ListModels is the API's list of the models this key can call with generateContent, in the
// API's order, every page read. Embedding and other models are left out.
func (c *Client) ListModels(ctx context.Context) ([]ListedModel, error) {
	var out []ListedModel
	for m, err := range c.genai.Models.All(ctx) {
		if err != nil {
			return nil, fmt.Errorf("list the models: %w", c.describe(ctx, err))
		}
		if m == nil || len(m.SupportedActions) > 0 && !slices.Contains(m.SupportedActions, "generateContent") {
			continue
		}
		out = append(out, ListedModel{
			ID:               strings.TrimPrefix(m.Name, "models/"),
			DisplayName:      m.DisplayName,
			InputTokenLimit:  int(m.InputTokenLimit),
			OutputTokenLimit: int(m.OutputTokenLimit),
		})
	}
	return out, nil
}
