package export

import (
	"fmt"
	"html"
	"strings"
)

// style is the whole page's: light, and dark when the reader's system is. Nothing is loaded:
// the page's policy forbids any request, and it holds no link, image or script.
const style = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --box: #f6f8fa; --you: #ddf4ff; --accent: #0969da; --bad: #cf222e; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --box: #151b23; --you: #0c2d6b; --accent: #4493f8; --bad: #f85149; } }
body { background: var(--bg); color: var(--fg); font: 15px/1.5 -apple-system, "Segoe UI", system-ui, sans-serif; max-width: 860px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.5em; margin: 0 0 4px; } h2 { font-size: 1.1em; margin: 32px 0 2px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.meta, .figures { color: var(--muted); font-size: 0.9em; } .total { margin: 8px 0 0; }
.who { font-weight: 600; font-size: 0.85em; color: var(--muted); margin: 14px 0 2px; }
.you { background: var(--you); border-radius: 6px; padding: 8px 12px; white-space: pre-wrap; }
.text { white-space: pre-wrap; }
.note { border-left: 3px solid var(--line); padding: 2px 10px; color: var(--muted); white-space: pre-wrap; }
details.tool { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; background: var(--box); }
details.tool summary { cursor: pointer; padding: 4px 10px; font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: 0.85em; overflow-wrap: anywhere; }
details.tool.bad summary { color: var(--bad); }
details pre { margin: 0; padding: 8px 10px; border-top: 1px solid var(--line); overflow-x: auto; font-size: 0.85em; white-space: pre-wrap; overflow-wrap: anywhere; }
.omitted { color: var(--muted); font-size: 0.85em; padding: 4px 10px; border-top: 1px solid var(--line); }
.marker { color: var(--muted); font-size: 0.9em; border-top: 1px dashed var(--line); border-bottom: 1px dashed var(--line); padding: 4px 0; margin: 12px 0; }
.marker details pre { border: none; padding: 4px 0; }
ul.plan { list-style: none; padding-left: 4px; margin: 4px 0; } ul.plan .completed { color: var(--muted); } ul.plan .cancelled { text-decoration: line-through; color: var(--muted); } ul.plan .in_progress { font-weight: 600; }
.stop { color: var(--bad); font-size: 0.9em; }
`

// HTML writes d as one self-contained page: inline style, no script, nothing it would load.
func HTML(d Doc) string {
	var b strings.Builder
	e := html.EscapeString
	title := oneLine(d.Title, "(untitled)")
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>%s · Reprise</title>
<style>%s</style>
</head>
<body>
<h1>%s</h1>
`, e(title), style, e(title))
	meta := fmt.Sprintf("Session %s · %s · %s · started %s", d.ID, d.Model, d.Workspace, d.Created.Local().Format("2006-01-02 15:04"))
	if o := d.origin(); o != "" {
		meta += " · " + o
	}
	fmt.Fprintf(&b, "<div class=\"meta\">%s</div>\n<div class=\"total\"><strong>Total:</strong> %s</div>\n", e(meta), e(Figures(d.Totals)))
	for _, s := range d.Before {
		htmlStep(&b, s)
	}
	for _, t := range d.Turns {
		fmt.Fprintf(&b, "<section class=\"turn\">\n<h2>Turn %d</h2>\n<div class=\"figures\">%s</div>\n", t.N, e(Figures(t.Totals)))
		for _, s := range t.Steps {
			htmlStep(&b, s)
		}
		if l := stopLine(t); l != "" {
			fmt.Fprintf(&b, "<p class=\"stop\">%s</p>\n", e(l))
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

func htmlStep(b *strings.Builder, s Step) {
	e := html.EscapeString
	switch s.Kind {
	case StepUser:
		fmt.Fprintf(b, "<div class=\"who\">You</div>\n<div class=\"you\">%s</div>\n", e(strings.TrimSpace(s.Text)))
	case StepAgent:
		fmt.Fprintf(b, "<div class=\"who\">Reprise</div>\n<div class=\"text\">%s</div>\n", e(strings.TrimSpace(s.Text)))
	case StepNote:
		fmt.Fprintf(b, "<div class=\"note\">%s</div>\n", e(strings.TrimSpace(s.Text)))
	case StepTool:
		t := s.Tool
		class := "tool"
		if t.Refused || t.Error {
			class += " bad"
		}
		fmt.Fprintf(b, "<details class=\"%s\"><summary>%s</summary>", class, e(toolHead(t)))
		if t.answered {
			fmt.Fprintf(b, "<pre>%s</pre>", e(t.Output))
			if n := outputNote(t); n != "" {
				fmt.Fprintf(b, "<div class=\"omitted\">%s</div>", e(n))
			}
		}
		b.WriteString("</details>\n")
	case StepCompaction:
		if cp := s.Checkpoint; cp != nil {
			fmt.Fprintf(b, "<div class=\"marker\">%s", e(checkpointLine(cp)))
			if cp.Cleared == 0 && cp.Summary != "" {
				fmt.Fprintf(b, "<details><summary>Summary</summary><pre>%s</pre></details>", e(cp.Summary))
			}
			b.WriteString("</div>\n")
		} else {
			fmt.Fprintf(b, "<div class=\"marker\">%s</div>\n", e(s.Text))
		}
	case StepPlan:
		b.WriteString("<div class=\"who\">Plan</div>\n<ul class=\"plan\">")
		if len(s.Plan) == 0 {
			b.WriteString("<li>(cleared)</li>")
		}
		for _, t := range s.Plan {
			fmt.Fprintf(b, "<li class=\"%s\">%s %s</li>", e(t.Status), planGlyph[t.Status], e(t.Description))
		}
		b.WriteString("</ul>\n")
	case StepRestore, StepFork:
		fmt.Fprintf(b, "<div class=\"marker\">%s</div>\n", e(s.Text))
	}
}

var planGlyph = map[string]string{"pending": "○", "in_progress": "▶", "completed": "✓", "cancelled": "⊘"}

// Formats an export is written in.
const (
	FormatMarkdown = "md"
	FormatHTML     = "html"
)

// Render writes d in format (md or html).
func Render(d Doc, format string) (string, error) {
	switch format {
	case FormatMarkdown, "markdown":
		return Markdown(d), nil
	case FormatHTML:
		return HTML(d), nil
	}
	return "", fmt.Errorf("unknown export format %q: md or html", format)
}
