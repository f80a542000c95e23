package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// markCalls is how many calls of a generated session TestTrueMarkIsTheCheapest enumerates every
// schedule of: 3^(markCalls-1) of them.
const markCalls = 9

// TestTrueMarkIsTheCheapest (issue 36): the true mark is the cheapest schedule of clearings as the
// fake bills them. On the first calls of generated sessions, under several cache minimums and
// keep rules, every schedule's requests, built as the first tier would have cleared them, are
// sent through the real genai client to a fresh fake, and billed there: the mark prices each
// schedule as the fake bills it, and its best is the cheapest of them all.
func TestTrueMarkIsTheCheapest(t *testing.T) {
	if testing.Short() {
		t.Skip("sends every schedule of four sessions to the fake")
	}
	figuresOnly(t)
	model := catalog.Builtin().DefaultModel()
	p, ok := contextwin.Pricing{Catalog: catalog.Builtin()}.At(model, timeNow(), 0)
	if !ok {
		t.Fatal("no price for the default model")
	}
	cases := []struct {
		seed            uint64
		minTokens, keep int
	}{
		{1, 0, 3}, {2, 8192, 1}, {3, 2048, 2}, {4, 6000, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("seed %d, minimum %d, keep %d", c.seed, c.minTokens, c.keep), func(t *testing.T) {
			base, err := playScenario(t.Context(), scenarios.Generated(c.seed), noCompaction, t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			reqs := firstCalls(base.Requests, markCalls)
			m, err := newMarkRun(reqs, model, c.keep, filepath.Join(t.TempDir(), "tool-outputs"), p)
			if err != nil {
				t.Fatal(err)
			}
			min := c.minTokens
			if min == 0 {
				min = catalog.Builtin().CacheMin(model)
			}
			best, _, _ := m.best(p, min, 0)
			// Every schedule: at each call but the first, no clearing, all, or all past the
			// minimum. Equal requests are billed on the fake once.
			cheapest, distinct, schedules := math.Inf(1), map[string]bool{}, 1
			for range markCalls - 1 {
				schedules *= 3
			}
			for n := range schedules {
				clears := make([]markClear, markCalls)
				for i := 1; i < markCalls; i, n = i+1, n/3 {
					clears[i] = markClear(n % 3)
				}
				want, requests := m.follow(clears, p, min)
				cheapest = min64(cheapest, want)
				key, err := json.Marshal(requests)
				if err != nil {
					t.Fatal(err)
				}
				if distinct[string(key)] {
					continue
				}
				distinct[string(key)] = true
				got, _ := billOnFake(t, reqs[0].Body, requests, model, c.minTokens, p)
				if math.Abs(got+m.output-want) > 1e-12 {
					t.Fatalf("schedule %v: the fake bills $%.9f, the mark $%.9f", clears, got+m.output, want)
				}
			}
			if math.Abs(best.Cost-cheapest) > 1e-12 {
				t.Fatalf("the mark's best $%.9f at %v; the cheapest schedule billed $%.9f", best.Cost, best.Clearings, cheapest)
			}
			if len(distinct) < 3 {
				t.Fatalf("only %d distinct schedules: the keep rules leave nothing to clear in %d calls", len(distinct), markCalls)
			}
			none, _ := m.follow(nil, p, min)
			t.Logf("%d schedules, %d distinct; the cheapest $%.6f clears at calls %v, none $%.6f", schedules, len(distinct), best.Cost, best.Clearings, none)
		})
	}
}

func min64(a, b float64) float64 { return math.Min(a, b) }

// firstCalls are the requests up to the n-th the model answered.
func firstCalls(reqs []geminitest.Request, n int) []geminitest.Request {
	for i, r := range reqs {
		if r.Usage != nil {
			if n--; n == 0 {
				return reqs[:i+1]
			}
		}
	}
	return reqs
}

// billOnFake sends requests, with the system instruction and tools of the request body first,
// through the genai client to a fresh fake whose cache minimum is minTokens (0: the catalogue's),
// and returns what it billed their input, and each prompt in tokens.
func billOnFake(t *testing.T, first []byte, requests [][]*genai.Content, model string, minTokens int, p contextwin.Prices) (float64, []int) {
	t.Helper()
	var head struct {
		SystemInstruction *genai.Content `json:"systemInstruction"`
		Tools             []*genai.Tool  `json:"tools"`
	}
	if err := json.Unmarshal(first, &head); err != nil {
		t.Fatal(err)
	}
	script := geminitest.Script{Cache: geminitest.Cache{MinTokens: minTokens}}
	for range requests {
		script.Turns = append(script.Turns, geminitest.Turn{Parts: []geminitest.Part{{Text: "ok"}}})
	}
	srv := geminitest.New(script)
	defer srv.Close()
	client, err := genai.NewClient(t.Context(), &genai.ClientConfig{Backend: genai.BackendGeminiAPI, APIKey: "scripted",
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL(), APIVersion: catalog.Builtin().API.Version}})
	if err != nil {
		t.Fatal(err)
	}
	cost, prompts := 0.0, []int{}
	for _, contents := range requests {
		resp, err := client.Models.GenerateContent(t.Context(), model, contents, &genai.GenerateContentConfig{SystemInstruction: head.SystemInstruction, Tools: head.Tools})
		if err != nil {
			t.Fatal(err)
		}
		u := resp.UsageMetadata
		cost += contextwin.CallUsage{Prompt: int(u.PromptTokenCount), Cached: int(u.CachedContentTokenCount)}.Cost(p)
		prompts = append(prompts, int(u.PromptTokenCount))
	}
	return cost, prompts
}
