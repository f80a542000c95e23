package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/contextwin"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// reprise doctor cache measures, with the user's own key, three facts about Gemini's caching the
// policy rests on and Google documents partly or not at all: the model's cache minimum, its
// implicit hit rate on a prefix that grows as a session's does, and whether a request reading an
// explicit cache also gets implicit hits on the rest of its prompt. The findings are saved with
// their date (catalog.Findings) and read by the commands that start sessions (catalog.UseFindings).

// doctorSizes are the shared prefixes tried for the minimum, in tokens; the catalogue's is added.
var doctorSizes = []int{1024, 2048, 4096, 8192}

// doctorGrowth is how many calls measure the hit rate, each adding doctorStep tokens.
const (
	doctorGrowth = 6
	doctorStep   = 600
)

// useFindings makes the catalogue the commands plan with carry what reprise doctor cache measured
// (catalog.UseFindings); findings that cannot be read are said and left out.
func useFindings(getenv func(string) string, stderr io.Writer) {
	dir, err := stateHome(getenv)
	if err != nil {
		return
	}
	f, err := catalog.LoadFindings(dir)
	if err != nil {
		fmt.Fprintf(stderr, "reprise: warning: %v: the catalogue's caching figures are used\n", err)
		return
	}
	if len(f.Models) > 0 {
		catalog.UseFindings(f)
	}
}

// doctorCmd runs `reprise doctor SUBJECT`; cache is the only subject.
func doctorCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := withUsage(flag.NewFlagSet("reprise doctor", flag.ContinueOnError), "Usage: reprise doctor cache [--model M] [--yes]\n\n"+
		"Measures, with your own key and for a few US cents, what the model's caching does: its cache\n"+
		"minimum, its implicit hit rate on a growing prefix, and whether a request reading an explicit\n"+
		"cache also gets implicit hits on the rest. The findings are saved with their date; sessions\n"+
		"started afterwards plan with them.")
	model := fs.String("model", catalog.Builtin().DefaultModel(), "the model to measure")
	yes := fs.Bool("yes", false, "do not ask before spending")
	// The subject first, as the usage writes it; its flags after it.
	if len(args) > 0 && args[0] == "cache" {
		args = args[1:]
	} else if !askedHelp(args) {
		fmt.Fprintln(stderr, "reprise doctor: say what to check: reprise doctor cache")
		return errUsage
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reprise doctor cache: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	name, err := catalog.ParseModelName(*model)
	if err != nil {
		fmt.Fprintln(stderr, "reprise doctor:", err)
		return errUsage
	}
	dir, err := stateHome(getenv)
	if err != nil {
		return err
	}
	cfg := gemini.ConfigFromEnv(getenv)
	cfg.Model = name
	if w := gemini.CheckBaseURL(cfg.BaseURL); w != "" {
		fmt.Fprintln(stderr, "reprise: warning:", w)
	}
	client, err := gemini.New(ctx, cfg)
	if err != nil {
		return err
	}
	cat := catalog.Builtin()
	row, known := cat.Lookup(name)
	prices, priced := contextwin.Pricing{Catalog: cat}.At(name, timeNow(), 0)
	sizes := doctorSizesFor(row.CacheMinTokens)
	requests, bound := doctorBound(sizes)
	if priced {
		fmt.Fprintf(stdout, "This sends at most %d requests to %s, %s input tokens: up to $%.2f of your key (a few cents when the cache hits).\n",
			requests, name, catalog.Commas(bound), float64(bound)*prices.Input/1e6)
	} else {
		fmt.Fprintf(stdout, "This sends at most %d requests to %s, %s input tokens (no price known for it).\n", requests, name, catalog.Commas(bound))
	}
	if !*yes && !confirm(stdin, stdout, "Go on? [y/N] ") {
		return errors.New("nothing sent")
	}
	d := doctor{client: client, model: name, nonce: nonce(), prices: prices, priced: priced}
	f := d.measure(ctx, row.CacheMinTokens, known && row.ExplicitCaching)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	writeFindings(stdout, name, row.CacheMinTokens, f)
	all, err := catalog.LoadFindings(dir)
	if err != nil {
		fmt.Fprintf(stderr, "reprise: warning: the findings saved before are unreadable and are replaced: %v\n", err)
	}
	if all.Models == nil {
		all.Models = map[string]catalog.Finding{}
	}
	all.Models[name] = f
	if err := all.Save(dir); err != nil {
		return fmt.Errorf("save the findings: %w", err)
	}
	fmt.Fprintf(stdout, "Saved to %s: sessions started from now on plan with them.\n", filepath.Join(dir, catalog.FindingsFile))
	return nil
}

// doctorSizesFor are the sizes the minimum is tried at: doctorSizes and the catalogue's figure.
func doctorSizesFor(catalogueMin int) []int {
	sizes := slices.Clone(doctorSizes)
	if catalogueMin > 0 && !slices.Contains(sizes, catalogueMin) {
		sizes = append(sizes, catalogueMin)
		slices.Sort(sizes)
	}
	return sizes
}

// doctorBound is the most requests and input tokens a measure sends, every size tried
// doctorMaxTries times and every token billed in full.
func doctorBound(sizes []int) (requests, tokens int) {
	for _, s := range sizes {
		requests += 2 * doctorMaxTries
		tokens += 2 * doctorMaxTries * (s + s/8)
	}
	big := sizes[len(sizes)-1]
	for i := range doctorGrowth + 1 {
		tokens += big + i*doctorStep
	}
	return requests + doctorGrowth + 1 + 3, tokens + 4*big // the explicit cache, and three requests over it
}

// doctorMaxTries is the most tries a size of the minimum gets (minTries).
const doctorMaxTries = 6

func confirm(stdin io.Reader, stdout io.Writer, question string) bool {
	fmt.Fprint(stdout, question)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
}

// nonce starts every prefix a measure sends, so that no earlier request, of this run or of
// another, shares it.
func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// doctor is one measure: its client, what it sends and what it has cost.
type doctor struct {
	client   *gemini.Client
	model    string
	nonce    string
	prices   contextwin.Prices
	priced   bool
	requests int
	cost     float64
}

// filler is about tokens tokens of text (a quarter token per character, as the catalogue's
// estimate), different for each label.
func filler(label string, tokens int) string {
	var b strings.Builder
	for i := 0; b.Len() < 4*tokens; i++ {
		fmt.Fprintf(&b, "%s line %d: the quick brown fox jumps over the lazy dog.\n", label, i)
	}
	return b.String()
}

// ask sends system (may be "") and one user message, over cache when set, and returns its usage.
func (d *doctor) ask(ctx context.Context, system string, user string, cache *gemini.CacheRef) (gemini.Usage, error) {
	req := &gemini.Request{System: system, Contents: []*genai.Content{genai.NewContentFromText(user, genai.RoleUser)}, MaxOutputTokens: 8, Cache: cache}
	d.requests++
	for ch, err := range d.client.Generate(ctx, req) {
		if err != nil {
			return gemini.Usage{}, err
		}
		if ch.Done != nil {
			u := ch.Done.Usage
			d.cost += contextwin.CallUsage{Prompt: u.Prompt, Cached: u.Cached, Candidates: u.Candidates, Thoughts: u.Thoughts}.Cost(d.prices)
			return u, nil
		}
	}
	return gemini.Usage{}, errors.New("no answer")
}

// measure runs the three measures; a request that fails ends the one it belongs to, said in the
// finding. The hit rate comes first, at the catalogue's minimum: it says how many tries a size
// needs before its misses mean it is under the minimum rather than bad luck.
func (d *doctor) measure(ctx context.Context, catalogueMin int, explicit bool) catalog.Finding {
	f := catalog.Finding{Measured: timeNow().UTC()}
	d.growing(ctx, max(catalogueMin, doctorSizes[0]), &f)
	d.minimum(ctx, doctorSizesFor(catalogueMin), catalogueMin, minTries(f.HitRate), &f)
	if explicit && !f.NoImplicit {
		d.overExplicit(ctx, max(f.CacheMinTokens, catalogueMin), &f)
	}
	f.Requests, f.Cost = d.requests, d.cost
	return f
}

// minTries is how many tries a size gets when hits land at rate: enough that a size past the
// minimum misses every one of them less than one time in twenty, from 1 to 6; 2 when no hit was
// seen (the catalogue's minimum may be too low).
func minTries(rate float64) int {
	switch {
	case rate <= 0:
		return 2
	case rate >= 0.95:
		return 1
	}
	return min(doctorMaxTries, max(1, int(math.Ceil(math.Log(0.05)/math.Log(1-rate)))))
}

// minimum sends, for each size from the smallest, a prefix of that size twice, two different
// questions after it: the first size whose second request is reported cached is the minimum's
// bound. A miss is tried again, tries times in all (implicit caching is best-effort). Nothing
// cached at any size, with no hit on the growing prefix either, is no implicit caching.
func (d *doctor) minimum(ctx context.Context, sizes []int, catalogueMin, tries int, f *catalog.Finding) {
	for _, size := range sizes {
		prefix := d.nonce + "\n" + filler(fmt.Sprintf("min%d", size), size+size/16)
		hit := false
		for try := range tries {
			if _, err := d.ask(ctx, prefix, fmt.Sprintf("Reply ok. (a%d)", try), nil); err != nil {
				return
			}
			u, err := d.ask(ctx, prefix, fmt.Sprintf("Reply ok. (b%d)", try), nil)
			if err != nil {
				return
			}
			if u.Cached > 0 {
				hit = true
				break
			}
		}
		if hit {
			f.CacheMinTokens = size
			f.CatalogueHolds = catalogueMin > f.LastMissed && catalogueMin <= size
			return
		}
		f.LastMissed = size
	}
	f.NoImplicit = f.HitRate == 0
}

// growing sends a prefix past the minimum, then doctorGrowth requests each adding to the one
// before, as a session's prompt grows: each should find the one before cached.
func (d *doctor) growing(ctx context.Context, least int, f *catalog.Finding) {
	text := d.nonce + "\n" + filler("grow", least+least/8)
	last, reported, expected := 0, 0, 0
	for i := range doctorGrowth + 1 {
		if i > 0 {
			text += filler(fmt.Sprintf("step%d", i), doctorStep)
		}
		u, err := d.ask(ctx, "", text, nil)
		if err != nil {
			break
		}
		if i > 0 {
			expected += last
			reported += min(u.Cached, last)
			f.Calls++
		}
		last = u.Prompt - 2 // what the next request shares: all but the message's end
	}
	if expected > 0 {
		f.HitRate = float64(reported) / float64(expected)
	}
}

// overExplicit makes an explicit cache of a system instruction past the minimum, then sends over
// it the same long message twice, then a third time: a second or third request reported cached
// beyond the cache's tokens got implicit hits on the rest.
func (d *doctor) overExplicit(ctx context.Context, least int, f *catalog.Finding) {
	made, err := d.client.CreateCache(ctx, gemini.CacheSpec{System: d.nonce + "\n" + filler("explicit", least+least/8), TTL: 5 * time.Minute, DisplayName: "reprise doctor " + d.nonce})
	if err != nil {
		return
	}
	if d.priced {
		d.cost += float64(made.Tokens) * (d.prices.Input + d.prices.Storage()*5.0/60) / 1e6
	}
	defer func() { _ = d.client.DeleteCache(context.WithoutCancel(ctx), made.Name) }()
	rest := filler("rest", least+least/8)
	ref := &gemini.CacheRef{Name: made.Name}
	seen := false
	for try := range 3 {
		u, err := d.ask(ctx, "", rest+fmt.Sprintf("\nReply ok. (%d)", try), ref)
		if err != nil {
			return
		}
		if try > 0 && u.Cached > made.Tokens+least/2 {
			seen = true
			break
		}
	}
	f.OverExplicit = &seen
}

// writeFindings prints f as a person reads it.
func writeFindings(w io.Writer, model string, catalogueMin int, f catalog.Finding) {
	fmt.Fprintf(w, "reprise doctor cache · %s · %s\n", model, f.Measured.Format(time.DateOnly))
	switch {
	case f.NoImplicit:
		fmt.Fprintf(w, "Cache minimum: no prefix was reported cached, up to %s tokens: implicit caching is off or missed every try.\n", catalog.Commas(f.LastMissed))
	case f.CacheMinTokens == 0:
		fmt.Fprintf(w, "Cache minimum: none of the prefixes tried, up to %s tokens, was reported cached on its tries, though the growing prefix was: the catalogue's %s is kept.\n",
			catalog.Commas(f.LastMissed), catalog.Commas(catalogueMin))
	case f.CatalogueHolds:
		fmt.Fprintf(w, "Cache minimum: a prefix of %s tokens was cached%s: the catalogue's %s holds.\n", catalog.Commas(f.CacheMinTokens), missedText(f.LastMissed), catalog.Commas(catalogueMin))
	default:
		fmt.Fprintf(w, "Cache minimum: a prefix of %s tokens was cached%s, where the catalogue says %s: sessions plan with %s.\n",
			catalog.Commas(f.CacheMinTokens), missedText(f.LastMissed), catalog.Commas(catalogueMin), catalog.Commas(f.CacheMinTokens))
	}
	if f.Calls > 0 {
		fmt.Fprintf(w, "Implicit hits on a growing prefix: %d %% of the expected cached tokens, over %d calls.\n", int(100*f.HitRate), f.Calls)
	}
	switch {
	case f.OverExplicit == nil:
		fmt.Fprintln(w, "Explicit cache and implicit hits: not measured (no explicit caching, or the measure failed).")
	case *f.OverExplicit:
		fmt.Fprintln(w, "Explicit cache and implicit hits: a request reading an explicit cache also got implicit hits on the rest: a read forgoes nothing.")
	default:
		fmt.Fprintln(w, "Explicit cache and implicit hits: a request reading an explicit cache got no implicit hit on the rest, in 2 tries.")
	}
	fmt.Fprintf(w, "Spent: %d requests, $%.4f.\n", f.Requests, f.Cost)
}

func missedText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", one of %s was not", catalog.Commas(n))
}
