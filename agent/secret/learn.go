package secret

import (
	"bytes"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Bounds of what FromEnv reads of the credential files: start-up stays quick and the redactor
// small whatever the home directory holds.
const (
	maxCredentialFiles  = 64
	maxCredentialBytes  = 64 << 10 // of each file; a longer one is read up to its last whole line there
	maxCredentialValues = 4096
)

// What counts as a secret-bearing value in a credential file: a line or a token at least this
// long. Shorter ones are the file's syntax and names (`[default]`, `region = eu-west-1`), which
// would blank out ordinary output.
const (
	minLine  = 20
	minToken = 16
)

// learnCredentials adds to r the secret-bearing values of the credential files of locs, each
// marked with its file's name (`~/.aws/credentials`). Files that do not exist or cannot be read
// are skipped silently: most homes hold few of them.
func (r *Redactor) learnCredentials(home string, locs []location) {
	files := 0
	for _, l := range locs {
		for _, pattern := range l.read {
			for _, path := range expand(l.path, pattern) {
				if l.keys && strings.HasSuffix(path, ".pub") {
					continue
				}
				if files == maxCredentialFiles || len(r.secrets) >= maxCredentialValues {
					return
				}
				text, ok := readBounded(path)
				if !ok {
					continue
				}
				files++
				name := displayPath(home, path)
				learnText(text, true, func(v string) {
					if len(r.secrets) < maxCredentialValues {
						r.add(name, v)
					}
				})
			}
		}
	}
}

// expand lists the files a read pattern names under dir: "" is dir itself.
func expand(dir, pattern string) []string {
	if pattern == "" {
		return []string{dir}
	}
	if runtime.GOOS != "windows" { // dir's own glob characters are literal
		dir = globEscaper.Replace(dir)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
	return matches
}

var globEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)

// readBounded reads a regular file (a FIFO would block start-up) up to maxCredentialBytes, cut
// after its last whole line when longer: a value cut in two would be redacted only in part.
func readBounded(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialBytes+1))
	if err != nil {
		return "", false
	}
	if len(b) > maxCredentialBytes {
		b = b[:bytes.LastIndexByte(b[:maxCredentialBytes], '\n')+1]
	}
	return string(b), true
}

// displayPath names a file in markers: `~/.aws/credentials` under home.
func displayPath(home, path string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, path); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}

// learnText finds the secret-bearing values of a credential file: each trimmed line of at least
// minLine bytes (PEM armour aside), and each token of at least minToken bytes, split on white
// space, `= : , ; @`, quotes and brackets, except key names (a token followed by `=` or `:` and
// a value) and paths. A PEM body, an AWS secret, a netrc password, a docker `auth`, a refresh
// token are all such lines or tokens. With decode, the text a base64 token decodes to is read
// the same way (docker's `auth` is `user:password`, kube's `client-key-data` a PEM key).
// A binary file (a NUL byte: gcloud's SQLite token stores) is read as its printable runs, and
// JSON's escaped line breaks end lines, so that a key in a JSON string (a service account's
// `private_key`) is read line by line as its PEM file would be.
func learnText(text string, decode bool, add func(string)) {
	if strings.IndexByte(text, 0) >= 0 {
		text = printableRuns(text)
	}
	text = escapedBreaks.Replace(text)
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if len(line) >= minLine && !strings.HasPrefix(line, "-----") {
			add(line)
		}
		for _, tok := range tokens(line) {
			add(tok)
			if decode {
				if plain, ok := decodeBase64(tok); ok {
					learnText(plain, false, add)
				}
			}
		}
	}
}

var escapedBreaks = strings.NewReplacer(`\n`, "\n", `\r`, "\n")

// isSeparator tells the bytes tokens are split on.
func isSeparator(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '=', ':', ',', ';', '@', '"', '\'', '`', '(', ')', '[', ']', '{', '}', '<', '>':
		return true
	}
	return false
}

// tokens returns the tokens of line worth redacting.
func tokens(line string) []string {
	var out []string
	for i := 0; i < len(line); {
		if isSeparator(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && !isSeparator(line[j]) {
			j++
		}
		tok := line[i:j]
		i = j
		if len(tok) < minToken || isKey(line[j:]) || looksLikePath(tok) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

// isKey tells, from what follows a token, whether it names a value: `= value`, `": "value"`.
// Base64 padding (`abc==`, `"abc=",`) is no value.
func isKey(rest string) bool {
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '"' || rest[i] == '\'') {
		i++
	}
	if i == len(rest) || rest[i] != '=' && rest[i] != ':' {
		return false
	}
	for i++; i < len(rest) && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '"' || rest[i] == '\''); i++ {
	}
	return i < len(rest) && !isSeparator(rest[i])
}

// looksLikePath: a file or a URL's host part (`//host/path`) named in a configuration is no
// secret, and redacting it would mangle every output that names it (npm's `cache=/home/me`
// would redact every path of the home). A base64 secret may begin with `/` too: such a token is
// a path only if it exists. `~`, `.` and `\` are not in base64's alphabets.
func looksLikePath(tok string) bool {
	switch tok[0] {
	case '~', '.', '\\':
		return true
	case '/':
		if strings.HasPrefix(tok, "//") {
			return true
		}
		_, err := os.Lstat(tok)
		return err == nil
	}
	return false
}

// decodeBase64 decodes a token that is base64 (standard or URL alphabet, its padding already
// split off) of printable text.
func decodeBase64(tok string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(tok)
		if err != nil || !utf8.Valid(b) {
			continue
		}
		if bytes.ContainsFunc(b, func(r rune) bool { return r < ' ' && r != '\n' && r != '\r' && r != '\t' || r == 0x7f }) {
			continue
		}
		return string(b), true
	}
	return "", false
}

// printableRuns returns the runs of printable ASCII of at least minToken bytes in b, one a line.
func printableRuns(b string) string {
	var out strings.Builder
	start := -1
	for i := 0; i <= len(b); i++ {
		if i < len(b) && (b[i] >= ' ' && b[i] < 0x7f || b[i] == '\t') {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minToken {
			out.WriteString(b[start:i])
			out.WriteByte('\n')
		}
		start = -1
	}
	return out.String()
}
