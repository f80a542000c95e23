package main

import (
	"bytes"
	"context"
	"github.com/reprise-dev/reprise/cmd/reprise/scenarios"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCostTable(t *testing.T) {
	var b bytes.Buffer
	if err := costTable(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

func TestScenarioDebug(t *testing.T) {
	sc := scenarios.All()[3]
	dir := t.TempDir()
	var out bytes.Buffer
	_ = out
	r, err := playScenario(context.Background(), sc, noCompaction, dir)
	t.Logf("%+v %v", r, err)
	data, _ := os.ReadFile(filepath.Join(dir, "workspace/tiers/tiers.go"))
	t.Log(string(data))
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir = filepath.Join(dir, "workspace")
	o, _ := cmd.CombinedOutput()
	t.Log(string(o))
}
