package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/reprise-dev/reprise/agent/sandbox"
)

// sandbox builds the commands' sandbox for settings c. When it cannot confine commands although
// the settings ask for it, the user is told why once per connection: every command will be asked.
// So are they when commands get no process limit here (root without a pids cgroup).
func (s *server) sandbox(c config) *sandbox.Sandbox {
	sb := sandbox.New(c.sandboxConfig(s.root))
	s.sandboxNotices(sb)
	return sb
}

// sandboxNotices tells the user, once per connection, what sb cannot do here.
func (s *server) sandboxNotices(sb *sandbox.Sandbox) {
	s.log.Debug(sb.Describe())
	if ok, reason := sb.Confined(); !ok && sb.Mode() == sandbox.WorkspaceWrite {
		s.sandboxNotice.Do(func() {
			s.log.Warn("commands are not sandboxed: " + reason + "; every command will be asked")
			s.showMessage(protocol.MessageTypeWarning, "Reprise: commands cannot be sandboxed here ("+reason+"); every command will be asked.")
		})
	}
	if open := sb.NetworkOpen(); open != "" {
		s.networkNotice.Do(func() {
			s.logMessage(protocol.MessageTypeInfo, "Reprise: "+open+".")
			s.showMessage(protocol.MessageTypeInfo, "Reprise: "+open+".")
		})
	}
	if perProcess := sb.NoMemoryLimit(); perProcess != "" {
		s.memoryNotice.Do(func() { s.logMessage(protocol.MessageTypeInfo, "Reprise: "+perProcess+".") })
	}
	if none := sb.NoProcessLimit(); none != "" {
		s.limitNotice.Do(func() {
			s.log.Warn(none)
			s.logMessage(protocol.MessageTypeWarning, "Reprise: "+none+".")
			s.showMessage(protocol.MessageTypeWarning, "Reprise: "+none+".")
		})
	}
}
