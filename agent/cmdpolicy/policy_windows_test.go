package cmdpolicy

import "testing"

func TestProgramWindows(t *testing.T) {
	for name, want := range map[string]string{
		"git": "git", "GIT.EXE": "git", `C:\Program Files\Git\cmd\git.exe`: "git", "C:/Git/git.cmd": "git",
		`C:git.exe`: "git", "npm.ps1": "npm", "shutdown.com": "shutdown", "x.bat": "x", ".exe": ".exe",
		"mkfs.ext4": "mkfs.ext4",
	} {
		if got := program(name); got != want {
			t.Errorf("program(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestPolicyWindows: Windows's own names for the denied programs, and its shells, are read.
func TestPolicyWindows(t *testing.T) {
	p := New(nil, nil)
	yes := New(nil, nil)
	yes.AllowAll = true
	tests := []struct {
		command string
		want    Action // with the default policy
		yes     Action // with AllowAll (--yes)
	}{
		{"go test ./...", Allow, Allow}, // PowerShell's reading: the default here
		{"GIT.EXE push", Deny, Deny},
		{`C:\Windows\System32\shutdown.exe /s /t 0`, Deny, Deny},
		{`& "C:\Program Files\Git\cmd\git.exe" push`, Deny, Deny},
		{"git.cmd push --force", Deny, Deny},
		{"cmd /c git push", Deny, Deny},
		{`cmd.exe /d /s /c "go build && git push"`, Deny, Deny},
		{"CMD /Cgit push", Deny, Deny},
		{`powershell -NoProfile -Command "git push"`, Deny, Deny},
		{`pwsh -nop -c 'go build; git push'`, Deny, Deny},
		{"powershell git push", Deny, Deny},
		{"powershell -ExecutionPolicy Bypass git push", Deny, Deny},
		{`powershell.exe /command git push`, Deny, Deny},
		{"iex 'git push'", Deny, Deny},
		{`Invoke-Expression -Command "git push"`, Deny, Deny},
		{"pwsh -File build.ps1", Ask, Allow},
		{"powershell -EncodedCommand ZwBpAHQAIABwAHUAcwBoAA==", Ask, Deny},
		{"cmd /c go test", Ask, Allow}, // a shell: never allowed by a pattern
	}
	for _, tt := range tests {
		got, gotYes := p.Check(tt.command), yes.Check(tt.command)
		if got.Action != tt.want {
			t.Errorf("Check(%q) = %v (%s), want %v", tt.command, got.Action, got.Reason, tt.want)
		}
		if gotYes.Action != tt.yes {
			t.Errorf("AllowAll: Check(%q) = %v (%s), want %v", tt.command, gotYes.Action, gotYes.Reason, tt.yes)
		}
	}
	if v := New([]string{"cmd"}, nil).Check("cmd /c go test"); v.Action != Ask {
		t.Errorf("an allowed cmd: Check = %v (%s), want asked: it runs a shell", v.Action, v.Reason)
	}
}
