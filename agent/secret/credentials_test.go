package secret

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-dev/reprise/agent/secret/secrettest"
)

func TestCredentialPaths(t *testing.T) {
	home, elsewhere := t.TempDir(), t.TempDir()
	at := func(parts ...string) string { return filepath.Join(append([]string{elsewhere}, parts...)...) }
	env := map[string]string{
		"AWS_SHARED_CREDENTIALS_FILE":    at("aws"),
		"GOOGLE_APPLICATION_CREDENTIALS": at("sa.json"),
		"KUBECONFIG":                     at("k1") + string(filepath.ListSeparator) + at("k2"),
		"DOCKER_CONFIG":                  at("docker"),
		"GNUPGHOME":                      at("gnupg"),
		"NETRC":                          at("netrc"),
		"XDG_CONFIG_HOME":                at("xdg"),
		"KRB5CCNAME":                     "FILE:" + at("krb5cc"),
		"CLOUDSDK_CONFIG":                "relative/ignored",
	}
	got := CredentialPaths(home, func(k string) string { return env[k] }, []string{"~/.vault", "tokens/x", at("mine"), "~", ""})
	for _, want := range []string{
		filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(home, ".config", "gcloud"),
		filepath.Join(home, ".netrc"), filepath.Join(home, ".docker", "config.json"), filepath.Join(home, ".kube"),
		filepath.Join(home, ".gnupg"), filepath.Join(home, ".git-credentials"), filepath.Join(home, ".config", "gh"),
		filepath.Join(home, ".npmrc"), filepath.Join(home, ".pypirc"), filepath.Join(home, ".cargo", "credentials.toml"),
		filepath.Join(home, ".cargo", "credentials"), filepath.Join(home, ".azure"), filepath.Join(home, ".password-store"),
		filepath.Join(home, ".local", "share", "keyrings"), filepath.Join(home, ".mozilla"),
		filepath.Join(home, ".config", "google-chrome"), filepath.Join(home, ".config", "chromium"),
		filepath.Join(home, ".config", "BraveSoftware"), filepath.Join(home, "Library", "Application Support", "Google", "Chrome"),
		filepath.Join(home, "Library", "Keychains"),
		at("aws"), at("sa.json"), at("k1"), at("k2"), at("docker"), at("gnupg"), at("netrc"),
		at("xdg", "gcloud"), at("xdg", "gh"), at("xdg", "google-chrome"), at("xdg", "git", "credentials"), at("krb5cc"),
		filepath.Join(home, ".vault"), filepath.Join(home, "tokens", "x"), at("mine"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("CredentialPaths lacks %s", want)
		}
	}
	seen := map[string]bool{}
	for _, p := range got {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Errorf("%q is not absolute and clean", p)
		}
		if seen[p] {
			t.Errorf("%s is listed twice", p)
		}
		seen[p] = true
		if p == home {
			t.Error("the home directory itself is listed")
		}
	}
	if slices.Contains(got, "relative/ignored") {
		t.Error("a relative path from the environment is listed")
	}
	if none := CredentialPaths("", func(string) string { return "" }, nil); len(none) > 1 { // the default Kerberos cache at most
		t.Errorf("without a home or environment: %q", none)
	}
}

// TestFromEnvLearnsCredentialFiles: the contents of the files an attack run sent to the model are
// redacted, as a whole and on a stream split anywhere, while their names and syntax stay.
func TestFromEnvLearnsCredentialFiles(t *testing.T) {
	h := secrettest.NewHome(t)
	r := FromEnv(func(k string) string { return map[string]string{"HOME": h.Dir, "GEMINI_API_KEY": key}[k] })
	var all strings.Builder
	for _, rel := range h.Files {
		b, err := os.ReadFile(filepath.Join(h.Dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	all.WriteString("GEMINI_API_KEY=" + key + "\n")
	text := all.String()
	got := r.String(text)
	for _, s := range append(h.Secrets, key) {
		if strings.Contains(got, s) {
			t.Errorf("%q went through:\n%s", s, got)
		}
	}
	for _, s := range []string{"[redacted ~/.ssh/id_ed25519]", "[redacted ~/.aws/credentials]", "[redacted ~/.netrc]",
		"[redacted ~/.docker/config.json]", "[redacted ~/.config/gcloud/application_default_credentials.json]", "[redacted GEMINI_API_KEY]"} {
		if !strings.Contains(got, s) {
			t.Errorf("no %s in\n%s", s, got)
		}
	}
	for _, s := range append(h.Public, "set aws_secret_access_key in ~/.aws/credentials", "alice", "https://index.docker.io/v1/") {
		if r.String(s) != s {
			t.Errorf("%q was redacted: %q", s, r.String(s))
		}
	}
	for i := 0; i <= len(text); i += 3 {
		var dst bytes.Buffer
		w := r.NewWriter(&dst)
		w.Write([]byte(text[:i]))
		w.Write([]byte(text[i:]))
		w.Flush()
		if dst.String() != got {
			t.Fatalf("split at %d: got\n%s\nwant\n%s", i, dst.String(), got)
		}
	}
}

func TestLearnText(t *testing.T) {
	existing := t.TempDir()
	tests := []struct {
		name, text string
		want       []string
	}{
		{"ini", "[default]\naws_access_key_id = AKIAABCDEFGHIJKLMNOP\nregion = eu-west-1\n",
			[]string{"aws_access_key_id = AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"}},
		{"json key names and padding", `{"auth": "YWxpY2U6cGFzc3dvcmQxMjM0NTY3ODk=", "padded": "c2hvcnQ6c2hvcnRzaG9ydHNob3J0c2g="}`,
			[]string{`{"auth": "YWxpY2U6cGFzc3dvcmQxMjM0NTY3ODk=", "padded": "c2hvcnQ6c2hvcnRzaG9ydHNob3J0c2g="}`,
				"YWxpY2U6cGFzc3dvcmQxMjM0NTY3ODk", "alice:password123456789", "password123456789",
				"c2hvcnQ6c2hvcnRzaG9ydHNob3J0c2g", "short:shortshortshortsh", "shortshortshortsh"}},
		{"pem armour", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1b2c3d4e5f6\n-----END RSA PRIVATE KEY-----\n",
			[]string{"MIIEowIBAAKCAQEAx1b2c3d4e5f6"}},
		{"paths and hosts", "cache=" + existing + "/\nserver: https://kubernetes.example.internal:6443\nkey=/no/such/file/but/a/b64+\n",
			[]string{"cache=" + existing + "/", "server: https://kubernetes.example.internal:6443", "key=/no/such/file/but/a/b64+", "/no/such/file/but/a/b64+"}},
		{"netrc", "machine h login alice password correcthorsebattery",
			[]string{"machine h login alice password correcthorsebattery", "correcthorsebattery"}},
		{"json key", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"}`,
			[]string{`{"private_key": "-----BEGIN PRIVATE KEY-----`, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "BKcwggSjAgEAAoIBAQC7"}},
		{"binary", "SQLite\x00\x00\x01{\"refresh_token\": \"1//0gABCDEFGHIJKLMNOPQRSTUV\"}\x00\x02",
			[]string{`{"refresh_token": "1//0gABCDEFGHIJKLMNOPQRSTUV"}`, "1//0gABCDEFGHIJKLMNOPQRSTUV"}},
	}
	for _, tt := range tests {
		var got []string
		learnText(tt.text, true, func(v string) {
			if !slices.Contains(got, v) {
				got = append(got, v)
			}
		})
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
}

// TestFromEnvBounds: a huge file is read up to the bound, after its last whole line.
func TestFromEnvBounds(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	early, late := strings.Repeat("E", 30), strings.Repeat("L", 30)
	big := early + "\n" + strings.Repeat(strings.Repeat("x", 99)+"\n", maxCredentialBytes/100) + late + "\n"
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	r := FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] })
	if r.String(early) == early {
		t.Error("the start of a large file was not learnt")
	}
	if r.String(late) != late {
		t.Error("the file was read past the bound")
	}
}

// TestIndexAgreesWithScan: past scanLimit secrets the index finds exactly what the one-by-one
// search finds, whole and on streams split anywhere, with secrets that share prefixes and
// overlap.
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randText := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 200 {
		values := map[string]string{}
		var list []string
		for i := range scanLimit + 1 + rng.IntN(40) {
			v := randText("ab", MinLen+rng.IntN(12))
			if len(list) > 0 && rng.IntN(3) == 0 { // share a prefix with another
				p := list[rng.IntN(len(list))]
				v = p[:MinLen+rng.IntN(len(p)-MinLen+1)] + v[:rng.IntN(4)]
			}
			values["s"+string(rune('A'+i))] = v
			list = append(list, v)
		}
		indexed := New(values)
		if indexed.index == nil {
			t.Fatalf("%d secrets were not indexed", len(indexed.secrets))
		}
		scan := &Redactor{secrets: indexed.secrets, longest: indexed.longest}
		var text strings.Builder
		for range 20 {
			if rng.IntN(2) == 0 {
				text.WriteString(list[rng.IntN(len(list))])
			} else {
				text.WriteString(randText("abc", rng.IntN(10)))
			}
		}
		s := text.String()
		want := scan.String(s)
		if got := indexed.String(s); got != want {
			t.Fatalf("round %d: indexed %q, scan %q", round, got, want)
		}
		for i := 0; i <= len(s); i++ {
			if got, want := indexed.pendingPrefix([]byte(s[:i])), scan.pendingPrefix([]byte(s[:i])); got != want {
				t.Fatalf("round %d: pendingPrefix(%q): indexed %d, scan %d", round, s[:i], got, want)
			}
			var a, b bytes.Buffer
			for _, w := range []*Writer{indexed.NewWriter(&a), scan.NewWriter(&b)} {
				w.Write([]byte(s[:i]))
				w.Write([]byte(s[i:]))
				w.Flush()
			}
			if a.String() != want || b.String() != want {
				t.Fatalf("round %d, split %d: indexed %q, scan %q, whole %q", round, i, a.String(), b.String(), want)
			}
		}
	}
}

// FuzzWriterCredentials: with the many values of credential files, a stream cut into any chunks
// is redacted as the whole text is, and no value goes through.
func FuzzWriterCredentials(f *testing.F) {
	h := secrettest.NewHome(f)
	r := FromEnv(func(k string) string { return map[string]string{"HOME": h.Dir}[k] })
	for _, s := range h.Secrets {
		f.Add("cat: "+s[:len(s)/2]+"|"+s+"\n"+s, 5)
		f.Add(s+s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, step int) {
		step = max(1, step%97+1)
		var dst bytes.Buffer
		w := r.NewWriter(&dst)
		for i := 0; i < len(s); i += step {
			w.Write([]byte(s[i:min(len(s), i+step)]))
		}
		w.Flush()
		if got, want := dst.String(), r.String(s); got != want {
			t.Fatalf("stream %q, whole %q", got, want)
		}
		for _, v := range h.Secrets {
			if strings.Contains(dst.String(), v) {
				t.Fatalf("%q went through", v)
			}
		}
	})
}

// BenchmarkWriter: what redaction costs a command's output (256 KiB reads of Go test output),
// with the API key alone and with a home of credential files learnt.
func BenchmarkWriter(b *testing.B) {
	line := "=== RUN   TestSomething/with_a_subtest\n--- PASS: TestSomething/with_a_subtest (0.00s)\nok  \tgithub.com/x/y/z\t0.012s\n"
	chunk := []byte(strings.Repeat(line, (256<<10)/len(line)))
	h := secrettest.NewHome(b)
	many := map[string]string{}
	for i := range 500 {
		many[strconv.Itoa(i)] = secrettest.Random(16 + i%200)
	}
	for _, bb := range []struct {
		name string
		r    *Redactor
	}{
		{"key", New(map[string]string{"GEMINI_API_KEY": key})},
		{"home", FromEnv(func(k string) string { return map[string]string{"HOME": h.Dir, "GEMINI_API_KEY": key}[k] })},
		{"500 values", New(many)},
	} {
		b.Run(bb.name, func(b *testing.B) {
			w := bb.r.NewWriter(io.Discard)
			b.SetBytes(int64(len(chunk)))
			for b.Loop() {
				w.Write(chunk)
			}
		})
	}
}

// TestFromEnvHidePaths: the user's own additions are learnt too: a file, or a directory's files.
func TestFromEnvHidePaths(t *testing.T) {
	home, elsewhere := t.TempDir(), t.TempDir()
	inDir, inFile := secrettest.Random(32), secrettest.Random(32)
	if err := os.MkdirAll(filepath.Join(home, ".vault"), 0o700); err != nil {
		t.Fatal(err)
	}
	for path, content := range map[string]string{
		filepath.Join(home, ".vault", "token"): "token=" + inDir + "\n",
		filepath.Join(elsewhere, "api.key"):    inFile + "\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := FromEnv(func(k string) string { return map[string]string{"HOME": home}[k] }, "~/.vault", filepath.Join(elsewhere, "api.key"))
	if got := r.String(inDir + " " + inFile); got != "[redacted ~/.vault/token] [redacted "+filepath.Join(elsewhere, "api.key")+"]" {
		t.Errorf("hidePaths' secrets: %q", got)
	}
}
