package lsp

import "go.lsp.dev/protocol"

// startupWarnings tells the user what the command found before the editor connected, such as an
// API key about to be sent to a host that is not Google's. The server's stderr is seldom seen in
// an editor, so each one is shown (window/showMessage, Warning) and also logged
// (window/logMessage), where it stays after the popup is dismissed.
func (s *server) startupWarnings() {
	for _, w := range s.opts.Warnings {
		s.logMessage(protocol.MessageTypeWarning, "Reprise: "+w)
		s.showMessage(protocol.MessageTypeWarning, "Reprise: "+w)
	}
}
