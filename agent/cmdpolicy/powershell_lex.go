package cmdpolicy

import "strings"

// lexWords is the tolerant reading of a complex PowerShell line, for the denylist only (see
// parsePowerShell): sh's words and separators without sh's grammar, since that grammar rejects
// most PowerShell (`& git push`, `@{ a = 1 }`, `$env:X = 1`). It splits the line at ; & | < >
// ( ) and newlines, honours sh's quotes and backslash, and lists the commands inside `$(…)` and
// backquotes before the command they are part of, whose word is then dyn. It never fails: an
// unclosed quote or parenthesis keeps what it read.
func lexWords(line string) [][]word {
	l := &lexer{line: line}
	for l.i = 0; l.i < len(line); l.i++ {
		l.step(line[l.i])
	}
	l.endCmd()
	for len(l.stack) > 0 { // unclosed: keep the words the substitutions interrupted
		if f := l.pop(); f.kind != '(' {
			l.resume(f)
			l.endCmd()
		}
	}
	return l.cmds
}

type lexer struct {
	line  string
	i     int
	cmds  [][]word
	st    lexState
	cur   strings.Builder
	stack []lexFrame
}

// lexState is the command being read.
type lexState struct {
	words []word
	cur   string // the open word's text, saved while a substitution is read
	w     word   // the open word's flags
	in    bool   // a word is open (possibly empty: "")
	brace bool   // the open word has an unquoted `{`
	redir bool   // the next word is a redirection's target
	quote byte
}

type lexFrame struct {
	kind  byte // '(' a parenthesis, '$' a $( … ) substitution, '`' a backquoted one
	outer lexState
}

// expand marks what comes next in the word as computed by the shell.
func (l *lexer) expand(splits bool) {
	l.st.w.dyn = true
	l.st.w.split = l.st.w.split || splits || l.cur.Len() == 0
}

func (l *lexer) endWord() {
	if l.st.in {
		w := l.st.w
		w.s = l.cur.String()
		switch {
		case w.s == "[" || w.s == "[[":
			w.dyn, w.split = false, false
		case l.st.brace && w.s != "{":
			w.dyn = true
			w.split = w.split || w.s[0] == '{'
		}
		w.redir, l.st.redir = l.st.redir, false
		l.st.words = append(l.st.words, w)
	}
	l.cur.Reset()
	l.st.w, l.st.in, l.st.brace = word{}, false, false
}

func (l *lexer) endCmd() {
	l.endWord()
	if len(l.st.words) > 0 {
		l.cmds = append(l.cmds, l.st.words)
		l.st.words = nil
	}
}

// open starts a substitution inside the current word.
func (l *lexer) open(kind byte) {
	saved := l.st
	saved.cur = l.cur.String()
	l.stack = append(l.stack, lexFrame{kind: kind, outer: saved})
	l.st = lexState{}
	l.cur.Reset()
}

func (l *lexer) pop() lexFrame {
	f := l.stack[len(l.stack)-1]
	l.stack = l.stack[:len(l.stack)-1]
	return f
}

// resume goes back to the word a substitution is part of, which is now dyn.
func (l *lexer) resume(f lexFrame) {
	l.st = f.outer
	l.cur.Reset()
	l.cur.WriteString(l.st.cur)
	l.st.in = true
	l.expand(l.st.quote == 0)
}

func (l *lexer) closeSubst() {
	l.endCmd()
	l.resume(l.pop())
}

func (l *lexer) top(kind byte) bool { return len(l.stack) > 0 && l.stack[len(l.stack)-1].kind == kind }

func (l *lexer) next() byte {
	if l.i+1 < len(l.line) {
		return l.line[l.i+1]
	}
	return 0
}

func (l *lexer) step(c byte) {
	switch l.st.quote {
	case '\'':
		if c == '\'' {
			l.st.quote = 0
		} else {
			l.cur.WriteByte(c)
		}
	case '"':
		l.quoted(c)
	default:
		l.unquoted(c)
	}
}

// quoted reads a character inside double quotes.
func (l *lexer) quoted(c byte) {
	switch {
	case c == '"':
		l.st.quote = 0
	case c == '\\' && strings.IndexByte("$`\"\\\n", l.next()) >= 0 && l.next() != 0:
		l.i++
		l.cur.WriteByte(l.line[l.i])
	case c == '`' && l.top('`'):
		l.closeSubst()
	case c == '`':
		l.open('`')
	case c == '$' && l.next() == '(':
		l.i++
		l.open('$')
	case c == '$' && l.next() != '"' && l.next() != ' ' && l.next() != 0:
		l.expand(false)
		l.cur.WriteByte(c)
	default:
		l.cur.WriteByte(c)
	}
}

// unquoted reads a character outside quotes.
func (l *lexer) unquoted(c byte) {
	switch c {
	case ' ', '\t', '\r':
		l.endWord()
	case '\\':
		if l.next() != 0 {
			l.i++
			if l.line[l.i] != '\n' {
				l.cur.WriteByte(l.line[l.i])
				l.st.in = true
			}
		}
	case '\'', '"':
		l.st.quote, l.st.in = c, true
	case '`':
		if l.top('`') {
			l.closeSubst()
		} else {
			l.open('`')
		}
	case '(':
		l.endCmd()
		l.stack = append(l.stack, lexFrame{kind: '('})
	case ')':
		if l.top('$') {
			l.closeSubst()
			return
		}
		l.endCmd()
		if l.top('(') {
			l.pop()
		}
	case ';', '&', '|', '\n', '<', '>':
		l.endCmd()
		l.st.redir = c == '<' || c == '>'
	default:
		l.special(c)
	}
}

// special reads the characters that make a word computed, or a comment.
func (l *lexer) special(c byte) {
	switch {
	case c == '#' && !l.st.in:
		for l.i < len(l.line) && l.line[l.i] != '\n' {
			l.i++
		}
		l.endCmd()
		return
	case c == '$' && l.next() == '(':
		l.i++
		l.open('$')
		return
	case c == '$' && l.next() != 0 && strings.IndexByte(" \t\r\n;&|)", l.next()) < 0:
		l.expand(true) // unquoted: split into words by the shell
	case c == '*' || c == '?' || c == '[':
		l.expand(false)
	case c == '~' && !l.st.in:
		l.st.w.dyn = true
	case c == '{':
		l.st.brace = true
	}
	l.cur.WriteByte(c)
	l.st.in = true
}
