package mcp

// States of a server.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateFailed   = "failed"  // it did not start, or died; Error says why
	StateStopped  = "stopped" // not started yet, or closed
)

// ServerStatus is a server as a UI lists it.
type ServerStatus struct {
	Name   string
	Source string // the configuration file
	Type   string
	State  string
	Error  string
	Tools  []ToolInfo // the tools it declared
}

// ToolInfo is a declared tool, with what its declaration costs in every request.
type ToolInfo struct {
	Name        string // declared
	Tool        string // on its server
	Description string
	Tokens      int // estimated: a quarter of its declaration's JSON
	// Deferred: past the budget, not declared; the model finds it with mcp_find_tools.
	Deferred bool
}

// Servers is the status of every configured server, in configuration order. Tools are known
// once the start has finished.
func (m *Manager) Servers() []ServerStatus {
	var started bool
	select {
	case <-m.started:
		started = true
	default:
	}
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := ServerStatus{Name: s.cfg.Name, Source: s.cfg.Source, Type: s.cfg.Type, State: s.state, Error: s.err}
		s.mu.Unlock()
		if started {
			st.Tools = s.infos
		}
		out = append(out, st)
	}
	return out
}
