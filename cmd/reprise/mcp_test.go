package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/mcp/mcptest"
)

const runSecret = "AIzaRunMCPsecret0123456789abc"

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mcpCall(name string, args map[string]any) geminitest.Turn {
	return geminitest.Turn{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: name, Args: args}}}}
}

// TestRunMCP: `reprise run --mcp-config` runs the reference server nobody here wrote and a Go
// server built with the SDK; their results reach the model bounded and redacted like any tool's,
// and a server the workspace declares is not started without --trust-mcp.
func TestRunMCP(t *testing.T) {
	everything := mcptest.Everything(t)
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "workspace-server-ran")
	writeJSON(t, filepath.Join(ws, ".vscode", "mcp.json"), map[string]any{"servers": map[string]any{
		"evil": map[string]any{"command": "sh", "args": []string{"-c", "touch " + marker}},
	}})
	config := filepath.Join(t.TempDir(), "mcp.json")
	writeJSON(t, config, map[string]any{"servers": map[string]any{
		"tools":      mcptest.JSON(map[string]string{mcptest.LeakEnv: runSecret}),
		"everything": map[string]any{"type": "stdio", "command": "node", "args": []string{everything, "stdio"}},
	}})
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		mcpCall("everything__echo", map[string]any{"message": "hello"}),
		mcpCall("everything__get-tiny-image", map[string]any{}),
		mcpCall("tools__leak", map[string]any{}),
		mcpCall("tools__lines", map[string]any{"lines": 3000}),
		{Parts: []geminitest.Part{{Text: "Done with the tools."}}},
	}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": runSecret, "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--mcp-config", config, "--allow-mcp", "everything", "--allow-mcp", "tools", "use the tools"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the workspace's server ran without --trust-mcp")
	}
	if !strings.Contains(errOut, "declares MCP servers (evil): not started; --trust-mcp starts them") {
		t.Errorf("stderr does not say the workspace server was left out:\n%s", errOut)
	}
	reqs := srv.Requests()
	var fns []string
	var last geminitest.Request
	for _, r := range reqs {
		if len(r.Functions) > 0 {
			fns, last = r.Functions, r
		}
	}
	joined := strings.Join(fns, " ")
	for _, want := range []string{"everything__echo", "everything__get-tiny-image", "tools__leak"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s is not declared: %v", want, fns)
		}
	}
	var results []string
	for _, c := range last.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				b, _ := json.Marshal(p.FunctionResponse.Response)
				results = append(results, string(b))
			}
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d function responses, want 4: %v", len(results), results)
	}
	if !strings.Contains(results[0], "Echo: hello") || !strings.Contains(results[1], "image/png") {
		t.Errorf("reference server results: %.200q, %.200q", results[0], results[1])
	}
	if strings.Contains(strings.Join(results, ""), runSecret) || strings.Contains(out, runSecret) || strings.Contains(errOut, runSecret) {
		t.Error("the secret a server printed reached the model or the terminal")
	}
	if !strings.Contains(results[3], "line 3000 of the report") || len(results[3]) > 6000 || !strings.Contains(results[3], "saved whole to") {
		t.Errorf("a long MCP output is not bounded and saved: %d bytes", len(results[3]))
	}
}

// TestRunMCPYesIsNotAGrant: --yes answers commands, not MCP tools, which need --allow-mcp.
func TestRunMCPYesIsNotAGrant(t *testing.T) {
	config := filepath.Join(t.TempDir(), "mcp.json")
	writeJSON(t, config, map[string]any{"servers": map[string]any{"tools": mcptest.JSON(nil)}})
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
		mcpCall("tools__echo", map[string]any{"text": "hi"}),
		{Parts: []geminitest.Part{{Text: "It was refused."}}},
	}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()}
	code, out, errOut := runMain(t, []string{"run", "--workspace", t.TempDir(), "--mcp-config", config, "--yes", "echo"}, env(vars))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(errOut, "the MCP tool tools__echo was refused: --yes covers commands, not MCP tools (--allow-mcp tools or --allow-mcp tools__echo)") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

func TestRunMCPConfigErrors(t *testing.T) {
	// A closed address: the configuration must fail before any model call.
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9", "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()}
	bad := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(bad, []byte(`{"servers": {"x": {"type": "stdio"}}}`), 0o644)
	for _, args := range [][]string{
		{"run", "--workspace", t.TempDir(), "--mcp-config", filepath.Join(t.TempDir(), "missing.json"), "x"},
		{"run", "--workspace", t.TempDir(), "--mcp-config", bad, "x"},
	} {
		code, _, errOut := runMain(t, args, env(vars))
		if code == 0 || !strings.Contains(errOut, "--mcp-config") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestRunTrustMCPSaysWhatItTrusts: --trust-mcp starts the workspace's servers with the user's
// rights, and says which, what they run and the workspace code they load.
func TestRunTrustMCPSaysWhatItTrusts(t *testing.T) {
	ws := t.TempDir()
	writeJSON(t, filepath.Join(ws, ".vscode", "mcp.json"), map[string]any{"servers": map[string]any{
		"local": map[string]any{"command": "sh", "args": []string{"./tools/mcp.sh"}},
	}})
	if err := os.MkdirAll(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "tools", "mcp.sh"), []byte(". ./tools/lib.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{{Parts: []geminitest.Part{{Text: "Hi."}}}}})
	defer srv.Close()
	vars := map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()}
	_, out, errOut := runMain(t, []string{"run", "--workspace", ws, "--trust-mcp", "hello"}, env(vars))
	want := `reprise: --trust-mcp: the workspace's MCP server "local" runs with your rights, unsandboxed: sh ./tools/mcp.sh, with the code in tools`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr does not say what --trust-mcp trusts:\n%s\n%s", errOut, out)
	}
}
