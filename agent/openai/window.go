package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Model is the model the client asks for.
func (c *Client) Model() string { return c.cfg.Model }

// OllamaDefaultContext is what Ollama allocates a model's context at when nothing says more (the
// Modelfile's num_ctx, OLLAMA_CONTEXT_LENGTH): 4,096 tokens below 24 GiB of VRAM. Its OpenAI route
// takes no num_ctx, and it cuts a longer prompt silently.
const OllamaDefaultContext = 4096

// Window is a model's context as the server gives it.
type Window struct {
	Tokens int
	// Note, when set, says the window is assumed and how the user makes it larger.
	Note string
}

// ContextWindow asks the server how many tokens the model's context holds. On Ollama
// (/api/show answers): the Modelfile's num_ctx, else the context of the model as loaded
// (/api/ps), else Ollama's default, with a note; not the model's maximum, which Ollama does not
// allocate unless told. Elsewhere: the model's entry in /v1/models where the server gives one
// (context_length: OpenRouter, LM Studio; max_model_len: vLLM). 0 when nothing says: OpenAI's
// own list does not.
func (c *Client) ContextWindow(ctx context.Context) (int, error) {
	w, err := c.Window(ctx)
	return w.Tokens, err
}

// Window is ContextWindow with its note.
func (c *Client) Window(ctx context.Context) (Window, error) {
	base := strings.TrimSuffix(c.cfg.BaseURL, "/")
	root := strings.TrimSuffix(base, "/v1")
	var show struct {
		ModelInfo  map[string]any `json:"model_info"`
		Parameters string         `json:"parameters"`
	}
	if err := c.getJSON(ctx, http.MethodPost, root+"/api/show", map[string]string{"model": c.cfg.Model}, &show); err == nil {
		return c.ollamaWindow(ctx, root, show.ModelInfo, show.Parameters), nil
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := c.getJSON(ctx, http.MethodGet, base+"/models", nil, &list); err != nil {
		return Window{}, err
	}
	for _, m := range list.Data {
		if m["id"] != c.cfg.Model {
			continue
		}
		for _, k := range []string{"context_length", "max_model_len", "max_context_length"} {
			if n, ok := m[k].(float64); ok && n > 0 {
				return Window{Tokens: int(n)}, nil
			}
		}
	}
	return Window{}, nil
}

// ollamaWindow is the context Ollama will give the model: num_ctx, else as loaded, else its
// default (never more than the model's maximum).
func (c *Client) ollamaWindow(ctx context.Context, root string, info map[string]any, params string) Window {
	maxCtx := 0
	for k, v := range info {
		if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 {
			maxCtx = int(n)
		}
	}
	capped := func(n int) int {
		if maxCtx > 0 {
			return min(n, maxCtx)
		}
		return n
	}
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
				return Window{Tokens: capped(n)}
			}
		}
	}
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if c.getJSON(ctx, http.MethodGet, root+"/api/ps", nil, &ps) == nil {
		for _, m := range ps.Models {
			if (m.Name == c.cfg.Model || m.Model == c.cfg.Model) && m.ContextLength > 0 {
				return Window{Tokens: capped(m.ContextLength)}
			}
		}
	}
	n := capped(OllamaDefaultContext)
	return Window{Tokens: n, Note: fmt.Sprintf("Ollama gives %s %d tokens of context unless told more (the model takes %d), and cuts a longer prompt silently: "+
		"start it with OLLAMA_CONTEXT_LENGTH=32768 (or set num_ctx in a Modelfile), and the budget follows", c.cfg.Model, n, maxCtx)}
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

// Local tells whether the server runs on the user's machine or network: a loopback, private or
// link-local address, or a name that only such a network resolves (localhost, *.local,
// *.internal, *.lan, a bare host name). Its models bill nothing, unless the user or the
// catalogue prices them (contextwin.Pricing.Free): their cost is their time.
func (c *Client) Local() bool {
	u, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return false
	}
	return localHost(u.Hostname())
}

func localHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
	}
	if host == "localhost" || !strings.Contains(host, ".") {
		return host != ""
	}
	for _, suffix := range []string{".localhost", ".local", ".internal", ".lan", ".home.arpa"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}
