package cmdpolicy

import "strings"

// word is one word of a simple command with its quotes removed.
type word struct {
	s string
	// dyn is set when the shell computes part of the word when it runs: a `$` expansion (bare
	// or in double quotes), or a glob, brace or `~` outside quotes. The policy cannot know it.
	dyn bool
	// split is set when that part may begin the word or be split into several words, so the
	// word may become an option or more arguments: `$X`, `"$X"`, `*.go`, `{-o,x}`, `a$X`.
	split bool
	// redir is set on the word after `<` or `>`: a file, though the lexer makes it a command.
	redir bool
}

func literal(ss ...string) []word {
	ws := make([]word, len(ss))
	for i, s := range ss {
		ws[i] = word{s: s}
	}
	return ws
}

func texts(ws []word) []string {
	ss := make([]string, len(ws))
	for i, w := range ws {
		ss[i] = w.s
	}
	return ss
}

func joinText(ws []word) string { return strings.Join(texts(ws), " ") }

// parseLine splits a command line into simple commands and reports whether the line is more
// than one simple command: control operators, pipes, redirections, substitutions, subshells,
// comments or an unclosed quote. It is not a full shell parser; it is enough to tell
// "go test ./..." from "go test && rm …" and to find every command a line names, the ones inside
// `$(…)` and backquotes included (listed before the command they are part of, whose word is then
// dyn: `$(echo sudo) ls` runs an unknown command). `2>&1` is not an operator here: output is
// merged anyway. What commands run inside others (sh -c, env, find -exec…) is invocations'
// business.
func parseLine(line string) (cmds [][]word, complex bool) {
	cmds, _, complex = lexLine(line)
	return cmds, complex
}

// cmdInfo is what lexLine also tells of each simple command.
type cmdInfo struct {
	// pipeline is shared by the commands a `|` (or `|&`) joins, and differs between pipelines.
	// Parentheses keep it: `(curl x) | sh` is one pipeline.
	pipeline int
	// writes: the command is a redirection's target opened for writing (`>`, `>>`, `>|`, `&>`,
	// `<>`).
	writes bool
}

// lexLine is parseLine with, for each command, its cmdInfo.
func lexLine(line string) (cmds [][]word, info []cmdInfo, complex bool) {
	type state struct {
		words    []word
		cur      string
		w        word // the open word's flags
		in       bool // a word is open (possibly empty: "")
		brace    bool // the open word has an unquoted `{`
		redir    bool // the next word is a redirection's target
		redirOut bool // … opened for writing
		writes   bool // the command is a target opened for writing
		pipeline int
		quote    byte
	}
	type frame struct {
		kind  byte  // '(' a subshell or arithmetic, '$' a $( … ) substitution, '`' a backquoted one
		outer state // what a substitution interrupted
	}
	var (
		st    state
		cur   strings.Builder
		stack []frame
		pipes = 1 // the next pipeline's number
	)
	newPipeline := func() { st.pipeline = pipes; pipes++ }
	expand := func(splits bool) { // the shell computes what comes next in the word
		st.w.dyn = true
		st.w.split = st.w.split || splits || cur.Len() == 0
	}
	endWord := func() {
		if st.in {
			w := st.w
			w.s = cur.String()
			if w.redir = st.redir; w.redir && len(st.words) == 0 {
				st.writes = st.redirOut
			}
			st.redir, st.redirOut = false, false
			switch {
			case w.s == "[" || w.s == "[[": // the test command, not a glob
				w.dyn, w.split = false, false
			case st.brace && w.s != "{": // a lone `{` is the group keyword
				w.dyn = true
				w.split = w.split || w.s[0] == '{'
			}
			st.words = append(st.words, w)
		}
		cur.Reset()
		st.w, st.in, st.brace = word{}, false, false
	}
	endCmd := func() {
		endWord()
		if len(st.words) > 0 {
			cmds = append(cmds, st.words)
			info = append(info, cmdInfo{pipeline: st.pipeline, writes: st.writes})
			st.words = nil
		}
		st.writes = false
	}
	open := func(kind byte) { // a substitution starts inside the current word
		complex = true
		saved := st
		saved.cur = cur.String()
		stack = append(stack, frame{kind: kind, outer: saved})
		st = state{}
		newPipeline()
		cur.Reset()
	}
	closeSubst := func() { // back to the word the substitution is part of, which is now dyn
		endCmd()
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st = f.outer
		cur.Reset()
		cur.WriteString(st.cur)
		st.in = true
		expand(st.quote == 0)
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch st.quote {
		case '\'':
			if c == '\'' {
				st.quote = 0
			} else {
				cur.WriteByte(c)
			}
			continue
		case '"':
			switch {
			case c == '"':
				st.quote = 0
			case c == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\\n", line[i+1]) >= 0:
				i++
				cur.WriteByte(line[i])
			case c == '`' && len(stack) > 0 && stack[len(stack)-1].kind == '`':
				closeSubst() // a backquote ends the one it is inside, quoted or not
			case c == '`':
				open('`')
			case c == '$' && i+1 < len(line) && line[i+1] == '(':
				i++
				open('$')
			case c == '$' && i+1 < len(line) && line[i+1] != '"' && line[i+1] != ' ':
				expand(false)
				cur.WriteByte(c)
			default:
				cur.WriteByte(c)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r':
			endWord()
		case '\\':
			if i+1 < len(line) {
				i++
				if line[i] != '\n' {
					cur.WriteByte(line[i])
					st.in = true
				}
			}
		case '\'', '"':
			st.quote, st.in = c, true
		case '`':
			if len(stack) > 0 && stack[len(stack)-1].kind == '`' {
				closeSubst()
			} else {
				open('`')
			}
		case '(':
			complex = true
			endCmd()
			stack = append(stack, frame{kind: '('})
		case ')':
			complex = true
			if len(stack) > 0 && stack[len(stack)-1].kind == '$' {
				closeSubst()
				continue
			}
			endCmd()
			if len(stack) > 0 && stack[len(stack)-1].kind == '(' {
				stack = stack[:len(stack)-1]
			}
		case ';', '&', '|', '\n', '<', '>':
			if c == '>' && st.in && cur.String() == "2" && !st.w.dyn && strings.HasPrefix(line[i+1:], "&1") &&
				(i+3 == len(line) || line[i+3] == ' ' || line[i+3] == '\t') {
				cur.Reset() // 2>&1: stderr is merged anyway
				st.in = false
				i += 2
				continue
			}
			complex = true
			endCmd()
			next := byte(0)
			if i+1 < len(line) {
				next = line[i+1]
			}
			switch {
			case c == '<' || c == '>':
				st.redir = true
				st.redirOut = st.redirOut || c == '>' || next == '>'
			case c == '|' && next == '|', c == '&' && next == '&':
				i++
				newPipeline()
			case c == '|' && next == '&': // |&: stderr too, still a pipe
				i++
			case c == '|':
			case c == '&' && (next == '>' || i > 0 && (line[i-1] == '>' || line[i-1] == '<')):
				// &> and >&: a redirection, not a background job
			default:
				newPipeline()
			}
		case '#':
			if st.in {
				cur.WriteByte(c)
				continue
			}
			complex = true
			for i < len(line) && line[i] != '\n' {
				i++
			}
			endCmd()
		case '$':
			switch {
			case i+1 < len(line) && line[i+1] == '(':
				i++
				open('$')
				continue
			case i+1 < len(line) && strings.IndexByte(" \t\r\n;&|)", line[i+1]) < 0:
				expand(true) // unquoted: split into words by the shell
			}
			cur.WriteByte(c)
			st.in = true
		case '*', '?', '[':
			expand(false)
			cur.WriteByte(c)
			st.in = true
		case '~':
			if !st.in {
				st.w.dyn = true // the home directory: never an option, but never a known name
			}
			cur.WriteByte(c)
			st.in = true
		case '{':
			st.brace = true
			cur.WriteByte(c)
			st.in = true
		default:
			cur.WriteByte(c)
			st.in = true
		}
	}
	if st.quote != 0 || len(stack) > 0 {
		complex = true
	}
	endCmd()
	for len(stack) > 0 { // unclosed: keep the words the substitutions interrupted
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.kind != '(' {
			st = f.outer
			cur.Reset()
			cur.WriteString(st.cur)
			st.in = true
			expand(true)
			endCmd()
		}
	}
	if len(cmds) > 1 {
		complex = true
	}
	return cmds, info, complex
}
