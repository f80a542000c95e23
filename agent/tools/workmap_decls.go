package tools

import (
	"regexp"
	"strings"
	"unicode"
)

// declLang finds the names a source file declares at its top level: each pattern's last
// non-empty group is a name, a Go method's receiver joined to it with a dot.
type declLang struct {
	patterns []*regexp.Regexp
}

var (
	goDecls    = declLang{res(`^func (?:\(\s*\w*\s*\*?\s*(\w+)(?:\[[^\]]*\])?\s*\) )?(\w+)`, `^type (\w+)`)}
	pyDecls    = declLang{res(`^(?:async )?def (\w+)`, `^class (\w+)`)}
	jsDecls    = declLang{res(`^export (?:default )?(?:declare )?(?:abstract )?(?:async )?(?:function\*?|class|const|let|var|interface|type|enum|namespace) (\w+)`, `^(?:async )?function\*? (\w+)`, `^class (\w+)`)}
	rustDecls  = declLang{res(`^(?:pub(?:\([^)]*\))? )?(?:async )?(?:unsafe )?(?:fn|struct|enum|trait|type|mod|union) (\w+)`, `^impl(?:<[^>]*>)? (?:\w+ for )?(\w+)`)}
	jvmDecls   = declLang{res(`^\s{0,4}(?:(?:public|private|protected|internal|abstract|final|sealed|data|open|static|partial)\s+)*(?:class|interface|enum|record|object|struct) (\w+)`)}
	rubyDecls  = declLang{res(`^\s*(?:class|module) ([\w:]+)`, `^\s*def (?:self\.)?(\w+[?!]?)`)}
	luaDecls   = declLang{res(`^(?:local )?function ([\w.:]+)`)}
	cDecls     = declLang{res(`^(?:typedef )?(?:struct|enum|union|class) (\w+)\s*\{?\s*$`, `^[A-Za-z_][\w \t\*&:<>,]*?[ \t\*&]([A-Za-z_]\w*)\([^;]*$`)}
	shellDecls = declLang{res(`^(?:function )?([\w-]+)\s*\(\)`)}
	phpDecls   = declLang{res(`^\s*(?:abstract |final )?(?:class|interface|trait|enum) (\w+)`, `^\s*(?:(?:public|private|protected|static|abstract|final) )*function (\w+)`)}
	declsByExt = map[string]*declLang{
		".go": &goDecls, ".py": &pyDecls, ".pyi": &pyDecls,
		".js": &jsDecls, ".jsx": &jsDecls, ".mjs": &jsDecls, ".cjs": &jsDecls, ".ts": &jsDecls, ".tsx": &jsDecls, ".mts": &jsDecls,
		".rs": &rustDecls, ".java": &jvmDecls, ".kt": &jvmDecls, ".kts": &jvmDecls, ".scala": &jvmDecls, ".cs": &jvmDecls, ".swift": &jvmDecls,
		".rb": &rubyDecls, ".lua": &luaDecls, ".c": &cDecls, ".h": &cDecls, ".cc": &cDecls, ".cpp": &cDecls, ".hpp": &cDecls, ".cxx": &cDecls,
		".sh": &shellDecls, ".bash": &shellDecls, ".php": &phpDecls,
	}
	notNames = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true, "else": true, "do": true}
)

func res(patterns ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		out[i] = regexp.MustCompile(p)
	}
	return out
}

// decl is one declaration: its name, and its line as a signature.
type decl struct{ name, sig string }

// decls are the declarations of src in the order they come, each name once.
func (l *declLang) decls(src string) []decl {
	var out []decl
	seen := map[string]bool{}
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		for _, re := range l.patterns {
			m := re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			name := declName(m[1:])
			if name != "" && !seen[name] {
				seen[name] = true
				out = append(out, decl{name, signature(line, name)})
			}
			break
		}
	}
	return out
}

// signature is a declaration's line as the map shows it: its body, comments and string
// literals left out, spaces collapsed, printable characters only, at most maxSig long; the name
// alone when nothing is left.
func signature(line, name string) string {
	var b strings.Builder
	quote := rune(0)
scan:
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
				b.WriteRune(r)
			}
			continue
		case r == '"' || r == '\'' || r == '`':
			quote = r
			b.WriteString(string(r) + "…")
			continue
		case r == '{' || strings.HasPrefix(line[i:], "//") || strings.HasPrefix(line[i:], "/*") || (r == '#' && i > 0):
			break scan
		case unicode.IsPrint(r):
			b.WriteRune(r)
		}
	}
	sig := strings.Join(strings.Fields(b.String()), " ")
	if len(sig) > maxSig {
		sig = sig[:maxSig] + "…"
	}
	if sig == "" {
		return name
	}
	return sig
}

// maxSig bounds one signature.
const maxSig = 120

// declName joins a match's groups (a receiver and its method) and keeps only an identifier: a
// name is the only thing of a file's text that reaches the map.
func declName(groups []string) string {
	var parts []string
	for _, g := range groups {
		if g != "" {
			parts = append(parts, g)
		}
	}
	name := strings.Join(parts, ".")
	if name == "" || len(name) > 64 || notNames[name] {
		return ""
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_.:?!-", r) {
			return ""
		}
	}
	return name
}
