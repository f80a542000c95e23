package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// Model is the model the client asks for.
func (c *Client) Model() string { return c.cfg.Model }

// ContextWindow asks the server how many tokens the model's context holds: Ollama's /api/show
// (model_info's <architecture>.context_length), else the model's entry in /v1/models where the
// server gives one (context_length: OpenRouter, LM Studio; max_model_len: vLLM). 0 when neither
// says: OpenAI's own list does not.
func (c *Client) ContextWindow(ctx context.Context) (int, error) {
	base := strings.TrimSuffix(c.cfg.BaseURL, "/")
	root := strings.TrimSuffix(base, "/v1")
	var show struct {
		ModelInfo map[string]any `json:"model_info"`
	}
	if err := c.getJSON(ctx, http.MethodPost, root+"/api/show", map[string]string{"model": c.cfg.Model}, &show); err == nil {
		for k, v := range show.ModelInfo {
			if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 {
				return int(n), nil
			}
		}
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := c.getJSON(ctx, http.MethodGet, base+"/models", nil, &list); err != nil {
		return 0, err
	}
	for _, m := range list.Data {
		if m["id"] != c.cfg.Model {
			continue
		}
		for _, k := range []string{"context_length", "max_model_len", "max_context_length"} {
			if n, ok := m[k].(float64); ok && n > 0 {
				return int(n), nil
			}
		}
	}
	return 0, nil
}

// Models lists the ids the server serves (/v1/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, http.MethodGet, strings.TrimSuffix(c.cfg.BaseURL, "/")+"/models", nil, &list); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range list.Data {
		out = append(out, m.ID)
	}
	return out, nil
}

// getJSON calls url with the key and decodes a JSON answer; a status other than 200 is an error.
func (c *Client) getJSON(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &httpStatus{resp.StatusCode, url}
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(out)
}

type httpStatus struct {
	code int
	url  string
}

func (e *httpStatus) Error() string { return http.StatusText(e.code) + " from " + e.url }
