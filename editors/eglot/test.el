;;; test.el --- Reprise through eglot, a plain LSP client  -*- lexical-binding: t; -*-

;; Run by run.sh: emacs --batch -l test.el, with `reprise' on PATH, the fake model behind
;; GOOGLE_GEMINI_BASE_URL and REPRISE_TEST_PROJECT naming a project holding stock.js.
;;
;; It does what a user does: open a file, connect eglot, pick the code action on a
;; "// reprise:" comment, then on a selection, then "Show context" and "Compact session", then
;; reviews a turn that edited two files (list the changes, undo one, a refused undo), all
;; through `eglot-code-actions' (the command bound in eglot's menu) with the choice answered.
;; The project carries a hostile .dir-locals.el (run.sh writes it): its protected settings must
;; change nothing, and a command the model runs is asked (and refused).
;; It watches what eglot receives and waits on conditions, never on time.

(require 'package)
(package-initialize)
(require 'cl-lib)
(require 'subr-x)
(require 'eglot)

;;; Test bookkeeping

(defvar reprise-test-passed 0)
(defvar reprise-test-failed 0)

(defun reprise-test-check (name ok &optional detail)
  "Record the check NAME, which passed when OK; DETAIL explains a failure."
  (if ok
      (progn (cl-incf reprise-test-passed) (message "ok   %s" name))
    (cl-incf reprise-test-failed)
    (message "FAIL %s%s" name (if detail (format ": %s" detail) ""))))

(defvar reprise-test-timeout 30
  "Seconds a wait may take before the check fails. A deadline, not a pause.")

(defvar reprise-test-server nil "The eglot connection under test.")

(defun reprise-test-read ()
  "Read what the server sent.
Emacs 28's jsonrpc throws out of its process filter when it meets the answer to a
synchronous request (`jsonrpc-request', which `eglot-execute-command' uses), so whatever
came after that answer in the same read stays in the process buffer, unparsed, until the
server writes again. A server request stuck there (window/workDoneProgress/create after
the answer to reprise.ask) would wait forever; a final window/showMessage would never show.
Feeding the filter an empty string parses the rest, as the next output would."
  (accept-process-output nil 0.05)
  (let ((proc (and reprise-test-server (jsonrpc--process reprise-test-server))))
    (when (and proc (process-live-p proc))
      (funcall (process-filter proc) proc ""))))

(defun reprise-test-wait (pred)
  "Read the server's output until PRED returns non-nil or the deadline passes.
Return PRED's value, or nil at the deadline."
  (let ((deadline (+ (float-time) reprise-test-timeout))
        value)
    (while (and (not (setq value (funcall pred)))
                (< (float-time) deadline))
      (reprise-test-read))
    value))

;;; What eglot receives

(defvar reprise-test-notifications nil
  "Every notification from the server, newest first, as (METHOD . PARAMS).")

(cl-defmethod eglot-handle-notification :before (_server method &rest params)
  "Record every notification before eglot handles it."
  (push (cons (format "%s" method) params) reprise-test-notifications))

(defun reprise-test-find (method pred)
  "The params of the oldest recorded METHOD notification satisfying PRED."
  (cl-find-if (lambda (n) (and (string= (car n) method) (funcall pred (cdr n))))
              (reverse reprise-test-notifications)
              :key #'identity))

(defun reprise-test-message-with (text)
  "The params of a window/showMessage notification containing TEXT."
  (cdr (reprise-test-find "window/showMessage"
                          (lambda (p) (string-search text (plist-get p :message))))))

(defun reprise-test-progress (pred)
  "The value of a $/progress notification satisfying PRED."
  (let ((n (reprise-test-find "$/progress" (lambda (p) (funcall pred (plist-get p :value))))))
    (and n (plist-get (cdr n) :value))))

(defvar reprise-test-results nil
  "Results of workspace/executeCommand, newest first, as (COMMAND . RESULT-OR-ERROR).")

(defvar reprise-test-questions nil
  "The messages of window/showMessageRequest (approvals), newest first.")

(cl-defmethod eglot-handle-request :around (_server (_method (eql window/showMessageRequest)) &rest params)
  "Record an approval question and answer it as a user who says no.
Eglot would ask with `completing-read', which a batch Emacs cannot answer."
  (push (plist-get params :message) reprise-test-questions)
  (list :title "Reject"))

(cl-defmethod eglot-execute-command :around (_server command _arguments)
  "Record what each command returned; a code action menu discards it."
  (condition-case err
      (let ((result (cl-call-next-method)))
        (push (cons (format "%s" command) result) reprise-test-results)
        result)
    (jsonrpc-error
     (push (cons (format "%s" command) err) reprise-test-results)
     (signal (car err) (cdr err)))))

;; Eglot 1.9 (Debian 12) does not declare window.workDoneProgress, so a server may not send it
;; progress; eglot 1.10 and later declare it and show the meter in the mode line. Declare it here
;; when missing, as a user of eglot 1.9 would, so that the meter can be checked.
(cl-defmethod eglot-client-capabilities :around (_server)
  (let ((caps (cl-call-next-method)))
    (unless (plist-get (plist-get caps :window) :workDoneProgress)
      (setq caps (plist-put caps :window
                            (plist-put (plist-get caps :window) :workDoneProgress t))))
    caps))

;;; The user's actions

(defun reprise-test-run-action (title &optional region)
  "Pick the code action called TITLE in `eglot-code-actions', at point or on REGION.
Return nil, or the error it signalled."
  (cl-letf (((symbol-function 'completing-read)
             (lambda (_prompt collection &rest _)
               (or (cl-find title (mapcar (lambda (c) (if (consp c) (car c) c)) collection)
                            :test #'string=)
                   (error "No action %S among %S" title (mapcar #'car collection))))))
    ;; A keyboard event, so that eglot offers a completing-read menu rather than a popup.
    (let ((last-nonmenu-event ?\r))
      (condition-case err
          (progn
            (if region
                (eglot-code-actions (car region) (cdr region) nil t)
              (eglot-code-actions (point) nil nil t))
            nil)
        (error err)))))

(defun reprise-test-titles (&optional region)
  "Titles of the code actions at point or on REGION."
  (mapcar (lambda (a) (plist-get a :title))
          (if region
              (eglot-code-actions (car region) (cdr region))
            (eglot-code-actions (point)))))

(defun reprise-test-file (file)
  "The contents of FILE on disk."
  (with-temp-buffer
    (insert-file-contents file)
    (buffer-string)))

(defun reprise-test-dump-events ()
  "After a failure, save eglot's events buffer where REPRISE_TEST_EVENTS says."
  (let ((file (getenv "REPRISE_TEST_EVENTS")))
    (when (and file (> reprise-test-failed 0) reprise-test-server)
      (ignore-errors
        (with-current-buffer (jsonrpc-events-buffer reprise-test-server)
          (write-region nil nil file))))))

;;; The scenario

(defun reprise-test-main ()
  (let* ((project (file-name-as-directory (getenv "REPRISE_TEST_PROJECT")))
         (file (expand-file-name "stock.js" project))
         (eglot-sync-connect t)
         (eglot-connect-timeout reprise-test-timeout)
         (server nil))
    ;; How a user registers the server: every setting left out keeps its default, and
    ;; keepRecentTurns 1 lets two turns be compacted.
    (add-to-list 'eglot-server-programs
                 '(js-mode . ("reprise" "serve" "--stdio"
                              :initializationOptions (:keepRecentTurns 1))))
    (find-file file)
    (js-mode)
    (apply #'eglot (eglot--guess-contact))
    (setq server (eglot-current-server)
          reprise-test-server server)
    (reprise-test-check "eglot connected" (and server (jsonrpc-running-p server)))
    (unless server (error "No server"))
    (reprise-test-check "the server offers code actions"
                        (eglot--server-capable :codeActionProvider))

    ;; 0. The project's .dir-locals.el set eglot-workspace-configuration, which Emacs applied
    ;; without asking and eglot sent: the server ignored its protected settings and said so,
    ;; naming them and where they belong.
    (reprise-test-check "eglot applied the project's .dir-locals.el"
                        (plist-get eglot-workspace-configuration :reprise)
                        eglot-workspace-configuration)
    (let ((warning (reprise-test-wait
                    (lambda () (reprise-test-message-with "ignored allow, sandbox, allowNetwork, mcpServers")))))
      (reprise-test-check "its protected settings are ignored, with a warning saying where they belong"
                          (and warning (eql (plist-get warning :type) 2)
                               (string-search "settings.json" (plist-get warning :message)))
                          (or warning (mapcar #'cdr (cl-remove-if-not
                                                     (lambda (n) (string= (car n) "window/showMessage"))
                                                     reprise-test-notifications))))
      (when warning (message "     %s" (plist-get warning :message))))

    ;; 1. A "// reprise:" comment becomes an action asking it.
    (goto-char (point-min))
    (search-forward "reprise: add a test")
    (let ((titles (reprise-test-titles)))
      (reprise-test-check "actions on the comment line"
                          (equal titles '("Reprise: ask \"add a test for NeedsRestock\""
                                          "Reprise: compact session"
                                          "Reprise: show context"))
                          titles))
    (goto-char (point-min))
    (let ((titles (reprise-test-titles)))
      (reprise-test-check "only compact and show context on a plain line"
                          (equal titles '("Reprise: compact session" "Reprise: show context"))
                          titles))
    (search-forward "reprise: add a test")
    (let ((err (reprise-test-run-action "Reprise: ask \"add a test for NeedsRestock\"")))
      (reprise-test-check "the ask action runs" (null err) err))
    (reprise-test-check "reprise.ask answered with a session id"
                        (let ((r (cdr (assoc "reprise.ask" reprise-test-results))))
                          (and (listp r) (stringp (plist-get r :sessionId))))
                        reprise-test-results)
    (let ((answer (reprise-test-wait
                   (lambda () (reprise-test-message-with "Added a test for NeedsRestock")))))
      (reprise-test-check "the answer arrives as window/showMessage (Info)"
                          (and answer (eql (plist-get answer :type) 3))
                          (or answer (mapcar #'car reprise-test-notifications))))
    (let ((meter (reprise-test-progress
                  (lambda (v) (and (equal (plist-get v :kind) "report")
                                   (numberp (plist-get v :percentage))
                                   (> (plist-get v :percentage) 0)
                                   (string-prefix-p "Context " (plist-get v :message)))))))
      (reprise-test-check "the meter: $/progress with a percentage" meter
                          (mapcar #'cdr (cl-remove-if-not
                                         (lambda (n) (string= (car n) "$/progress"))
                                         reprise-test-notifications)))
      (when meter
        (message "     meter: %s (%s%%)" (plist-get meter :message) (plist-get meter :percentage))))
    (reprise-test-check "the turn's progress ends"
                        (reprise-test-wait
                         (lambda () (reprise-test-progress
                                     (lambda (v) (and (equal (plist-get v :kind) "end")
                                                      (string-search "end_turn" (or (plist-get v :message) ""))))))))

    ;; 2. A selection becomes an action asking about it.
    (goto-char (point-min))
    (let* ((beg (progn (search-forward "function needsRestock") (match-beginning 0)))
           (end (progn (search-forward "}") (point)))
           (region (cons beg end)))
      (reprise-test-check "an action on the selection"
                          (member "Reprise: ask about the selection" (reprise-test-titles region)))
      (let ((err (reprise-test-run-action "Reprise: ask about the selection" region)))
        (reprise-test-check "the selection action runs" (null err) err)))
    (reprise-test-check "the answer about the selection arrives"
                        (reprise-test-wait
                         (lambda () (reprise-test-message-with "where < was meant"))))
    ;; The turn must be over before compacting.
    (reprise-test-wait
     (lambda () (>= (cl-count-if (lambda (n) (and (string= (car n) "$/progress")
                                                 (equal (plist-get (plist-get (cdr n) :value) :kind) "end")))
                                 reprise-test-notifications)
                    2)))

    ;; 3. Show context.
    (goto-char (point-min))
    (let ((err (reprise-test-run-action "Reprise: show context")))
      (reprise-test-check "the show context action runs" (null err) err))
    (reprise-test-check "the context view arrives as window/showMessage"
                        (reprise-test-wait (lambda () (reprise-test-message-with "System tools"))))

    ;; 4. Compact session: progress from 0 %, then the result.
    (let ((err (reprise-test-run-action "Reprise: compact session")))
      (reprise-test-check "the compact action runs" (null err) err))
    (let ((r (cdr (assoc "reprise.compact" reprise-test-results))))
      (reprise-test-check "reprise.compact answered with the checkpoint"
                          (and (listp r)
                               (equal (plist-get (plist-get r :checkpoint) :n) 1)
                               (< (plist-get r :after) (plist-get r :before)))
                          r))
    (reprise-test-check "compaction progress begins at 0 %"
                        (reprise-test-progress
                         (lambda (v) (and (equal (plist-get v :kind) "begin")
                                          (equal (plist-get v :title) "Reprise: compacting")
                                          (eql (plist-get v :percentage) 0)))))
    (let ((end (reprise-test-wait
                (lambda () (reprise-test-progress
                            (lambda (v) (and (equal (plist-get v :kind) "end")
                                             (string-search "checkpoint 1" (or (plist-get v :message) "")))))))))
      (reprise-test-check "compaction progress ends with the checkpoint" end)
      (when end (message "     compacted: %s" (plist-get end :message))))

    ;; 5. Nothing left to compact: the error reaches the user.
    (let ((err (reprise-test-run-action "Reprise: compact session")))
      (reprise-test-check "a second compaction says there is nothing to compact"
                          (and err (string-search "nothing to compact" (format "%S" err)))
                          err))

    ;; 6. Review: a turn edits limits.js and notes.js; undoing limits.js restores it alone, and
    ;; the undo of notes.js, edited by the user after the agent, is refused with the reason.
    (goto-char (point-max))
    (insert "// reprise: update limits and notes\n")
    (forward-line -1)
    (let ((err (reprise-test-run-action "Reprise: ask \"update limits and notes\"")))
      (reprise-test-check "the ask action that edits two files runs" (null err) err))
    (reprise-test-check "the editing turn ends"
                        (reprise-test-wait
                         (lambda () (>= (cl-count-if
                                         (lambda (n) (and (string= (car n) "$/progress")
                                                          (string-search "end_turn" (or (plist-get (plist-get (cdr n) :value) :message) ""))))
                                         reprise-test-notifications)
                                        3))))
    (let ((limits (expand-file-name "limits.js" project))
          (notes (expand-file-name "notes.js" project)))
      (reprise-test-check "the agent edited both files"
                          (and (string= (reprise-test-file limits) "const minimum = 10;\n")
                               (string= (reprise-test-file notes) "// Notes on stock.\n"))
                          (list (reprise-test-file limits) (reprise-test-file notes)))
      (let ((err (reprise-test-run-action "Reprise: list the agent's changes")))
        (reprise-test-check "the list action runs" (null err) err))
      (reprise-test-check "the changes are listed with their counts"
                          (reprise-test-wait
                           (lambda () (reprise-test-message-with "limits.js (modified) +1 −1\nnotes.js (modified) +1 −1"))))
      (find-file limits)
      (reprise-test-check "eglot manages limits.js" (eq (eglot-current-server) server))
      (let ((titles (reprise-test-titles)))
        (reprise-test-check "the undo action on a changed file"
                            (member "Reprise: undo the agent's change to this file" titles) titles))
      (let ((err (reprise-test-run-action "Reprise: undo the agent's change to this file")))
        (reprise-test-check "the undo action runs" (null err) err))
      (reprise-test-check "the undo is reported"
                          (reprise-test-wait
                           (lambda () (reprise-test-message-with "undid the agent's change to limits.js"))))
      (reprise-test-check "limits.js is back as it was"
                          (string= (reprise-test-file limits) "const minimum = 5;\n")
                          (reprise-test-file limits))
      (reprise-test-check "notes.js keeps the agent's change"
                          (string= (reprise-test-file notes) "// Notes on stock.\n")
                          (reprise-test-file notes))
      ;; The user edits notes.js on disk after the agent.
      (with-temp-file notes (insert "// Notes on stock, by the user.\n"))
      (find-file notes)
      (let ((err (reprise-test-run-action "Reprise: undo the agent's change to this file")))
        (reprise-test-check "the undo of a file the user edited is refused"
                            (and err (string-search "changed since the agent" (format "%S" err)))
                            err))
      (let ((shown (reprise-test-wait
                    (lambda () (reprise-test-message-with "notes.js not undone")))))
        (reprise-test-check "the refusal is shown as a warning with the reason"
                            (and shown (eql (plist-get shown :type) 2)
                                 (string-search "changed since the agent" (plist-get shown :message)))
                            shown))
      (reprise-test-check "notes.js keeps the user's edit"
                          (string= (reprise-test-file notes) "// Notes on stock, by the user.\n")
                          (reprise-test-file notes)))

    ;; 6b. Review by hunk: a turn rewrites prices.js in two places; on the second change's line the
    ;; code actions undo or keep that change alone, and a kept change offers no keep again.
    (find-file file)
    (goto-char (point-max))
    (insert "// reprise: rewrite prices\n")
    (forward-line -1)
    (let ((err (reprise-test-run-action "Reprise: ask \"rewrite prices\"")))
      (reprise-test-check "the ask action that rewrites prices.js runs" (null err) err))
    (let ((prices (expand-file-name "prices.js" project)))
      (reprise-test-check "the agent rewrote prices.js"
                          (reprise-test-wait
                           (lambda () (string= (reprise-test-file prices)
                                               "const a = 10;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst e = 50;\n")))
                          (reprise-test-file prices))
      (reprise-test-check "the rewriting turn ends"
                          (reprise-test-wait (lambda () (reprise-test-message-with "Rewrote prices.js"))))
      (find-file prices)
      (revert-buffer t t)
      (goto-char (point-min))
      (forward-line 4)
      (let ((titles (reprise-test-titles)))
        (reprise-test-check "an undo and a keep of the change on line 5, not of line 1's"
                            (and (member "Reprise: undo the agent's change at line 5" titles)
                                 (member "Reprise: keep the agent's change at line 5" titles)
                                 (not (member "Reprise: undo the agent's change at line 1" titles)))
                            titles))
      (let ((err (reprise-test-run-action "Reprise: undo the agent's change at line 5")))
        (reprise-test-check "the hunk's undo runs" (null err) err))
      (reprise-test-check "the hunk's undo is reported"
                          (reprise-test-wait (lambda () (reprise-test-message-with "undid the change in prices.js"))))
      (reprise-test-check "only line 5 is back as it was"
                          (string= (reprise-test-file prices)
                                   "const a = 10;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst e = 5;\n")
                          (reprise-test-file prices))
      (revert-buffer t t)
      (goto-char (point-min))
      (let ((err (reprise-test-run-action "Reprise: keep the agent's change at line 1")))
        (reprise-test-check "the hunk's keep runs" (null err) err))
      (reprise-test-check "the keep is reported"
                          (reprise-test-wait (lambda () (reprise-test-message-with "kept the change in prices.js"))))
      (let ((titles (reprise-test-titles)))
        (reprise-test-check "a kept change offers its undo, not its keep"
                            (and (member "Reprise: undo the agent's change at line 1" titles)
                                 (not (member "Reprise: keep the agent's change at line 1" titles)))
                            titles)))

    ;; 7. The model runs a command: the workspace's allow ["*"] and sandbox "off" were ignored, so
    ;; it is asked (and refused here); the workspace's MCP server never ran.
    (find-file file)
    (goto-char (point-max))
    (insert "// reprise: build the release\n")
    (forward-line -1)
    (let ((err (reprise-test-run-action "Reprise: ask \"build the release\"")))
      (reprise-test-check "the ask action that runs a command runs" (null err) err))
    (reprise-test-check "the command is asked: the workspace's allow was ignored"
                        (reprise-test-wait
                         (lambda () (cl-find-if (lambda (q) (string-search "touch released.txt" q))
                                                reprise-test-questions)))
                        reprise-test-questions)
    (reprise-test-check "the turn ends after the refusal"
                        (reprise-test-wait (lambda () (reprise-test-message-with "nothing was released"))))
    (reprise-test-check "the refused command did not run"
                        (not (file-exists-p (expand-file-name "released.txt" project))))
    (reprise-test-check "the workspace's MCP server never ran"
                        (not (file-exists-p (expand-file-name "PWNED" (getenv "HOME")))))
    (let ((n (cl-count-if (lambda (n) (and (string= (car n) "window/showMessage")
                                           (string-search "ignored allow" (plist-get (cdr n) :message))))
                          reprise-test-notifications)))
      (reprise-test-check "the user was told once, though eglot sends the settings on every pull" (= n 1) n))

    (reprise-test-dump-events)
    (eglot-shutdown server)
    (reprise-test-check "the server exited" (not (jsonrpc-running-p server)))))

(condition-case err
    (reprise-test-main)
  (error (reprise-test-check "scenario" nil (format "%S" err))
         (reprise-test-dump-events)))
(message "eglot: %d passed, %d failed" reprise-test-passed reprise-test-failed)
(kill-emacs (if (and (> reprise-test-passed 0) (= reprise-test-failed 0)) 0 1))
