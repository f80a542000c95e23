package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
)

// configSection is the workspace/configuration section the server reads (DESIGN §4).
const configSection = "reprise"

// Initialize runs the LSP handshake: initialize, then the initialized notification. It declares
// the client capabilities the server's features depend on (work-done progress, configuration
// requests, and experimental.reprise when Options.Experimental), and returns the raw
// InitializeResult for the test to inspect.
func (e *Editor) Initialize(ctx context.Context) (json.RawMessage, error) {
	var result json.RawMessage
	if err := e.Call(ctx, "initialize", e.initializeParams(), &result); err != nil {
		return nil, err
	}
	if err := e.Notify(ctx, "initialized", struct{}{}); err != nil {
		return nil, err
	}
	return result, nil
}

func (e *Editor) initializeParams() map[string]any {
	capabilities := map[string]any{
		"window": map[string]any{
			"workDoneProgress": true,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
		},
		"workspace": map[string]any{
			"configuration":          true,
			"workspaceFolders":       true,
			"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
			"executeCommand":         map[string]any{"dynamicRegistration": false},
		},
	}
	if e.opts.Experimental {
		capabilities["experimental"] = map[string]any{experimentalCapability: true}
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": "lsptest"},
		"rootUri":          nil,
		"workspaceFolders": nil,
		"capabilities":     capabilities,
	}
	if folders := e.workspaceFolders(); folders != nil {
		params["rootUri"] = folders[0]["uri"]
		params["workspaceFolders"] = folders
	}
	if e.opts.InitializationOptions != nil {
		params["initializationOptions"] = e.opts.InitializationOptions
	}
	return params
}

// workspaceFolders returns Options.Root as LSP workspace folders, or nil without a root.
func (e *Editor) workspaceFolders() []map[string]string {
	if e.opts.Root == "" {
		return nil
	}
	abs, err := filepath.Abs(e.opts.Root)
	if err != nil {
		abs = e.opts.Root
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return []map[string]string{{"uri": u.String(), "name": filepath.Base(abs)}}
}

// Call sends a request and decodes the result into result (nil discards it). An error response
// comes back as a *jsonrpc2.Error (errors.As) carrying the server's code. If ctx ends first, Call
// sends $/cancelRequest with the numeric id, as VS Code and Neovim do, and the server's late
// answer is kept among the orphans (AwaitOrphan). A null result leaves result untouched (jsonrpc2 cannot tell it from
// no result), except that a *json.RawMessage is set to null, so raw results always decode.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	id, err := e.conn.Call(ctx, method, params, result)
	if err == nil {
		if raw, ok := result.(*json.RawMessage); ok && len(*raw) == 0 {
			*raw = json.RawMessage("null")
		}
		return nil
	}
	if ctx.Err() != nil && e.stream.abandon(id) {
		cancel := map[string]any{"id": &id}
		if cerr := e.conn.Notify(context.WithoutCancel(ctx), "$/cancelRequest", cancel); cerr != nil {
			return fmt.Errorf("%s: %w (and $/cancelRequest: %v)", method, err, cerr)
		}
	}
	return fmt.Errorf("%s: %w", method, err)
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	if err := e.conn.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// Execute runs a command through workspace/executeCommand with arguments [arg], the shape the
// server's commands take; a nil arg sends arguments [], as editors do for argument-less commands.
func (e *Editor) Execute(ctx context.Context, command string, arg any, result any) error {
	args := []any{}
	if arg != nil {
		args = []any{arg}
	}
	params := map[string]any{"command": command, "arguments": args}
	if err := e.Call(ctx, "workspace/executeCommand", params, result); err != nil {
		return fmt.Errorf("execute %s: %w", command, err)
	}
	return nil
}

// Shutdown ends the session the way an editor does: the shutdown request, then the exit
// notification. Wait then reports how the server ended.
func (e *Editor) Shutdown(ctx context.Context) error {
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return e.Notify(ctx, "exit", nil)
}

// WriteRaw writes b to the server as is, without framing, for tests of how the server copes with
// malformed input. It never interleaves with a message being written.
func (e *Editor) WriteRaw(b []byte) error {
	if _, err := e.stream.writeRaw(b); err != nil {
		return fmt.Errorf("write raw: %w", err)
	}
	return nil
}

// HoldReads makes the editor stop reading what the server sends, as a hung or malicious editor
// would, until release is called: the server's writes then block once the pipe is full. A
// message already being read when it is called still arrives. Waits on what the server sends
// cannot succeed meanwhile. Closing the connection ends the hold.
func (e *Editor) HoldReads() (release func()) {
	return e.stream.hold()
}

// handle runs in jsonrpc2's read loop, so it must not block: notifications are already recorded
// by the stream, and each request is answered on its own goroutine (an answer written from the
// read loop could deadlock against a server blocked writing to us over a synchronous pipe).
func (e *Editor) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	call, ok := req.(*jsonrpc2.Call)
	if !ok {
		return nil
	}
	// Owned by the editor, waited in close; ends once the answer is written, or failed to be
	// because the connection closed.
	e.replies.Go(func() {
		result, err := e.answer(call.Method(), call.Params())
		if e.opts.BeforeReply != nil {
			e.opts.BeforeReply(call.Method())
		}
		_ = reply(ctx, result, err)
	})
	return nil
}

// answer is what the editor replies to a server request.
func (e *Editor) answer(method string, params json.RawMessage) (any, error) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "workspace/configuration params: %v", err)
		}
		out := make([]any, len(p.Items))
		for i, item := range p.Items {
			out[i] = e.configuration(item.Section)
		}
		return out, nil
	case "window/showMessageRequest":
		if e.opts.Approve == nil {
			return nil, nil
		}
		return e.opts.Approve(params), nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability":
		return nil, nil
	case "workspace/workspaceFolders":
		return e.workspaceFolders(), nil
	default:
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "lsptest editor does not handle %s", method)
	}
}

// SetSettings changes what later workspace/configuration answers hold, as a user editing the
// settings would; pushing them with didChangeConfiguration is the caller's.
func (e *Editor) SetSettings(settings map[string]any) {
	e.settingsMu.Lock()
	defer e.settingsMu.Unlock()
	e.settings = settings
}

// configuration returns the value of one configuration section; JSON null when unknown.
func (e *Editor) configuration(section string) any {
	e.settingsMu.Lock()
	settings := e.settings
	e.settingsMu.Unlock()
	switch {
	case section == "":
		return map[string]any{configSection: settings}
	case section == configSection:
		if settings == nil {
			return nil
		}
		return settings
	case strings.HasPrefix(section, configSection+"."):
		v, ok := settings[strings.TrimPrefix(section, configSection+".")]
		if !ok {
			return nil
		}
		return v
	default:
		return nil
	}
}
