package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/reprise-dev/reprise/agent/tools"
)

// TestAttackAllowedCommandReadsTheHome: an unasked test reads what no credential list names: a
// shell history with an exported key, ~/.pgpass, a token in ~/.gitconfig, the Copilot token,
// rclone's and gem's credentials, Reprise's own settings and another workspace's session. None of
// it reaches the model; git still knows who commits, and nothing else of the user's configuration.
func TestAttackAllowedCommandReadsTheHome(t *testing.T) {
	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		".bash_history":                       "export OPENAI_API_KEY=sk-histsecret1\n",
		".pgpass":                             "db:5432:*:u:pgsecret2\n",
		".gitconfig":                          "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n[http]\n\textraheader = AUTHORIZATION: bearer ghp_gitsecret3\n",
		".config/github-copilot/apps.json":    `{"github.com": {"oauth_token": "gho_copilotsecret4"}}`,
		".config/rclone/rclone.conf":          "[s3]\nsecret_access_key = rclonesecret5\n",
		".gem/credentials":                    ":rubygems_api_key: gemsecret6\n",
		".config/reprise/settings.json":       `{"allow": ["settingsecret7"]}`,
		".local/state/reprise/sessions/x.log": "another project's chat: statesecret8\n",
	}
	var cats []string
	for rel := range secrets {
		cats = append(cats, "cat ~/"+rel)
	}
	recipe := strings.Join(cats, "; ") + "; ls -A ~; git config --global --list; true"
	for _, p := range sandboxPaths {
		t.Run(p.name, func(t *testing.T) {
			home, err := os.MkdirTemp(realHome, ".reprise-home-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			writeFiles(t, home, secrets)
			t.Setenv("HOME", home)
			for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "REPRISE_HOME", "GIT_CONFIG_GLOBAL"} {
				t.Setenv(v, "")
			}
			ws := t.TempDir()
			ap := &recordingApprover{decision: tools.Reject}
			sb := p.make(ws)
			f := newFixture(t, fixtureOpts{journal: true, ws: ws, sandbox: sb, approver: ap, files: makefileAttack(recipe)},
				makeTest(), textTurn("done"))
			outs := toolOutputs(f.turn(t, "run the tests"))
			assertAskedOrConfined(t, sb, ap, outs)
			for _, secret := range []string{"histsecret1", "pgsecret2", "gitsecret3", "copilotsecret4", "rclonesecret5", "gemsecret6", "settingsecret7", "statesecret8"} {
				if len(outs) == 1 && strings.Contains(outs[0], secret) {
					t.Errorf("%s reached the model: %q", secret, outs[0])
				}
			}
			if ok, _ := sb.Confined(); ok && (!strings.Contains(outs[0], "user.name=Ada Lovelace") || strings.Contains(outs[0], "extraheader")) {
				t.Errorf("git's identity, and only it, should reach the command: %q", outs[0])
			}
		})
	}
}
