package cmdpolicy

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// psPolicy is New reading PowerShell, as on Windows.
func psPolicy() *Policy {
	p := New(nil, nil)
	p.shell = powerShell
	return p
}

// psSafe are the characters a plain PowerShell line may hold.
const psSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t-_./\\:=+"

func TestParsePowerShell(t *testing.T) {
	tests := []struct {
		line        string
		wantCmds    [][]word
		wantComplex bool
	}{
		{"go test ./...", [][]word{literal("go", "test", "./...")}, false},
		{`go  test -count=1 .\agent\... C:\x\y`, [][]word{literal("go", "test", "-count=1", `.\agent\...`, `C:\x\y`)}, false},
		{`.\gradlew.bat test`, [][]word{literal(`.\gradlew.bat`, "test")}, false},
		{"", nil, false},
		{" \t", nil, false},
		// The sh reading of complex lines, for the denylist.
		{"go build; git push", [][]word{literal("go", "build"), literal("git", "push")}, true},
		{"go build | git push", [][]word{literal("go", "build"), literal("git", "push")}, true},
		{"& git push", [][]word{literal("git", "push")}, true},
		{". git push", [][]word{literal("git", "push")}, true},
		{"g`it push", [][]word{literal("git", "push")}, true},
		{"(git push)", [][]word{literal("git", "push")}, true},
		{`Write-Output $(git push)`, [][]word{literal("git", "push"), {word{s: "Write-Output"}, word{s: "", dyn: true, split: true}}}, true},
		{`& 'C:\Git\cmd\git.exe' push`, [][]word{literal("C:/Git/cmd/git.exe", "push")}, true},
	}
	for _, tt := range tests {
		cmds, complex := parsePowerShell(tt.line)
		if diff := cmp.Diff([]any{cmds, complex}, []any{tt.wantCmds, tt.wantComplex}, cmp.AllowUnexported(word{})); diff != "" {
			t.Errorf("parsePowerShell(%q) (-got +want):\n%s", tt.line, diff)
		}
	}
}

// TestPowerShellComplex: every character outside psSafe, and each rewrite PowerShell may make of
// plain-looking words, makes the line complex: asked, never allowed by a pattern.
func TestPowerShellComplex(t *testing.T) {
	var lines []string
	for b := range 256 {
		if strings.IndexByte(psSafe, byte(b)) < 0 {
			lines = append(lines, "go test ./x"+string([]byte{byte(b)})+"y", string([]byte{byte(b)})+"go test")
		}
	}
	for _, r := range []rune{
		'–', '—', '―', // dashes PowerShell reads as -
		'‘', '’', '‚', '‛', '“', '”', '„', // quotes it reads as ' and "
		'\u00a0', '\u2028', '\u3000', '\ufeff', 'é', '中',
	} {
		lines = append(lines, "go test "+string(r)+"x")
	}
	lines = append(lines,
		"go test ./... 2>&1", "go test ./... ; echo done", "go test ./... && rm x", "go test $env:X",
		"go test $(go list ./...)", "go test @args", "go test @(x)", "go test `", "go test 'a b'", `go test "a"`,
		"go test a,b", "go test {x}", "go test # c", "go test --% x", "go test *.go", "go test ./...\nrm x",
		"npm run test -- --script-shell=x", "go test -exec.x ./...", "go test -o:x", `go test -o\x`, "go test -o/x",
		"go test -a+b", ". go test", `go test \\server\share\x`, "go test //server/share/x",
	)
	for _, line := range lines {
		if _, complex := parsePowerShell(line); !complex {
			t.Errorf("parsePowerShell(%q) is plain", line)
		}
		if v := psPolicy().Check(line); v.Action == Allow {
			t.Errorf("Check(%q) = %v (%s), want asked", line, v.Action, v.Reason)
		}
	}
}

func TestPolicyPowerShell(t *testing.T) {
	yes := psPolicy()
	yes.AllowAll = true
	tests := []struct {
		command string
		want    Action // with the default policy
		yes     Action // with AllowAll (--yes)
	}{
		{"go test ./...", Allow, Allow},
		{`go test -race -count=1 .\agent\...`, Allow, Allow},
		{"go vet ./...", Allow, Allow},
		{"git status", Allow, Allow},
		{"ls", Allow, Allow},
		{"go test -exec x ./...", Ask, Allow},
		{"go test -run=TestA.B ./...", Ask, Allow},
		{"git diff", Ask, Allow},
		{"go test ./... 2>&1", Ask, Allow},
		{"git push", Deny, Deny},
		{"sudo ls", Deny, Deny},
		{"go build; git push", Deny, Deny},
		{"& git push", Deny, Deny},
		{". git push", Deny, Deny},
		{"g`it push", Deny, Deny},
		{"Write-Output (git push)", Deny, Deny},
		{"Start-Job { git push }", Deny, Deny},
		{"$x = @{ a = 1 }; Invoke-Command -ScriptBlock {git push}", Deny, Deny},
		{"& $g push", Deny, Deny}, // as in sh: $g may be git
		// A variable where a command would be is read as a computed command, though PowerShell
		// may take it for an expression: refused under --yes, where nobody would be asked.
		{"$env:GOOS='linux'; go build", Ask, Deny},
	}
	for _, tt := range tests {
		got, gotYes := psPolicy().Check(tt.command), yes.Check(tt.command)
		if got.Action != tt.want {
			t.Errorf("Check(%q) = %v (%s), want %v", tt.command, got.Action, got.Reason, tt.want)
		}
		if gotYes.Action != tt.yes {
			t.Errorf("AllowAll: Check(%q) = %v (%s), want %v", tt.command, gotYes.Action, gotYes.Reason, tt.yes)
		}
	}
	want := Verdict{Ask, "uses PowerShell syntax beyond plain words (operators, quotes, variables, escapes…)"}
	if diff := cmp.Diff(psPolicy().Check("go test; x"), want); diff != "" {
		t.Errorf("reason (-got +want):\n%s", diff)
	}
}

func TestPolicyAllowAlwaysPowerShell(t *testing.T) {
	p := psPolicy()
	for _, tt := range []struct{ command, rule string }{
		{"git diff HEAD", "git diff (and any arguments)"},
		{"go test -run=A.B", "go test -run=A.B (exactly)"},
		{"git diff; x", "git diff; x (exactly)"},
	} {
		if got := p.RuleFor(tt.command); got != tt.rule {
			t.Errorf("RuleFor(%q) = %q, want %q", tt.command, got, tt.rule)
		}
	}
	p.AllowAlways("go test -run=A.B")
	if v := p.Check("go test -run=A.B"); v.Action != Allow {
		t.Errorf("after AllowAlways: %v (%s)", v.Action, v.Reason)
	}
	if v := p.Check("go test -run=A.C"); v.Action != Ask {
		t.Errorf("another line after AllowAlways: %v (%s)", v.Action, v.Reason)
	}
}

// FuzzPowerShellPlain: a line the policy allows by a pattern is plain, every one of its
// characters safe.
func FuzzPowerShellPlain(f *testing.F) {
	for _, s := range []string{"go test ./...", "go test -count=1", `ls C:\x`, "git status; x", "go –x", "& git push"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		v := psPolicy().Check(line)
		if !v.Allowlisted() {
			return
		}
		for _, r := range line {
			if r >= utf8.RuneSelf || !strings.ContainsRune(psSafe, r) {
				t.Errorf("Check(%q) allowed a line holding %q", line, r)
			}
		}
	})
}
