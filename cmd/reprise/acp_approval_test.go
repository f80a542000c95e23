package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reprise-dev/reprise/agent/gemini/geminitest"
	"github.com/reprise-dev/reprise/agent/tools"
)

// permissionClient is an ACP client that records the permission requests it gets and rejects
// them; it offers nothing else.
type permissionClient struct {
	mu    sync.Mutex // guards asked
	asked []sdk.RequestPermissionRequest
}

func (c *permissionClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, p)
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: "reject"}}}, nil
}

func (c *permissionClient) requests() []sdk.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.RequestPermissionRequest(nil), c.asked...)
}

func (*permissionClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (*permissionClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsReadTextFile)
}
func (*permissionClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodFsWriteTextFile)
}
func (*permissionClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound(sdk.ClientMethodTerminalCreate)
}
func (*permissionClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (*permissionClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, nil
}
func (*permissionClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (*permissionClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, nil
}

// TestAttackACPPermissionSpoofing: the two spoofs of issue 26 in `reprise acp`'s permission
// request, whose title an ACP client shows as the question: one line, the padding counted, the
// right-to-left override escaped, the end of the command in view.
func TestAttackACPPermissionSpoofing(t *testing.T) {
	for _, tc := range []struct{ name, cmd, want string }{
		{"padding", "echo ok" + strings.Repeat(" ", 200) + strings.Repeat("\n", 40) + "rm -rf src", "Run echo ok[200 spaces, 40 newlines]rm -rf src ("},
		{"bidi", "echo ok \u202e; rm -rf src #\u202c", `Run echo ok \u202e; rm -rf src #\u202c (`},
		{"long", "echo " + strings.Repeat("x", 5000) + "; rm -rf src", "xxx; rm -rf src ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := geminitest.New(geminitest.Script{Turns: []geminitest.Turn{
				{Parts: []geminitest.Part{{FunctionCall: &geminitest.FunctionCall{Name: "run_command", Args: map[string]any{"command": tc.cmd}}}}},
				{Parts: []geminitest.Part{{Text: "Refused, then."}}},
			}})
			defer srv.Close()
			vars := env(map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL(), "REPRISE_HOME": t.TempDir(), "REPRISE_CONFIG_HOME": t.TempDir()})
			ctx := t.Context()
			c := &permissionClient{}
			conn := acpClient(t, c, []string{"acp"}, vars)
			if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
				t.Fatal(err)
			}
			sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("go")}}); err != nil {
				t.Fatal(err)
			}
			asked := c.requests()
			if len(asked) != 1 || asked[0].ToolCall.Title == nil {
				t.Fatalf("permission requests: %+v", asked)
			}
			title := *asked[0].ToolCall.Title
			if !strings.HasPrefix(title, "Run "+tools.DisplayCommand(tc.cmd)+" (") || !strings.Contains(title, tc.want) {
				t.Errorf("the title does not show %q on one line:\n%q", tc.want, title)
			}
			if n := utf8.RuneCountInString(title); n > 2*tools.MaxDisplay {
				t.Errorf("the title is %d characters long", n)
			}
			for _, o := range asked[0].Options {
				title += "\n" + o.Name
			}
			for _, r := range title {
				if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
					t.Errorf("the question holds %U: %q", r, title)
				}
			}
		})
	}
}

// acpClient runs `reprise acp` with args over pipes, client as its editor; the agent stops when
// the test ends.
func acpClient(t *testing.T, client sdk.Client, args []string, vars func(string) string) *sdk.ClientSideConnection {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { // ends when the connection closes or ctx is cancelled
		defer close(done)
		run(ctx, args, agentIn, agentOut, io.Discard, vars)
		agentOut.Close()
	}()
	t.Cleanup(func() { cancel(); clientOut.Close(); <-done })
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	return conn
}
