package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/contextwin/catalog"
	"github.com/reprise-dev/reprise/lsp/lsptest"
)

// TestExportOverLSP: reprise.export gives the session as Markdown (its totals those reprise.context
// counts) or writes it as HTML where the user asked in the workspace; a path outside it or in its
// version control, a missing folder and an unknown format are InvalidParams, nothing written.
func TestExportOverLSP(t *testing.T) {
	opts := envOpts{editor: lsptest.Options{Experimental: true}, files: map[string]string{"a.txt": "alpha\n", "exports/keep": "", ".git/HEAD": "ref: main\n"}}
	e := newEnv(t, opts, call("read_file", map[string]any{"path": "a.txt"}), text("It says alpha."))
	id := e.ask("What does a.txt say?", "")
	e.turnEnd(id)
	var md exportResult
	if err := e.ed.Execute(e.ctx, CommandExport, ExportArgs{}, &md); err != nil {
		t.Fatal(err)
	}
	var rep contextResult
	if err := e.ed.Execute(e.ctx, CommandContext, SessionArgs{SessionID: id}, &rep); err != nil {
		t.Fatal(err)
	}
	total := "**Total:** 2 model calls · " + catalog.Commas(rep.Totals.InputTokens) + " input tokens"
	for _, want := range []string{"# What does a.txt say?", total, "> What does a.txt say?", "**Tool** `read_file {\"path\":\"a.txt\"}`", "alpha", "It says alpha."} {
		if !strings.Contains(md.Content, want) {
			t.Errorf("the export lacks %q:\n%s", want, md.Content)
		}
	}
	if md.Format != "md" || md.FileName != "reprise-"+id+".md" || md.Path != "" {
		t.Errorf("reprise.export = %+v", md)
	}
	var page exportResult
	if err := e.ed.Execute(e.ctx, CommandExport, ExportArgs{Format: "html", Path: "exports/session.html"}, &page); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(e.ws, "exports", "session.html")
	if real, _ := filepath.EvalSymlinks(filepath.Dir(want)); page.Path != filepath.Join(real, "session.html") || page.Content != "" {
		t.Errorf("reprise.export html = %+v", page)
	}
	if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), "<h2>Turn 1</h2>") || strings.Contains(string(b), "<script") {
		t.Errorf("the page written: %v\n%.300s", err, b)
	}
	outside := filepath.Join(t.TempDir(), "x.md")
	for _, tt := range []struct {
		arg  ExportArgs
		want string
	}{
		{ExportArgs{Path: outside}, "reprise.export: path " + outside + " is outside the workspace"},
		{ExportArgs{Path: "../x.md"}, "is outside the workspace"},
		{ExportArgs{Path: ".git/x.md"}, "is in the workspace's version control"},
		{ExportArgs{Path: "missing/x.md"}, "reprise.export: no folder"},
		{ExportArgs{Path: "exports"}, "is a folder"},
		{ExportArgs{Format: "pdf"}, `reprise.export: format must be md or html, got "pdf"`},
	} {
		err := e.ed.Execute(e.ctx, CommandExport, tt.arg, nil)
		if code, msg := rpcError(t, err); code != -32602 || !strings.Contains(msg, tt.want) {
			t.Errorf("export %+v: %d %q, want -32602 %q", tt.arg, code, msg, tt.want)
		}
	}
	for _, p := range []string{outside, filepath.Join(e.ws, ".git", "x.md"), filepath.Join(filepath.Dir(e.ws), "x.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused export wrote %s", p)
		}
	}
}
