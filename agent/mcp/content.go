package mcp

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText reduces a tool's result to the text the model reads. Text is kept as it is; images,
// audio and binary resources are named with their type and size, as the model could not read
// their bytes as text and they would crowd out everything else. When no content but structured
// content came back, that is given as JSON.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return fmt.Sprintf("[structured content that cannot be shown: %v]", err)
		}
		return string(b)
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return strings.Join(parts, "\n")
}

func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return binaryNote("image", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return binaryNote("audio", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return strings.TrimSpace(fmt.Sprintf("[resource link: %s %s]", c.URI, c.Name))
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource: empty]"
		}
		if r.Blob != nil || r.Text == "" {
			return binaryNote("resource "+r.URI, r.MIMEType, len(r.Blob))
		}
		return "[resource " + r.URI + "]\n" + r.Text
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return fmt.Sprintf("[content of type %T: not shown]", c)
		}
		return string(b)
	}
}

// binaryNote is what the model reads instead of binary content, e.g.
// "[image image/png, 12,345 bytes: not shown]".
func binaryNote(kind, mimeType string, size int) string {
	if mimeType != "" {
		kind += " " + mimeType
	}
	return fmt.Sprintf("[%s, %s bytes: not shown]", kind, thousands(size))
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
