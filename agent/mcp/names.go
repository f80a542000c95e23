package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// maxNameLen is the longest function name Gemini accepts.
const maxNameLen = 64

// declaredName is the name a server's tool is declared under, SERVER__TOOL, made a valid Gemini
// function name: it starts with a letter or an underscore and has only [A-Za-z0-9_-] (Gemini
// also allows '.' and ':', which some clients choke on), at most 64 characters. A name cut short
// ends with a hash of the whole so that two long names stay apart.
func declaredName(server, tool string) string {
	name := sanitize(server) + "__" + sanitize(tool)
	if c := name[0]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		name = "_" + name
	}
	if len(name) > maxNameLen {
		name = withHash(name, server+"\x00"+tool)
	}
	return name
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// withHash cuts name to fit a suffix made from key, and appends it.
func withHash(name, key string) string {
	sum := sha256.Sum256([]byte(key))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name) > maxNameLen-len(suffix) {
		name = name[:maxNameLen-len(suffix)]
	}
	return name + suffix
}

// toolRef is what a declared name stands for.
type toolRef struct {
	server int // index in Manager.servers
	tool   string
}

// nameTable gives each (server, tool) a distinct declared name. Names are taken in the order
// tools are added (servers in configuration order, tools sorted), so the same configuration
// gives the same names: when two tools sanitize to the same name, the first keeps it and the
// next gets a hash of its real name, then a counter if even that is taken.
type nameTable struct {
	refs map[string]toolRef
}

func (t *nameTable) add(serverIndex int, server, tool string) string {
	if t.refs == nil {
		t.refs = map[string]toolRef{}
	}
	name := declaredName(server, tool)
	if _, taken := t.refs[name]; taken {
		name = withHash(name, server+"\x00"+tool)
		for i := 2; ; i++ {
			if _, taken := t.refs[name]; !taken {
				break
			}
			name = withHash(name, fmt.Sprintf("%s\x00%s\x00%d", server, tool, i))
		}
	}
	t.refs[name] = toolRef{server: serverIndex, tool: tool}
	return name
}
