package mcp

import "errors"

// stripJSONC turns JSON with comments and trailing commas, as VS Code writes its mcp.json, into
// plain JSON for encoding/json. Line (//) and block (/* */) comments become spaces (newlines are
// kept, so decoding errors keep their line numbers), and a comma followed only by whitespace or
// comments before a closing } or ] is dropped. Strings are copied as they are, escapes included.
func stripJSONC(src []byte) ([]byte, error) {
	out := make([]byte, 0, len(src))
	// comma is the index in out of a comma that may turn out to be trailing, or -1.
	comma := -1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			comma = -1
			start := i
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			if i >= len(src) {
				return nil, errors.New("unterminated string")
			}
			out = append(out, src[start:i+1]...)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				out = append(out, ' ')
				i++
			}
			if i < len(src) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := -1
			for j := i + 2; j+1 < len(src); j++ {
				if src[j] == '*' && src[j+1] == '/' {
					end = j + 2
					break
				}
			}
			if end < 0 {
				return nil, errors.New("unterminated block comment")
			}
			for ; i < end; i++ {
				if src[i] == '\n' {
					out = append(out, '\n')
				} else {
					out = append(out, ' ')
				}
			}
			i--
		case c == ',':
			comma = len(out)
			out = append(out, c)
		case c == '}' || c == ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma = -1
			out = append(out, c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			out = append(out, c)
		default:
			comma = -1
			out = append(out, c)
		}
	}
	return out, nil
}
