package cmdpolicy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word reads a shell word: its text with the quotes removed, what the shell computes in it
// (dyn, split), and the commands its substitutions run (added to the script first).
func (r *reader) word(w *syntax.Word) word {
	var out word
	var b strings.Builder
	for i, part := range w.Parts {
		r.part(part, i == 0, false, &out, &b)
	}
	out.s = b.String()
	switch {
	case out.s == "[" || out.s == "[[": // the test command, not a glob
		out.dyn, out.split = false, false
	}
	return out
}

// computed marks the part about to be written as computed by the shell: split when it is
// unquoted or begins the word.
func computed(out *word, b *strings.Builder, quoted bool) {
	out.dyn = true
	out.split = out.split || !quoted || b.Len() == 0
}

func (r *reader) part(p syntax.WordPart, first, quoted bool, out *word, b *strings.Builder) {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			b.WriteString(unescape(p.Value, "$`\"\\\n"))
		} else {
			r.literal(p.Value, first, out, b)
		}
	case *syntax.SglQuoted:
		if p.Dollar { // $'…': escapes the shell decodes
			computed(out, b, true)
		}
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for i, q := range p.Parts {
			r.part(q, first && i == 0, true, out, b)
		}
	case *syntax.ParamExp, *syntax.ExtGlob:
		r.substitutions(p)
		computed(out, b, quoted)
		b.WriteString(r.text(p))
	case *syntax.CmdSubst, *syntax.ArithmExp:
		r.substitutions(p)
		computed(out, b, quoted)
	case *syntax.ProcSubst: // a path the shell chooses (/dev/fd/N): one word, never an option
		r.substitutions(p)
		out.dyn = true
	default:
		r.substitutions(p)
		computed(out, b, quoted)
		b.WriteString(r.text(p))
	}
}

// literal writes an unquoted literal, its backslashes removed, noting globs, brace lists and a
// leading `~`.
func (r *reader) literal(s string, first bool, out *word, b *strings.Builder) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?' || c == '[':
			computed(out, b, b.Len() > 0)
		case c == '~' && first && i == 0:
			out.dyn = true // the home directory: never an option, but never a known name
		case c == '{' && strings.IndexByte(s[i:], '}') > 0:
			out.dyn = true
			out.split = out.split || b.Len() == 0
		}
		b.WriteByte(c)
	}
}

// unescape removes the backslashes before the characters in special, as double quotes and
// here-documents do; a backslash before a newline goes with it.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(special, s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// redirects reads a statement's redirections: each target becomes a command of its own, marked
// redir, so its path is judged, and writes when it is opened for writing. `2>&1` is nothing:
// output is merged anyway. Here-documents and here-strings are kept for programsOnStdin.
func (r *reader) redirects(rs []*syntax.Redirect, pipe int) {
	for _, rd := range rs {
		if rd.Op == syntax.DplOut && rd.N != nil && rd.N.Value == "2" && rd.Word.Lit() == "1" {
			continue
		}
		r.sc.complex = true
		switch rd.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			r.substitutions(rd.Hdoc)
			if rd.Hdoc != nil {
				text, known := r.hereDocument(rd)
				r.stdin = append(r.stdin, stdin{pipeline: pipe, text: text, known: known})
			}
			continue
		case syntax.WordHdoc:
			w := r.word(rd.Word)
			r.stdin = append(r.stdin, stdin{pipeline: pipe, text: w.s, known: !w.dyn})
			continue
		}
		w := r.word(rd.Word)
		w.redir = true
		switch rd.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.DplOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			r.add([]word{w}, pipe, true)
		default:
			r.add([]word{w}, pipe, false)
		}
	}
}

// programsOnStdin reads a here-document or here-string as a program when a shell of its
// pipeline reads its program from standard input (`sh <<EOF`, `cat <<EOF | bash`): its commands
// join the script. A body the shell computes (`$X`, `$(…)` in it) hides what runs.
func (r *reader) programsOnStdin() {
	for _, in := range r.stdin {
		if !r.shellReadsStdin(in.pipeline) {
			continue
		}
		if !in.known {
			r.sc.hidden = "the program a shell reads from a here-document is computed by the shell"
			continue
		}
		inner := readScript(in.text)
		base := r.pipes
		for i, c := range inner.cmds {
			info := inner.info[i]
			info.pipeline += base
			r.sc.cmds = append(r.sc.cmds, c)
			r.sc.info = append(r.sc.info, info)
			r.pipes = max(r.pipes, info.pipeline)
		}
		if inner.hidden != "" {
			r.sc.hidden = inner.hidden
		}
	}
}

// shellReadsStdin reports whether a command of the pipeline, or what it runs, is a shell
// reading its program from standard input.
func (r *reader) shellReadsStdin(pipe int) bool {
	for i, c := range r.sc.cmds {
		if r.sc.info[i].pipeline != pipe || c[0].redir {
			continue
		}
		for _, inv := range invocations(c) {
			if len(inv.argv) > 0 && !inv.argv[0].dyn && shells[program(inv.argv[0].s)] && readsProgramFromStdin(inv.argv) {
				return true
			}
		}
	}
	return false
}

// hereDocument is the text a here-document gives, or false when the shell computes part of
// it. A quoted delimiter (`<<'EOF'`, `<<\EOF`) leaves the body as written.
func (r *reader) hereDocument(rd *syntax.Redirect) (string, bool) {
	delim := r.text(rd.Word)
	if rd.Word.Lit() != delim || strings.Contains(delim, `\`) {
		return rd.Hdoc.Lit(), true
	}
	var b strings.Builder
	for _, p := range rd.Hdoc.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(unescape(lit.Value, "$`\\\n"))
	}
	return b.String(), true
}
