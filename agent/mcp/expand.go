package mcp

import (
	"fmt"
	"maps"
	"strings"
)

// expand substitutes the variables VS Code substitutes in a server's command, args, env, cwd, url
// and headers: ${workspaceFolder} and ${env:NAME}, NAME looked up in env (KEY=VALUE entries; an
// unset variable is empty, as in VS Code). ${input:...} asks the user through VS Code's own
// prompts, which Reprise has not: such a server fails with an error that says so.
func expand(c ServerConfig, workspace string, env []string) (ServerConfig, error) {
	if c.Literal {
		return c, nil
	}
	lookup := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v
			}
		}
		return ""
	}
	var err error
	sub := func(field, s string) string {
		if err != nil {
			return s
		}
		var out string
		out, err = expandString(s, workspace, lookup)
		if err != nil {
			err = fmt.Errorf("%s: server %q: %s: %w", c.Source, c.Name, field, err)
		}
		return out
	}
	c.Command = sub("command", c.Command)
	c.Args = append([]string(nil), c.Args...)
	for i := range c.Args {
		c.Args[i] = sub(fmt.Sprintf("args[%d]", i), c.Args[i])
	}
	c.Env = maps.Clone(c.Env)
	for _, k := range sortedKeys(c.Env) {
		c.Env[k] = sub("env."+k, c.Env[k])
	}
	c.Cwd = sub("cwd", c.Cwd)
	c.URL = sub("url", c.URL)
	c.Headers = maps.Clone(c.Headers)
	for _, k := range sortedKeys(c.Headers) {
		c.Headers[k] = sub("headers."+k, c.Headers[k])
	}
	return c, err
}

func expandString(s, workspace string, lookup func(string) string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%q: unclosed ${", s)
		}
		b.WriteString(s[:i])
		name := s[i+2 : i+j]
		switch {
		case name == "workspaceFolder":
			if workspace == "" {
				return "", fmt.Errorf("${workspaceFolder}: no workspace folder is open")
			}
			b.WriteString(workspace)
		case strings.HasPrefix(name, "env:"):
			b.WriteString(lookup(strings.TrimPrefix(name, "env:")))
		case strings.HasPrefix(name, "input:"):
			return "", fmt.Errorf("${%s} is not supported: Reprise cannot prompt for inputs; write the value, or ${env:NAME}", name)
		default:
			return "", fmt.Errorf("${%s} is not supported: only ${workspaceFolder} and ${env:NAME} are", name)
		}
		s = s[i+j+1:]
	}
}
