package secret

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

const key = "AIzaSyD-0123456789abcdefghijklmnopqrstu"

func TestString(t *testing.T) {
	r := New(map[string]string{"GEMINI_API_KEY": key, "GOOGLE_API_KEY": "short", "OTHER": key + "XYZ"})
	tests := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"GEMINI_API_KEY=" + key + "\n", "GEMINI_API_KEY=[redacted GEMINI_API_KEY]\n"},
		{key + key, "[redacted GEMINI_API_KEY][redacted GEMINI_API_KEY]"},
		{"x" + key + "XYZ", "x[redacted OTHER]"}, // the longer value wins
		{"short stays", "short stays"},           // under MinLen: not a secret worth blanking text for
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var nilR *Redactor
	if got := nilR.String(key); got != key {
		t.Errorf("a nil redactor changed the text: %q", got)
	}
}

// TestWriterSplits feeds every split of a stream holding the key in two writes: the key never
// reaches dst, whatever the boundary.
func TestWriterSplits(t *testing.T) {
	r := New(map[string]string{"GEMINI_API_KEY": key})
	stream := "environ: PATH=/bin\x00GEMINI_API_KEY=" + key + "\x00HOME=/root and again " + key
	want := r.String(stream)
	for i := 0; i <= len(stream); i++ {
		for j := i; j <= len(stream); j += 7 {
			var dst bytes.Buffer
			w := r.NewWriter(&dst)
			for _, chunk := range []string{stream[:i], stream[i:j], stream[j:]} {
				if _, err := w.Write([]byte(chunk)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := dst.String(); got != want {
				t.Fatalf("split at %d,%d: got %q, want %q", i, j, got, want)
			}
		}
	}
}

func FuzzWriter(f *testing.F) {
	f.Add("abc"+key+"def", 3)
	f.Add(key[:10], 1)
	r := New(map[string]string{"GEMINI_API_KEY": key})
	f.Fuzz(func(t *testing.T, s string, step int) {
		step = max(1, step%64+1)
		var dst bytes.Buffer
		w := r.NewWriter(&dst)
		for i := 0; i < len(s); i += step {
			w.Write([]byte(s[i:min(len(s), i+step)]))
		}
		w.Flush()
		if got, want := dst.String(), r.String(s); got != want {
			t.Fatalf("stream %q, whole %q", got, want)
		}
		if strings.Contains(dst.String(), key) {
			t.Fatal("the key went through")
		}
	})
}

func TestContent(t *testing.T) {
	r := New(map[string]string{"GEMINI_API_KEY": key})
	clean := &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "hi", ThoughtSignature: []byte{1, 2}}}}
	if got := r.Content(clean); got != clean {
		t.Error("a message without secrets was copied")
	}
	c := &genai.Content{Role: "user", Parts: []*genai.Part{
		{Text: "my key is " + key},
		{FunctionCall: &genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "echo " + key, "n": 1.0}}},
		{FunctionResponse: &genai.FunctionResponse{Name: "run_command", Response: map[string]any{"output": []any{"a", key}}}},
	}}
	got := r.Content(c)
	want := &genai.Content{Role: "user", Parts: []*genai.Part{
		{Text: "my key is [redacted GEMINI_API_KEY]"},
		{FunctionCall: &genai.FunctionCall{Name: "run_command", Args: map[string]any{"command": "echo [redacted GEMINI_API_KEY]", "n": 1.0}}},
		{FunctionResponse: &genai.FunctionResponse{Name: "run_command", Response: map[string]any{"output": []any{"a", "[redacted GEMINI_API_KEY]"}}}},
	}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if !strings.Contains(c.Parts[0].Text, key) {
		t.Error("the original message was modified")
	}
}

func TestFromEnvCredentialsFile(t *testing.T) {
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, []byte(`{"type":"service_account","private_key":"`+strings.ReplaceAll(pem, "\n", `\n`)+`","client_email":"a@b.iam"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GEMINI_API_KEY": key, CredentialsVar: path}
	r := FromEnv(func(k string) string { return env[k] })
	for _, leak := range []string{key, pem, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"} {
		if got := r.String("cat: " + leak); strings.Contains(got, leak) {
			t.Errorf("%q not redacted: %q", leak, got)
		}
	}
	if got := r.String(path); got != path {
		t.Errorf("the path itself was redacted: %q", got)
	}
}

// TestWriterPassesOrdinaryText: text that cannot begin a secret is not held back, so a stream keeps
// its chunks as they came.
func TestWriterPassesOrdinaryText(t *testing.T) {
	r := New(map[string]string{"GEMINI_API_KEY": key})
	var dst bytes.Buffer
	w := r.NewWriter(&dst)
	for _, tt := range []struct{ in, shown string }{
		{"hello ", "hello "},
		{"world AI", "world "},     // "AI" may begin the key: held
		{"rplane", "AIrplane"},     // it did not
		{"key " + key[:5], "key "}, // held
		{key[5:] + "!", "[redacted GEMINI_API_KEY]!"},
	} {
		dst.Reset()
		w.Write([]byte(tt.in))
		if got := dst.String(); got != tt.shown {
			t.Errorf("after %q: shown %q, want %q", tt.in, got, tt.shown)
		}
	}
}

func TestWithoutCredentials(t *testing.T) {
	env := WithoutCredentials([]string{"PATH=/bin", "GEMINI_API_KEY=x", "GOOGLE_API_KEY=y", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "HOME=/h", "GEMINI_API_KEY_FILE=z"})
	if got := strings.Join(env, " "); got != "PATH=/bin HOME=/h GEMINI_API_KEY_FILE=z" {
		t.Errorf("WithoutCredentials = %q", got)
	}
}

// TestAddVarWhileCommandsStart: a server adds a key variable while other sessions' commands read
// the list (go test -race), and the variable is then kept from commands and redacted.
func TestAddVarWhileCommandsStart(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			WithoutCredentials([]string{"A=1", "MY_TEST_MODEL_KEY=sk-abcdefgh"})
		}
	}()
	for range 100 {
		AddVar("MY_TEST_MODEL_KEY")
	}
	<-done
	if got := WithoutCredentials([]string{"A=1", "MY_TEST_MODEL_KEY=sk-abcdefgh"}); len(got) != 1 || got[0] != "A=1" {
		t.Errorf("WithoutCredentials = %v", got)
	}
	r := FromEnv(func(k string) string {
		if k == "MY_TEST_MODEL_KEY" {
			return "sk-abcdefgh-1234"
		}
		return ""
	})
	if out := r.String("key sk-abcdefgh-1234"); strings.Contains(out, "sk-abcdefgh-1234") {
		t.Errorf("not redacted: %q", out)
	}
}
