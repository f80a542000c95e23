package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// doctorScript answers every request of a measure with a short text.
func doctorScript(cache geminitest.Cache) geminitest.Script {
	s := geminitest.Script{Cache: cache}
	for range 60 {
		s.Turns = append(s.Turns, geminitest.Turn{Parts: []geminitest.Part{{Text: "ok"}}})
	}
	return s
}

// TestDoctorCache runs reprise doctor cache against the fake under each of its caching rules and
// checks that it reports each right, saves it with its date, and that the catalogue the sessions
// plan with carries it.
func TestDoctorCache(t *testing.T) {
	const model = "gemini-3.8-flash"
	for _, tt := range []struct {
		name  string
		cache geminitest.Cache
		want  []string
		check func(t *testing.T, f catalog.Finding)
	}{
		{"as the catalogue says", geminitest.Cache{}, []string{
			"Cache minimum: a prefix of 4,096 tokens was cached, one of 2,048 was not: the catalogue's 4,096 holds.",
			"Implicit hits on a growing prefix: 100 % of the expected cached tokens, over 6 calls.",
			"a request reading an explicit cache got no implicit hit on the rest, in 2 tries.",
		}, func(t *testing.T, f catalog.Finding) {
			if !f.CatalogueHolds || f.OverExplicit == nil || *f.OverExplicit || f.HitRate < 0.99 {
				t.Errorf("finding %+v", f)
			}
		}},
		{"a lower minimum", geminitest.Cache{MinTokens: 2048}, []string{
			"Cache minimum: a prefix of 2,048 tokens was cached, one of 1,024 was not, where the catalogue says 4,096: sessions plan with 2,048.",
		}, func(t *testing.T, f catalog.Finding) {
			if f.CacheMinTokens != 2048 || f.CatalogueHolds {
				t.Errorf("finding %+v", f)
			}
			if got := catalog.Builtin().WithFindings(catalog.Findings{Models: map[string]catalog.Finding{model: f}}).CacheMin(model); got != 2048 {
				t.Errorf("the sessions' catalogue has a minimum of %d, want 2048", got)
			}
		}},
		{"half the hits missed", geminitest.Cache{MissRate: 0.5, Seed: 3}, []string{
			"Implicit hits on a growing prefix:",
		}, func(t *testing.T, f catalog.Finding) {
			// A few calls' draws: some hit, some miss; and the minimum, tried more often at that
			// rate, is still found where it is.
			if f.HitRate <= 0 || f.HitRate >= 1 || f.Calls != doctorGrowth || !f.CatalogueHolds {
				t.Errorf("hit rate %.2f over %d calls, minimum %+v: want some hits and some misses, the catalogue's minimum found", f.HitRate, f.Calls, f)
			}
		}},
		{"implicit hits over an explicit cache", geminitest.Cache{OverExplicit: true}, []string{
			"a request reading an explicit cache also got implicit hits on the rest: a read forgoes nothing.",
		}, func(t *testing.T, f catalog.Finding) {
			if f.OverExplicit == nil || !*f.OverExplicit {
				t.Errorf("finding %+v", f)
			}
			if !catalog.Builtin().WithFindings(catalog.Findings{Models: map[string]catalog.Finding{model: f}}).OverExplicit(model) {
				t.Error("the sessions' catalogue does not carry it")
			}
		}},
		{"no implicit caching", geminitest.Cache{Off: true}, []string{
			"Cache minimum: no prefix was reported cached, up to 8,192 tokens",
			"Explicit cache and implicit hits: not measured",
		}, func(t *testing.T, f catalog.Finding) {
			if !f.NoImplicit || f.OverExplicit != nil {
				t.Errorf("finding %+v", f)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := geminitest.New(doctorScript(tt.cache))
			defer srv.Close()
			home := t.TempDir()
			getenv := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": home})
			var out, errb bytes.Buffer
			if code := run(t.Context(), []string{"doctor", "cache", "--yes"}, strings.NewReader(""), &out, &errb, getenv); code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
			}
			t.Log(out.String())
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the report lacks %q:\n%s", want, out.String())
				}
			}
			all, err := catalog.LoadFindings(home)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := all.Models[model]
			if !ok || f.Measured.IsZero() || f.Requests == 0 || f.Cost <= 0 {
				t.Fatalf("saved %+v", all)
			}
			if f.Requests != len(srv.Requests())-countModelInfo(srv) {
				t.Errorf("%d requests counted, the fake saw %d", f.Requests, len(srv.Requests())-countModelInfo(srv))
			}
			if st := srv.ExplicitCaches(); st.Live != 0 {
				t.Errorf("%d explicit caches left behind", st.Live)
			}
			tt.check(t, f)
			// What serve, run and acp do at start: the catalogue every session plans with
			// carries the finding.
			t.Cleanup(func() { catalog.UseFindings(catalog.Findings{}) })
			useFindings(getenv, &errb)
			want := catalog.Builtin().WithFindings(all)
			if got := catalog.Builtin(); got.CacheMin(model) != want.CacheMin(model) || got.OverExplicit(model) != want.OverExplicit(model) || errb.Len() != 0 {
				t.Errorf("after useFindings: minimum %d, over explicit %v; want %d, %v (stderr %q)", got.CacheMin(model), got.OverExplicit(model), want.CacheMin(model), want.OverExplicit(model), errb.String())
			}
		})
	}
}

// countModelInfo is the fake's requests that were not generations (model info, caches).
func countModelInfo(srv *geminitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if !strings.Contains(r.Path, "generateContent") && !strings.Contains(r.Path, "GenerateContent") {
			n++
		}
	}
	return n
}

// TestDoctorAsksFirst: without --yes the doctor says what it will spend and sends nothing unless
// told yes; a wrong subject is a usage error.
func TestDoctorAsksFirst(t *testing.T) {
	srv := geminitest.New(doctorScript(geminitest.Cache{}))
	defer srv.Close()
	getenv := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir()})
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"doctor", "cache"}, strings.NewReader("n\n"), &out, &errb, getenv)
	if code == 0 || !strings.Contains(out.String(), "up to $") || !strings.Contains(errb.String(), "nothing sent") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if n := len(srv.Requests()) - countModelInfo(srv); n != 0 {
		t.Errorf("%d generations sent before the user agreed", n)
	}
	if code, _, errOut := runMain(t, []string{"doctor", "caches"}, getenv); code != 2 || !strings.Contains(errOut, "reprise doctor cache") {
		t.Errorf("a wrong subject: exit %d, %q", code, errOut)
	}
}
