package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDelegationTable: the same task, reads in a subagent or in the main context: the subagent
// keeps the main context's peak well below the other run's, the reads are billed in the
// subagent's calls, and the table says what the whole task cost each way.
func TestDelegationTable(t *testing.T) {
	var out bytes.Buffer
	if err := delegationTable(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	row := regexp.MustCompile(`(?m)^\s*(one context|subagent)\s+(\d+)\s+([\d,]+)\s+(\d+)\s+([\d,]+)\s+(\d+) %\s+([\d,]+)\s+\$([\d.]+)\s*$`)
	rows := row.FindAllStringSubmatch(out.String(), -1)
	if len(rows) != 2 {
		t.Fatalf("rows %q", rows)
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	inlineCalls, inlinePeak, inlineSub := num(rows[0][2]), num(rows[0][3]), num(rows[0][4])
	subCalls, subPeak, subSub := num(rows[1][2]), num(rows[1][3]), num(rows[1][4])
	if inlineSub != 0 || subSub < 39 || subCalls != 4 || inlineCalls != 42 {
		t.Errorf("calls: one context %d (+%d subagent), with a subagent %d (+%d)", inlineCalls, inlineSub, subCalls, subSub)
	}
	if subPeak*2 > inlinePeak {
		t.Errorf("the main context peaks at %d with a subagent, %d without: want less than half", subPeak, inlinePeak)
	}
}
