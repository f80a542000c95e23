;;; agent-shell-reprise.el --- Reprise in agent-shell over ACP -*- lexical-binding: t; -*-

;; Reprise speaks ACP itself (`reprise acp'), so agent-shell needs only a config that starts it.
;; The key comes from Emacs's environment; set `reprise-acp-environment' to pass it explicitly,
;; e.g. '("GEMINI_API_KEY=...").

(require 'agent-shell)

(defvar reprise-acp-environment nil
  "Extra \"VAR=value\" strings for `reprise acp', before Emacs's own environment.")

(defun reprise-acp-make-agent-config ()
  "An agent-shell config that runs `reprise acp'."
  (agent-shell-make-agent-config
   :identifier 'reprise
   :mode-line-name "Reprise"
   :buffer-name "Reprise"
   :shell-prompt "Reprise> "
   :shell-prompt-regexp "Reprise> "
   :client-maker (lambda (buffer)
                   (acp-make-client :command "reprise"
                                    :command-params '("acp")
                                    :environment-variables reprise-acp-environment
                                    :context-buffer buffer))))

(add-to-list 'agent-shell-agent-configs (reprise-acp-make-agent-config) t)

(defun reprise-acp-start ()
  "Start a Reprise agent shell."
  (interactive)
  (agent-shell-start :config (reprise-acp-make-agent-config)))

(provide 'agent-shell-reprise)
;;; agent-shell-reprise.el ends here
