// Package secret keeps the values Reprise holds for the user (API keys, service-account keys) and
// those of the user's credential files (SSH keys, cloud and registry tokens) out of everything
// that leaves the process towards the model, the disk or the terminal. The model may be steered
// into printing them (`env`, /proc/PID/environ, `cat ~/.aws/credentials`): exact values are
// replaced wherever text flows, as a stream or whole. CredentialPaths is the one list of where
// credentials live, for the command policy and the sandbox too.
package secret

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MinLen is the shortest value worth redacting: shorter ones would blank out ordinary text.
const MinLen = 8

// Vars are the credential variables Reprise reads, whose values are redacted; AddVar adds the
// ones the user names. Read them through credentialVars.
var Vars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"}

// varsMu guards Vars: a server adds a key variable when a session first asks its provider, while
// other sessions' commands read the list.
var varsMu sync.RWMutex

// AddVar adds a variable the user named as holding a model key (--api-key-env, apiKeyEnv) to
// Vars: redacted like the others, and kept from the commands and MCP servers started afterwards.
func AddVar(name string) {
	varsMu.Lock()
	defer varsMu.Unlock()
	if name != "" && !slices.Contains(Vars, name) {
		Vars = append(Vars, name)
	}
}

// credentialVars is a copy of Vars.
func credentialVars() []string {
	varsMu.RLock()
	defer varsMu.RUnlock()
	return slices.Clone(Vars)
}

// CredentialsVar names a service-account key file (Vertex AI's application default
// credentials): its private key and secrets are redacted, the path itself is not a secret.
const CredentialsVar = "GOOGLE_APPLICATION_CREDENTIALS"

// maxCredentialsFile bounds what is read of the credentials file.
const maxCredentialsFile = 1 << 20

// Redactor replaces known secret values with a marker naming where they came from. The zero value
// and nil redact nothing. Safe for concurrent use once built.
type Redactor struct {
	secrets []named // longest first, so a value containing another is replaced whole
	longest int
	index   *index          // set past a few secrets (the credential files' values): finds any in one pass
	seen    map[string]bool // the values added, while building
}

type named struct {
	value  []byte
	marker []byte
}

// New returns a redactor for values by name ("GEMINI_API_KEY" → its value); values shorter than
// MinLen are ignored.
func New(values map[string]string) *Redactor {
	r := &Redactor{}
	for _, name := range slices.Sorted(maps.Keys(values)) { // a value under two names: the first name
		r.add(name, values[name])
	}
	r.build()
	return r
}

// add adds a value unless it is too short or known already.
func (r *Redactor) add(name, v string) {
	if len(v) < MinLen || r.seen[v] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[v] = true
	r.secrets = append(r.secrets, named{value: []byte(v), marker: []byte("[redacted " + name + "]")})
	r.longest = max(r.longest, len(v))
}

// With returns a copy of r that also redacts value, marked as name's: a key variable the user
// named after r was built. r is unchanged; a value too short to redact adds nothing.
func (r *Redactor) With(name, value string) *Redactor {
	out := &Redactor{}
	if r != nil {
		out.secrets, out.longest = slices.Clone(r.secrets), r.longest
		out.seen = map[string]bool{}
		for _, s := range r.secrets {
			out.seen[string(s.value)] = true
		}
	}
	out.add(name, value)
	out.build()
	return out
}

// build orders the secrets, longest first, and indexes them when there are many.
func (r *Redactor) build() {
	slices.SortStableFunc(r.secrets, func(a, b named) int { return len(b.value) - len(a.value) })
	r.seen = nil
	if len(r.secrets) > scanLimit {
		r.index = newIndex(r.secrets)
	}
}

// FromEnv collects the secrets Reprise knows of from its environment: the credential variables'
// values, the secrets inside the service-account file CredentialsVar names (its private key,
// client secret or refresh token), and those inside the credential files that CredentialPaths
// finds from the home directory (HomeDir), the environment and hidePaths (the user's additions):
// a command that reads one where the policy and the sandbox did not stop it still shows the
// model nothing of it. Every front-end builds its redactor here, once, at start-up: files
// created later are not known.
func FromEnv(getenv func(string) string, hidePaths ...string) *Redactor {
	r := &Redactor{}
	for _, v := range credentialVars() {
		r.add(v, getenv(v))
	}
	if path := getenv(CredentialsVar); path != "" {
		secrets := credentialSecrets(path)
		for _, k := range slices.Sorted(maps.Keys(secrets)) {
			r.add(CredentialsVar+" "+k, secrets[k])
		}
	}
	home := HomeDir(getenv)
	r.learnCredentials(home, locations(home, getenv, hidePaths))
	r.build()
	return r
}

// HomeDir is the home directory as getenv tells it, the one to give CredentialPaths: HOME, or
// USERPROFILE on Windows (what os.UserHomeDir reads), "" when unset.
func HomeDir(getenv func(string) string) string {
	if runtime.GOOS == "windows" {
		return getenv("USERPROFILE")
	}
	return getenv("HOME")
}

// credentialSecrets reads the secret fields of a Google credentials JSON file. The key's PEM is
// also redacted line by line: a command may print it with its newlines escaped or not.
func credentialSecrets(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var doc map[string]any
	if err := json.NewDecoder(io.LimitReader(f, maxCredentialsFile)).Decode(&doc); err != nil {
		return nil
	}
	out := map[string]string{}
	for _, k := range []string{"private_key", "client_secret", "refresh_token", "private_key_id"} {
		s, _ := doc[k].(string)
		if s == "" {
			continue
		}
		out[k] = s
		if k == "private_key" {
			for i, line := range strings.Split(s, "\n") {
				if !strings.HasPrefix(line, "-----") && len(line) >= 32 {
					out[k+" line "+strconv.Itoa(i)] = line
				}
			}
		}
	}
	return out
}

// Empty reports whether there is nothing to redact.
func (r *Redactor) Empty() bool { return r == nil || len(r.secrets) == 0 }

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r.Empty() || !r.containsString(s) {
		return s
	}
	return string(r.replace([]byte(s)))
}

// containsString reports whether s holds a secret.
func (r *Redactor) containsString(s string) bool {
	if r.index != nil {
		at, _ := r.index.nextString(s)
		return at >= 0
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, string(sec.value)) {
			return true
		}
	}
	return false
}

// replace replaces every occurrence, leftmost first, the longest secret winning at a position.
func (r *Redactor) replace(b []byte) []byte {
	var out []byte
	for {
		at, which := r.next(b)
		if at < 0 {
			return append(out, b...)
		}
		out = append(out, b[:at]...)
		out = append(out, r.secrets[which].marker...)
		b = b[at+len(r.secrets[which].value):]
	}
}

// next finds the leftmost occurrence of any secret in b, the longest one at that position.
func (r *Redactor) next(b []byte) (at, which int) {
	if r.index != nil {
		return r.index.next(b)
	}
	at = -1
	for i, s := range r.secrets {
		if k := bytes.Index(b, s.value); k >= 0 && (at < 0 || k < at) {
			at, which = k, i
		}
	}
	return at, which
}

// Writer redacts a stream on its way to dst. A secret split across writes is still found: the
// last bytes that could begin one are held back until the next write or Flush. Only those: a
// stream with no secret in sight goes through unchanged, write for write. What it writes is what
// String gives for the whole stream, however it is cut.
type Writer struct {
	r       *Redactor
	dst     io.Writer
	pending []byte
}

// NewWriter returns a redacting writer to dst; with nothing to redact it passes bytes through.
func (r *Redactor) NewWriter(dst io.Writer) *Writer {
	return &Writer{r: r, dst: dst}
}

// Write never fails unless dst does; it reports len(p) consumed.
//
// A secret found is replaced only when no secret could still begin at or before it: a
// credential file's line holds its tokens, and String replaces the whole line, so a token must
// wait while the line it may belong to is incomplete.
func (w *Writer) Write(p []byte) (int, error) {
	if w.r.Empty() {
		return w.dst.Write(p)
	}
	buf := append(w.pending, p...)
	var out []byte
	for {
		hold := len(buf) - w.r.pendingPrefix(buf)
		at, which := w.r.next(buf)
		if at < 0 || at >= hold {
			out = append(out, buf[:hold]...)
			buf = buf[hold:]
			break
		}
		out = append(out, buf[:at]...)
		out = append(out, w.r.secrets[which].marker...)
		buf = buf[at+len(w.r.secrets[which].value):]
	}
	w.pending = append(w.pending[:0:0], buf...)
	if len(out) > 0 {
		if _, err := w.dst.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// pendingPrefix is the length of the longest end of b that begins some secret (and is shorter
// than it): what must wait for the next write.
func (r *Redactor) pendingPrefix(b []byte) int {
	if r.index != nil {
		return r.index.pendingPrefix(b)
	}
	for k := min(len(b), r.longest-1); k > 0; k-- {
		tail := b[len(b)-k:]
		for _, s := range r.secrets {
			if len(s.value) > k && bytes.HasPrefix(s.value, tail) {
				return k
			}
		}
	}
	return 0
}

// Flush writes what was held back, its secrets replaced: the stream is over.
func (w *Writer) Flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	_, err := w.dst.Write(w.r.replace(w.pending))
	w.pending = nil
	return err
}

// Stream redacts text that arrives in pieces, such as a streamed reply: Next returns what can be
// shown once a piece is added, holding back only what may begin a secret; Flush returns the rest.
type Stream struct {
	w   *Writer
	buf bytes.Buffer
}

// Stream starts a redacted stream.
func (r *Redactor) Stream() *Stream {
	s := &Stream{}
	s.w = r.NewWriter(&s.buf)
	return s
}

// Next adds a piece and returns what can be shown of the stream so far, not shown before.
func (s *Stream) Next(piece string) string {
	if piece == "" {
		return ""
	}
	_, _ = s.w.Write([]byte(piece)) // into s.buf: cannot fail
	return s.take()
}

// Flush ends the stream and returns what was held back.
func (s *Stream) Flush() string {
	_ = s.w.Flush() // into s.buf: cannot fail
	return s.take()
}

func (s *Stream) take() string {
	out := s.buf.String()
	s.buf.Reset()
	return out
}

// WithoutCredentials is env (KEY=VALUE entries) less Reprise's credentials: what a command or an
// MCP server starts with. Names are matched as the OS does (without case on Windows).
func WithoutCredentials(env []string) []string {
	vars := credentialVars()
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		hidden := sameName(name, CredentialsVar)
		for _, v := range vars {
			hidden = hidden || sameName(name, v)
		}
		if !hidden {
			out = append(out, kv)
		}
	}
	return out
}

func sameName(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}
