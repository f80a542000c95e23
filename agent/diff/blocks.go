package diff

import "strings"

// Block is one change of a script: a run of removed and added lines between kept ones, the unit a
// reviewer accepts or rejects. Lines are numbered from 1 as in a unified diff's header; a block
// that only adds has OldLines 0 and OldStart the line before it, one that only removes NewLines 0
// and NewStart the line before it.
type Block struct {
	From, To           int // the block is ops[From:To]
	OldStart, OldLines int
	NewStart, NewLines int
}

// Blocks returns the changes of a script, in order.
func Blocks(ops []Op) []Block {
	var out []Block
	oldLine, newLine := 1, 1
	for i := 0; i < len(ops); {
		if ops[i].Kind == ' ' {
			oldLine, newLine, i = oldLine+1, newLine+1, i+1
			continue
		}
		b := Block{From: i, OldStart: oldLine, NewStart: newLine}
		for ; i < len(ops) && ops[i].Kind != ' '; i++ {
			if ops[i].Kind == '-' {
				b.OldLines++
			} else {
				b.NewLines++
			}
		}
		b.To = i
		oldLine, newLine = oldLine+b.OldLines, newLine+b.NewLines
		if b.OldLines == 0 {
			b.OldStart--
		}
		if b.NewLines == 0 {
			b.NewStart--
		}
		out = append(out, b)
	}
	return out
}

// Lines of one side of a block: its removed lines (old) or its added ones.
func (b Block) Lines(ops []Op, old bool) []string {
	want := byte('+')
	if old {
		want = '-'
	}
	var out []string
	for _, o := range ops[b.From:b.To] {
		if o.Kind == want {
			out = append(out, o.Line)
		}
	}
	return out
}

// Revert returns the new side of the script with the blocks for which undo is true put back as
// they were on the old side, the others left as they are.
func Revert(ops []Op, blocks []Block, undo func(i int) bool) string {
	var sb strings.Builder
	at := 0
	for i, b := range blocks {
		for _, o := range ops[at:b.From] {
			sb.WriteString(o.Line)
		}
		for _, l := range b.Lines(ops, undo(i)) {
			sb.WriteString(l)
		}
		at = b.To
	}
	for _, o := range ops[at:] {
		sb.WriteString(o.Line)
	}
	return sb.String()
}
