package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// modelsCacheTTL is how long the API's list of models is reused from disk.
const modelsCacheTTL = 24 * time.Hour

// modelsList is the API's list of models as cached on disk: no key, only what the list said,
// where from and when.
type modelsList struct {
	Fetched  time.Time        `json:"fetched"`
	Endpoint string           `json:"endpoint"`
	Models   []catalog.Listed `json:"models"`
}

// modelsCmd prints the models this key can use: the API's list (models.list, cached on disk for a
// day) joined with the model catalogue, which adds status, prices, cache minimum, explicit
// caching and thinking levels. Retired models are left out unless --all.
func modelsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("reprise models", flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := fs.Bool("all", false, "also list retired models and the catalogue's models the API does not list")
	refresh := fs.Bool("refresh", false, "read the API's list again instead of the copy cached for a day")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return errUsage
	}
	cat := catalog.Builtin()
	now := timeNow()
	list, cached, err := listModels(ctx, getenv, now, *refresh)
	if err != nil {
		if errors.Is(err, gemini.ErrNoAPIKey) {
			return err
		}
		fmt.Fprintf(stderr, "reprise: warning: %v; showing the catalogue alone\n", err)
		*all = true
	}
	entries := cat.Join(list.Models, now, *all)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	if err := printModels(stdout, entries, cat, now); err != nil {
		return err
	}
	switch {
	case err != nil:
	case cached:
		fmt.Fprintf(stdout, "The API's list as read %s (cached for a day; --refresh reads it again).\n", list.Fetched.Local().Format("2006-01-02 15:04"))
	default:
		fmt.Fprintln(stdout, "The API's list read just now.")
	}
	return nil
}

// printModels prints one row per model.
func printModels(w io.Writer, entries []catalog.Entry, cat *catalog.Catalog, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tstatus\tcontext\t$/1M in · cached · out\tcache min\texplicit cache\tthinking")
	for _, e := range entries {
		status := string(e.Status)
		switch {
		case !e.Known:
			status = "not in the catalogue"
		case e.Retired:
			status = "retired"
			if e.Replacement != "" {
				status += " → " + e.Replacement
			}
		}
		if e.ID == cat.DefaultModel() {
			status += " (default)"
		}
		if !e.Listed && e.Known && !e.Retired {
			status += ", not listed for this key"
		}
		prices := "unknown"
		if e.Priced {
			prices = fmt.Sprintf("%s · %s · %s", dollars(e.Rates.Input), dollars(e.Rates.CachedInput), dollars(e.Rates.Output))
			if e.Long != nil {
				prices += fmt.Sprintf(" (more above %s)", kilo(e.Long.Above))
			}
		}
		cacheMin, explicit, thinking := "?", "?", "?"
		if e.Known {
			cacheMin, explicit, thinking = commas(e.CacheMinTokens), yesNo(e.ExplicitCaching), thinkingLevels(e.Thinking)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, status, kilo(e.InputTokenLimit), prices, cacheMin, explicit, thinking)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nPrices of %s from the model catalogue current as of %s; a model it does not know is priced unknown\n"+
		"(give one with --prices or the prices setting). Thinking: the levels --thinking accepts, the default in brackets.\n",
		now.Format(time.DateOnly), cat.CurrentAsOf)
	return err
}

func dollars(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if !strings.Contains(s, ".") {
		s += ".00"
	} else if len(s)-strings.IndexByte(s, '.') == 2 {
		s += "0"
	}
	return "$" + s
}

func kilo(n int) string {
	switch {
	case n >= 1_000_000 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1000:
		return fmt.Sprintf("%dk", n/1000)
	default:
		return fmt.Sprint(n)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// thinkingLevels lists what --thinking accepts for a model: its levels, or on a budget model the
// levels its budgets stand for; the default in brackets.
func thinkingLevels(t catalog.Thinking) string {
	levels := t.Accepted()
	if len(levels) == 0 {
		return "—"
	}
	var out []string
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

// listModels reads the API's list of models, or its copy cached on disk when it is less than a
// day old (cached true) and refresh is not asked.
func listModels(ctx context.Context, getenv func(string) string, now time.Time, refresh bool) (modelsList, bool, error) {
	cfg := gemini.ConfigFromEnv(getenv)
	endpoint := cfg.BaseURL
	if endpoint == "" {
		endpoint = "default"
	}
	if cfg.Vertex {
		endpoint += " vertex " + cfg.Project + " " + cfg.Location
	}
	path := modelsCachePath(getenv, endpoint)
	if !refresh && path != "" {
		if l, ok := readModelsCache(path, endpoint, now); ok {
			return l, true, nil
		}
	}
	client, err := gemini.New(ctx, cfg)
	if err != nil {
		return modelsList{}, false, err
	}
	listed, err := client.ListModels(ctx)
	if err != nil {
		return modelsList{}, false, err
	}
	l := modelsList{Fetched: now, Endpoint: endpoint}
	for _, m := range listed {
		l.Models = append(l.Models, catalog.Listed{ID: m.ID, DisplayName: m.DisplayName, InputTokenLimit: m.InputTokenLimit, OutputTokenLimit: m.OutputTokenLimit})
	}
	if path != "" {
		writeModelsCache(path, l) // a cache that cannot be written is read again next time
	}
	return l, false, nil
}

// modelsCachePath is where the list of an endpoint is cached: the user's cache directory
// ($XDG_CACHE_HOME/reprise, else the OS's), one file per endpoint, named by a hash of it.
func modelsCachePath(getenv func(string) string, endpoint string) string {
	dir := getenv("XDG_CACHE_HOME")
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = d
	}
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(dir, "reprise", "models-"+hex.EncodeToString(sum[:6])+".json")
}

func readModelsCache(path, endpoint string, now time.Time) (modelsList, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return modelsList{}, false
	}
	var l modelsList
	if json.Unmarshal(b, &l) != nil || l.Endpoint != endpoint || now.Before(l.Fetched) || now.Sub(l.Fetched) > modelsCacheTTL {
		return modelsList{}, false
	}
	return l, true
}

func writeModelsCache(path string, l modelsList) {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
