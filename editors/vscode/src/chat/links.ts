// File paths in the agent's answers become links that open the file at the line. A markdown-it
// plugin, so that it works on the parsed text: code spans and plain text, never inside a link or
// a code block. What is linked is only a guess; the extension host checks the file exists in the
// workspace before opening it.
import type MarkdownIt from 'markdown-it';
import type { StateCore, Token } from 'markdown-it';
import { escape, fileLink } from './render';

// Extensions worth linking in running text, where a dotted word is more often not a file.
const exts = 'go|mod|sum|ts|tsx|js|jsx|mjs|cjs|json|py|rs|lua|vim|el|java|kt|kts|gradle|c|h|cc|cpp|hpp|cs|rb|php|swift|m|md|txt|yaml|yml|toml|ini|cfg|sh|bash|ps1|html|css|scss|sql|proto|xml|lock';
const seg = '[\\w@+-][\\w@.+-]*';
const lineSuffix = '(?::(\\d+)(?:[:-]\\d+)?)?';
/** In text: a path with a known extension, optionally with directories and a :line. */
const inText = new RegExp(`(?<![\\w/.:-])((?:\\.{1,2}/)?(?:${seg}/)*${seg}\\.(?:${exts}))${lineSuffix}(?![\\w/])`, 'g');
/** In a code span, the whole span: any name.ext or a path with a slash, optionally with a :line. */
const inCode = new RegExp(`^((?:\\.{1,2}/)?(?:${seg}/)*${seg}\\.[A-Za-z0-9]{1,10}|(?:\\.{1,2}/)?${seg}(?:/${seg})+)${lineSuffix}$`);

/** pathLinks is the plugin: md.use(pathLinks). */
export function pathLinks(md: MarkdownIt): void {
  // linkify's fuzzy links take README.md, setup.py or main.rs for web addresses (.md, .py and .rs
  // are country domains): only links with a scheme (https://…) stay links.
  md.linkify.set({ fuzzyLink: false });
  md.core.ruler.push('reprise_paths', (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      block.children = linkChildren(state, block.children);
    }
  });
}

function linkChildren(state: StateCore, children: Token[]): Token[] {
  const out: Token[] = [];
  let inLink = 0;
  const html = (s: string) => {
    const t = new state.Token('html_inline', '', 0);
    t.content = s;
    out.push(t);
  };
  for (const t of children) {
    if (t.type === 'link_open') inLink++;
    if (t.type === 'link_close') inLink--;
    if (inLink > 0) {
      out.push(t);
      continue;
    }
    if (t.type === 'code_inline') {
      const m = inCode.exec(t.content);
      // Not a URL, a version number or a bare domain name.
      if (m && !/^\d+(\.\d+)+$/.test(m[1]) && !t.content.includes('://')) {
        html(fileLink(m[1], `<code>${escape(t.content)}</code>`, m[2] ? Number(m[2]) : undefined));
        continue;
      }
    }
    if (t.type === 'text' && inText.test(t.content)) {
      inText.lastIndex = 0;
      let last = 0;
      for (const m of t.content.matchAll(inText)) {
        html(escape(t.content.slice(last, m.index)));
        html(fileLink(m[1], escape(m[0]), m[2] ? Number(m[2]) : undefined));
        last = m.index + m[0].length;
      }
      html(escape(t.content.slice(last)));
      continue;
    }
    out.push(t);
  }
  return out;
}
