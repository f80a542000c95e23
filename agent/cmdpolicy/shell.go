package cmdpolicy

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is one word of a simple command with its quotes removed.
type word struct {
	s string
	// dyn is set when the shell computes part of the word when it runs: a `$` expansion (bare
	// or in double quotes), a substitution, or a glob, brace or `~` outside quotes. The policy
	// cannot know it.
	dyn bool
	// split is set when that part may begin the word or be split into several words, so the
	// word may become an option or more arguments: `$X`, `"$X"`, `*.go`, `{-o,x}`, `a$X`.
	split bool
	// redir is set on the target of a redirection (`< f`, `> f`), which the reading makes a
	// command of its own, so that every path the line names is judged.
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

// script is what sh's grammar says of a line: every simple command it can run, wherever it is
// (pipelines and lists, `$(…)` and backquotes, `<(…)`, arithmetic, here-documents, subshells and
// groups, if/while/until/for/case bodies, function bodies), the commands inside a substitution
// listed before the command they are part of, whose word is then dyn: `$(echo sudo) ls` runs an
// unknown command. What commands run inside others (sh -c, env, find -exec…) is invocations'
// business.
type script struct {
	cmds [][]word
	info []cmdInfo
	// complex is set when the line is more than one plain simple command: operators, pipes,
	// redirections (`2>&1` aside: output is merged anyway), substitutions, compound commands,
	// function definitions, comments, or a line the grammar rejects.
	complex bool
	// hidden says why some program of the line cannot be read from it: the grammar rejects the
	// line, a here-document fed to a shell is computed, functions call each other too often.
	hidden string
}

// cmdInfo is what the reading also tells of each simple command.
type cmdInfo struct {
	// pipeline is shared by the commands a `|` (or `|&`) joins, and differs between pipelines.
	// A group or subshell in a pipeline keeps it for all its commands: `(curl x; true) | sh`.
	pipeline int
	// writes: the command is a redirection's target opened for writing (`>`, `>>`, `>|`, `&>`,
	// `<>`, `>&`).
	writes bool
}

// parseLine splits a command line into simple commands and reports whether the line is more
// than one plain simple command (see script).
func parseLine(line string) (cmds [][]word, complex bool) {
	sc := readScript(line)
	return sc.cmds, sc.complex
}

// maxCalls bounds how many function bodies a line's calls expand: `f(){ :; }; g(){ f;f;f; }…`
// grows exponentially, and past the bound what runs is hidden.
const maxCalls = 64

// readScript reads line with sh's grammar (bash's, which accepts what sh does and more). A line
// the grammar rejects is complex and hidden: nothing of it is allowed by a pattern, and under
// --yes it is refused, since the denylist could not read it.
func readScript(line string) script {
	parser := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
	f, err := parser.Parse(strings.NewReader(line), "")
	if err != nil {
		return script{complex: true, hidden: "the shell's grammar rejects the line (" + err.Error() + ")"}
	}
	r := &reader{src: line, funcs: map[string]*syntax.Stmt{}, calls: maxCalls}
	r.stmts(f.Stmts, -1)
	syntax.Walk(f, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.Comment); ok {
			r.sc.complex = true
		}
		return !r.sc.complex
	})
	r.programsOnStdin()
	if len(r.sc.cmds) > 1 {
		r.sc.complex = true
	}
	return r.sc
}

// reader walks a parsed line into a script.
type reader struct {
	src   string // the line, for the text of expansions
	sc    script
	pipes int                     // the last pipeline number given
	funcs map[string]*syntax.Stmt // the functions defined so far, by name
	// frames are the functions being read, innermost last: a call to one of them is recursion,
	// whose body is read already. A function that runs itself in a pipe or in the background (a
	// fork bomb, `f(){ f|f& };f`) is not a verdict: the sandbox's process limit ends it,
	// however it is spelt (TestAttackForkBomb).
	frames []string
	calls  int     // function bodies still to expand
	stdin  []stdin // here-documents and here-strings, judged at the end
}

// stdin is a here-document or here-string: data, unless a shell of its pipeline reads its
// program from standard input.
type stdin struct {
	pipeline int
	text     string
	known    bool // false when the shell computes part of the text
}

func (r *reader) newPipeline() int {
	r.pipes++
	return r.pipes
}

// add appends a simple command to the script.
func (r *reader) add(argv []word, pipe int, writes bool) {
	if len(argv) == 0 {
		return
	}
	r.sc.cmds = append(r.sc.cmds, argv)
	r.sc.info = append(r.sc.info, cmdInfo{pipeline: pipe, writes: writes})
}

// stmts reads a list. pipe is the pipeline the list's output goes to, or -1 when each
// statement starts its own.
func (r *reader) stmts(ss []*syntax.Stmt, pipe int) {
	for _, s := range ss {
		r.stmt(s, pipe)
	}
}

func (r *reader) stmt(s *syntax.Stmt, pipe int) {
	if s.Background || s.Coprocess || s.Disown {
		r.sc.complex = true
	}
	if s.Negated {
		r.sc.complex = true
	}
	if pipe < 0 && isCall(s.Cmd) {
		pipe = r.newPipeline()
	}
	if s.Cmd != nil {
		r.command(s.Cmd, pipe)
	}
	r.redirects(s.Redirs, r.orNew(pipe)) // a compound command's own: its list keeps its pipelines
}

func isCall(c syntax.Command) bool {
	_, ok := c.(*syntax.CallExpr)
	return ok
}

// command reads one command of any kind.
func (r *reader) command(c syntax.Command, pipe int) {
	if call, ok := c.(*syntax.CallExpr); ok {
		r.call(call, pipe)
		return
	}
	r.sc.complex = true
	switch c := c.(type) {
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			if pipe < 0 {
				pipe = r.newPipeline()
			}
		}
		r.stmt(c.X, pipe)
		r.stmt(c.Y, pipe)
	case *syntax.Block:
		r.stmts(c.Stmts, pipe)
	case *syntax.Subshell:
		r.stmts(c.Stmts, pipe)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			r.stmts(c.Cond, pipe)
			r.stmts(c.Then, pipe)
		}
	case *syntax.WhileClause:
		r.stmts(c.Cond, pipe)
		r.stmts(c.Do, pipe)
	case *syntax.ForClause:
		// The words a loop goes through are judged as a command's arguments (`for f in ~/.ssh/*`
		// names credentials); a C-style loop's are arithmetic.
		argv := []word{{s: "for"}}
		if it, ok := c.Loop.(*syntax.WordIter); ok {
			argv = append(argv, word{s: it.Name.Value}, word{s: "in"})
		}
		r.words(c.Loop, &argv)
		r.add(argv, r.orNew(pipe), false)
		r.stmts(c.Do, pipe)
	case *syntax.CaseClause:
		argv := []word{{s: "case"}, r.word(c.Word)}
		for _, item := range c.Items {
			for _, p := range item.Patterns {
				r.substitutions(p)
			}
		}
		r.add(argv, r.orNew(pipe), false)
		for _, item := range c.Items {
			r.stmts(item.Stmts, pipe)
		}
	default:
		r.otherCommand(c, pipe)
	}
}

// otherCommand reads the commands that are neither simple nor a list of statements.
func (r *reader) otherCommand(c syntax.Command, pipe int) {
	switch c := c.(type) {
	case *syntax.FuncDecl:
		r.define(c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			r.stmt(c.Stmt, pipe)
		}
	case *syntax.CoprocClause:
		r.stmt(c.Stmt, -1)
	case *syntax.ArithmCmd, *syntax.LetClause:
		r.substitutions(c)
	case *syntax.TestClause:
		argv := []word{{s: "[["}}
		r.words(c.X, &argv)
		r.add(append(argv, word{s: "]]"}), r.orNew(pipe), false)
	case *syntax.DeclClause:
		argv := []word{{s: c.Variant.Value}}
		for _, a := range c.Args {
			if w, ok := r.assign(a); ok {
				argv = append(argv, w)
			}
		}
		r.add(argv, r.orNew(pipe), false)
	default:
		r.sc.hidden = fmt.Sprintf("a construct the policy does not read (%T)", c)
	}
}

func (r *reader) orNew(pipe int) int {
	if pipe < 0 {
		return r.newPipeline()
	}
	return pipe
}

// words appends the words of a test expression, each read as an argument.
func (r *reader) words(n syntax.Node, argv *[]word) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			*argv = append(*argv, r.word(w))
			return false
		}
		return true
	})
}

// substitutions reads the commands that the substitutions anywhere in n run (`$(…)`,
// backquotes, `<(…)`, also inside arithmetic and parameter expansions), each list starting
// pipelines of its own.
func (r *reader) substitutions(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			r.sc.complex = true
			r.stmts(n.Stmts, -1)
			return false
		case *syntax.ProcSubst:
			r.sc.complex = true
			r.stmts(n.Stmts, -1)
			return false
		case *syntax.ArithmExp:
			r.sc.complex = true
		}
		return true
	})
}

// call reads a simple command: its assignments and words, then, for a function defined in the
// line, the body it runs, in the caller's pipeline.
func (r *reader) call(c *syntax.CallExpr, pipe int) {
	var argv []word
	for _, a := range c.Assigns {
		if w, ok := r.assign(a); ok {
			argv = append(argv, w)
		}
	}
	for _, w := range c.Args {
		argv = append(argv, r.word(w))
	}
	r.add(argv, pipe, false)
	if len(c.Args) == 0 {
		return
	}
	name := c.Args[0].Lit()
	body, ok := r.funcs[name]
	if !ok || name == "" {
		return
	}
	if slices.Contains(r.frames, name) {
		return
	}
	if r.calls--; r.calls < 0 {
		r.sc.hidden = "the line's functions call each other too often to follow"
		return
	}
	r.inFunction(name, func() { r.stmt(body, pipe) })
}

// define reads a function definition: its body is judged whether or not the line calls it,
// and a call by name runs it (call).
func (r *reader) define(fd *syntax.FuncDecl) {
	if fd.Name == nil || fd.Body == nil {
		r.sc.hidden = "a function without a name"
		return
	}
	r.funcs[fd.Name.Value] = fd.Body
	r.inFunction(fd.Name.Value, func() { r.stmt(fd.Body, -1) })
}

func (r *reader) inFunction(name string, read func()) {
	r.frames = append(r.frames, name)
	read()
	r.frames = r.frames[:len(r.frames)-1]
}

// assign reads an assignment as the word NAME=value (`a+=x` too: what matters is the value),
// an array's values joined and computed.
func (r *reader) assign(a *syntax.Assign) (word, bool) {
	r.substitutions(a.Index)
	var w word
	switch {
	case a.Value != nil:
		w = r.word(a.Value)
	case a.Array != nil:
		r.substitutions(a.Array)
		w = word{s: r.text(a.Array), dyn: true}
	}
	if a.Name == nil {
		return w, a.Value != nil // `declare $X`: the word itself
	}
	w.s = a.Name.Value + "=" + w.s
	w.split = false
	return w, true
}

// text is the source of n, as written.
func (r *reader) text(n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(r.src) || from > to {
		return ""
	}
	return r.src[from:to]
}
