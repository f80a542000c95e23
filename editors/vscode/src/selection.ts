// "Ask Reprise about this selection": the editor's selection is attached to the next question of
// the chat, shown above its input as path:lines, and sent after the question. Pure: commands.ts
// reads the editor's selection.
import type { Attachment } from './store';

/**
 * Past this many characters the selection is named, not sent: the model reads the lines it needs
 * with read_file, and a pasted file does not sit in the context for the rest of the session.
 */
export const maxSelectionChars = 16 * 1024;

/** attachmentOf describes a selection of a document for the chat (label) and the model (text). */
export function attachmentOf(name: string, language: string, startLine: number, endLine: number, text: string): Attachment {
  const lines = startLine === endLine ? `${startLine}` : `${startLine}-${endLine}`;
  const where = startLine === endLine ? `line ${startLine}` : `lines ${startLine}-${endLine}`;
  const label = `${name}:${lines}`;
  if (text.length > maxSelectionChars) {
    return {
      label,
      text: `The question is about ${name}, ${where} (${text.length} characters, not included here: read them with read_file).`,
    };
  }
  // A fence longer than any run of backticks in the text, so that the text cannot close it.
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return { label, text: `The question is about this selection of ${name}, ${where}:\n${fence}${language}\n${text}\n${fence}` };
}

/** withAttachment is the question as the model gets it. */
export function withAttachment(question: string, a: Attachment | undefined): string {
  return a ? `${question}\n\n${a.text}` : question;
}

/**
 * splitAttachment takes a question as the model got it (withAttachment) apart again: the question
 * and the label of its selection, for a chat rebuilt from the session's history.
 */
export function splitAttachment(sent: string): { text: string; attachment?: string } {
  const m = /^([\s\S]*?)\n\nThe question is about (?:this selection of )?(.+?), lines? (\d+(?:-\d+)?)(?::\n`{3,}|\s\(\d+ characters, not included here)/.exec(sent);
  return m ? { text: m[1], attachment: `${m[2]}:${m[3]}` } : { text: sent };
}
