// Package secrettest makes a home directory holding the credential files an attack run read
// (SSH key, AWS, gcloud, netrc, docker), with fresh random secrets, for tests of the policy and
// the redaction. Values are made at run time: no key-shaped text is committed to trip a scanner.
package secrettest

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Home is a fake home directory.
type Home struct {
	Dir string
	// Files are the credential files, by path relative to Dir (slash-separated).
	Files []string
	// Secrets are the values that must never be shown: key bodies, passwords, tokens.
	Secrets []string
	// Public is text of the same files, or beside them, that is not secret (short lines, PEM
	// armour, the public key): redaction leaves it alone.
	Public []string
}

// NewHome writes the credential files under a new temporary directory.
func NewHome(t testing.TB) *Home {
	t.Helper()
	h := &Home{Dir: t.TempDir()}
	keyLines := []string{Random(70), Random(70), Random(70), Random(70), Random(18) + "="}
	access, secretKey := "AKIA"+strings.ToUpper(Random(16)), Random(40)
	clientSecret, refresh := "d-"+Random(22), "1//0"+Random(96)
	password := Random(24)
	pat := "dckr_pat_" + Random(27)
	auth := base64.StdEncoding.EncodeToString([]byte("alice:" + pat))
	pub := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + Random(43) + " alice@laptop"
	h.write(t, ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n"+strings.Join(keyLines, "\n")+"\n-----END OPENSSH PRIVATE KEY-----\n")
	h.write(t, ".aws/credentials", "[default]\naws_access_key_id = "+access+"\naws_secret_access_key = "+secretKey+"\nregion = eu-west-1\n")
	h.write(t, ".config/gcloud/application_default_credentials.json", `{
  "account": "",
  "client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com",
  "client_secret": "`+clientSecret+`",
  "refresh_token": "`+refresh+`",
  "type": "authorized_user",
  "universe_domain": "googleapis.com"
}
`)
	h.write(t, ".netrc", "machine api.example.com\n  login alice\n  password "+password+"\n")
	h.write(t, ".docker/config.json", `{
	"auths": {
		"https://index.docker.io/v1/": {
			"auth": "`+auth+`"
		}
	}
}
`)
	h.Secrets = append(keyLines[:4:4], keyLines[4][:18], access, secretKey, clientSecret, refresh, password, pat, strings.TrimRight(auth, "="))
	// Not read: a public key and the SSH client's settings are not secrets.
	if err := os.WriteFile(filepath.Join(h.Dir, ".ssh", "id_ed25519.pub"), []byte(pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Lines under 20 characters are the files' syntax, kept; longer ones are redacted whole, the
	// names in them (aws_secret_access_key) included.
	h.Public = []string{pub, "-----BEGIN OPENSSH PRIVATE KEY-----", "[default]", "region = eu-west-1", "login alice"}
	return h
}

func (h *Home) write(t testing.TB, rel, content string) {
	t.Helper()
	p := filepath.Join(h.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Files = append(h.Files, rel)
}

// Random returns n random characters of the base64 URL alphabet: a fresh secret.
func Random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}
