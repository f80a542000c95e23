package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/agent/gemini"
	"github.com/reprise-dev/reprise/contextwin/catalog"
)

// modelsCmd prints the models this key can use: the API's list (models.list, cached on disk for a
// day) joined with the model catalogue, which adds status, prices, cache minimum, explicit
// caching and thinking levels. Retired models are left out unless --all.
func modelsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := withUsage(flag.NewFlagSet("reprise models", flag.ContinueOnError), "Usage: reprise models [--all] [--refresh] [--json]")
	all := fs.Bool("all", false, "also list retired models and the catalogue's models the API does not list")
	refresh := fs.Bool("refresh", false, "read the API's list again instead of the copy cached for a day")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	var provider providerFlags
	provider.register(fs)
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reprise models: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if err := provider.check(); err != nil {
		fmt.Fprintln(stderr, "reprise models:", err)
		return errUsage
	}
	if provider.provider == providerOpenAI {
		return endpointModels(ctx, provider, getenv, stdout, *asJSON)
	}
	cat := catalog.Builtin()
	now := timeNow()
	list, cached, err := gemini.ListModelsCached(ctx, gemini.ConfigFromEnv(getenv), now, *refresh)
	if err != nil {
		if errors.Is(err, gemini.ErrNoAPIKey) {
			return err
		}
		fmt.Fprintf(stderr, "reprise: warning: %s; showing the catalogue alone\n", shortError(err.Error()))
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
		status := e.StatusText()
		if e.ID == cat.DefaultModel() {
			status += " (default)"
		}
		cacheMin, explicit, thinking := "?", "?", "?"
		if e.Known {
			cacheMin, explicit, thinking = catalog.Commas(e.CacheMinTokens), yesNo(e.ExplicitCaching), e.Thinking.Describe()
			if e.ExplicitCaching {
				explicit += ", " + catalog.Dollars(e.CacheStorage) + "/h"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, status, catalog.Kilo(e.InputTokenLimit), e.PriceText(), cacheMin, explicit, thinking)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nPrices of %s from the model catalogue current as of %s; a model it does not know is priced unknown\n"+
		"(give one with --prices or the prices setting). Explicit cache: its storage per 1M tokens per hour. Thinking: the levels --thinking accepts, the default in brackets.\n",
		now.Format(time.DateOnly), cat.CurrentAsOf)
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
