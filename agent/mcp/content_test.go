package mcp

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb"},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234567)}}},
			"[image image/png, 1,234,567 bytes: not shown]"},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 12)}}},
			"[audio audio/wav, 12 bytes: not shown]"},
		{"text resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", Text: "hello"}}}},
			"[resource file:///a.txt]\nhello"},
		{"blob resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.gz", MIMEType: "application/gzip", Blob: make([]byte, 2048)}}}},
			"[resource file:///a.gz application/gzip, 2,048 bytes: not shown]"},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///b", Name: "b"}}},
			"[resource link: file:///b b]"},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]any{"sum": 3}}, `{"sum":3}`},
		{"structured beside text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3"}}, StructuredContent: map[string]any{"sum": 3}}, "3"},
		{"empty", &mcp.CallToolResult{}, "(no output)"},
	} {
		if got := resultText(tc.res); got != tc.want {
			t.Errorf("%s: resultText = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
