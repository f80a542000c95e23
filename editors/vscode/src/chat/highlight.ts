// Syntax colours for the code blocks of the agent's answers: a small tokenizer (comments, strings,
// numbers, keywords) good enough for the languages an answer quotes, coloured with the theme's
// token colours. Pure; its output is escaped HTML.
import { escape } from './render';

const keywords = new Set(
  (
    'break case catch class const continue def default defer do elif else enum export extends false final finally fn for ' +
    'from func function go if impl import in interface is let local match module new nil none null package pub private ' +
    'protected public range return self static struct super switch this throw true try type undefined var void while with yield ' +
    'async await as chan map select fallthrough goto lambda pass raise end then local require not and or elseif'
  ).split(' '),
);

const lineComment: Record<string, string> = { python: '#', py: '#', sh: '#', bash: '#', shell: '#', yaml: '#', yml: '#', toml: '#', ruby: '#', rb: '#', lua: '--', sql: '--' };

/** highlight returns a code block's text as HTML with token spans; lang picks the comment syntax. */
export function highlight(code: string, lang: string): string {
  const lc = lineComment[lang.toLowerCase()] ?? '//';
  const esc = lc.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const re = new RegExp(
    `(${esc}[^\\n]*|/\\*[\\s\\S]*?\\*/)|("(?:\\\\.|[^"\\\\\\n])*"|'(?:\\\\.|[^'\\\\\\n])*'|\`(?:\\\\.|[^\`\\\\])*\`)|(\\b\\d[\\d_.xXa-fA-F]*\\b)|([A-Za-z_][\\w]*)`,
    'g',
  );
  let out = '';
  let at = 0;
  for (const m of code.matchAll(re)) {
    const i = m.index ?? 0;
    out += escape(code.slice(at, i));
    at = i + m[0].length;
    // A '/*' comment only where the language has them: '#' languages keep the text.
    const cls = m[1] && !(m[1].startsWith('/*') && lc !== '//') ? 'tk-comment' : m[2] ? 'tk-string' : m[3] ? 'tk-number' : m[4] && keywords.has(m[4]) ? 'tk-keyword' : '';
    out += cls ? `<span class="${cls}">${escape(m[0])}</span>` : escape(m[0]);
  }
  return out + escape(code.slice(at));
}
