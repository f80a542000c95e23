// Links in the agent's answers and summaries, which the model wrote and the user did not. A
// markdown-it plugin, so that it works on the parsed text: code spans and plain text, never inside
// a code block.
//
// Only a workspace file looks like a file link: a path in the text or a Markdown link whose target
// is a relative path opens the file (the extension host checks that it is a file of the workspace
// first). A link to the web shows its address beside its text and opens in the browser through
// VS Code, which asks before an untrusted site. Any other scheme (vscode:, command:, mailto:,
// data:, …) is shown as what it is, not as a link: a `[README.md](vscode://…)` or a `command:` URI
// must not pass for the file it names. Images are never loaded: a picture from the web is a
// beacon, even with the network off for the agent's commands.
import type MarkdownIt from 'markdown-it';
import type { StateCore, Token } from 'markdown-it';
import { escape, fileLinkOpen } from './render';

// Extensions worth linking in running text, where a dotted word is more often not a file.
const exts = 'go|mod|sum|ts|tsx|js|jsx|mjs|cjs|json|py|rs|lua|vim|el|java|kt|kts|gradle|c|h|cc|cpp|hpp|cs|rb|php|swift|m|md|txt|yaml|yml|toml|ini|cfg|sh|bash|ps1|html|css|scss|sql|proto|xml|lock';
const seg = '[\\w@+-][\\w@.+-]*';
const lineSuffix = '(?::(\\d+)(?:[:-]\\d+)?)?';
/** In text: a path with a known extension, optionally with directories and a :line. */
const inText = new RegExp(`(?<![\\w/.:-])((?:\\.{1,2}/)?(?:${seg}/)*${seg}\\.(?:${exts}))${lineSuffix}(?![\\w/])`, 'g');
/** In a code span, the whole span: any name.ext or a path with a slash, optionally with a :line. */
const inCode = new RegExp(`^((?:\\.{1,2}/)?(?:${seg}/)*${seg}\\.[A-Za-z0-9]{1,10}|(?:\\.{1,2}/)?${seg}(?:/${seg})+)${lineSuffix}$`);

/** LinkKind is what a Markdown link's target is: a workspace file, a web page, or anything else. */
export type LinkKind = 'file' | 'web' | 'other';

/**
 * linkKind sorts a link target. A file is a relative path without a scheme (`src/a.ts`,
 * `./a.ts#L3`); an absolute path, `//host`, `#anchor` or any `scheme:` is not.
 */
export function linkKind(href: string): LinkKind {
  if (/^https?:\/\/[^/]/i.test(href)) return 'web';
  if (href === '' || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('/') || href.startsWith('\\') || href.startsWith('#')) return 'other';
  return 'file';
}

/** fileTarget is a file link's path and line: `a.ts#L3`, `a.ts:3` and URL escapes are understood. */
export function fileTarget(href: string): { path: string; line?: number } {
  let p = href;
  let line: number | undefined;
  const hash = /#L?(\d+)(?:[-:].*)?$/.exec(p);
  if (hash) {
    line = Number(hash[1]);
    p = p.slice(0, hash.index);
  } else p = p.replace(/#.*$/, '');
  const colon = /:(\d+)$/.exec(p);
  if (colon) {
    line = Number(colon[1]);
    p = p.slice(0, colon.index);
  }
  try {
    p = decodeURIComponent(p);
  } catch {
    // a stray % stays as written
  }
  return { path: p, line };
}

/** shownURL is a link target as the reader sees it: escaped, and shortened past 200 characters. */
function shownURL(href: string): string {
  return escape(href.length > 200 ? `${href.slice(0, 199)}…` : href);
}

/** blockedImage is what stands for an image: its description and where it would have come from. */
function blockedImage(tokens: Token[], idx: number): string {
  const t = tokens[idx];
  const alt = t.children?.map((c) => c.content).join('') ?? t.content;
  const src = t.attrGet('src') ?? '';
  return `<span class="blocked" title="Images are not loaded">[image${alt ? `: ${escape(alt)}` : ''}]</span> <span class="url">${shownURL(src)}</span>`;
}

/** pathLinks is the chat's plugin: md.use(pathLinks). */
export function pathLinks(md: MarkdownIt): void {
  // linkify's fuzzy links take README.md, setup.py or main.rs for web addresses (.md, .py and .rs
  // are country domains): only links with a scheme (https://…) stay links.
  md.linkify.set({ fuzzyLink: false });
  md.renderer.rules.image = blockedImage;
  md.core.ruler.push('reprise_paths', (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      block.children = linkChildren(state, block.children, true);
    }
  });
}

/**
 * inertLinks is the plugin of views without scripts (the checkpoint summary): no link at all, each
 * shown as its text and its target, and no image.
 */
export function inertLinks(md: MarkdownIt): void {
  md.renderer.rules.image = blockedImage;
  md.core.ruler.push('reprise_inert_links', (state: StateCore) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      block.children = linkChildren(state, block.children, false);
    }
  });
}

/** linkChildren rewrites the links of an inline token's children; paths in the text become file links when live. */
function linkChildren(state: StateCore, children: Token[], live: boolean): Token[] {
  const out: Token[] = [];
  const open: { kind: LinkKind; href: string; auto: boolean }[] = [];
  const html = (s: string) => {
    const t = new state.Token('html_inline', '', 0);
    t.content = s;
    out.push(t);
  };
  for (const t of children) {
    if (t.type === 'link_open') {
      const href = t.attrGet('href') ?? '';
      const kind = live ? linkKind(href) : 'other';
      // An autolink's text is its target: shown once.
      open.push({ kind, href, auto: t.markup === 'autolink' || t.markup === 'linkify' });
      if (kind === 'file') {
        const { path, line } = fileTarget(href);
        html(fileLinkOpen(path, line));
      } else if (kind === 'web') html(`<a href="#" class="web" data-href="${escape(href)}" title="Open ${shownURL(href)} in the browser">`);
      else html(`<span class="link-off" title="${live ? 'Not a link of this workspace' : 'Links are not followed here'}">`);
      continue;
    }
    if (t.type === 'link_close') {
      const l = open.pop();
      const url = l && !l.auto ? ` <span class="url">${shownURL(l.href)}</span>` : '';
      if (l?.kind === 'file') html('</a>');
      else if (l?.kind === 'web') html(`</a>${url}`);
      else html(`</span>${url}`);
      continue;
    }
    if (open.length > 0 || !live) {
      out.push(t);
      continue;
    }
    if (t.type === 'code_inline') {
      const m = inCode.exec(t.content);
      // Not a URL, a version number or a bare domain name.
      if (m && !/^\d+(\.\d+)+$/.test(m[1]) && !t.content.includes('://')) {
        html(`${fileLinkOpen(m[1], m[2] ? Number(m[2]) : undefined)}<code>${escape(t.content)}</code></a>`);
        continue;
      }
    }
    if (t.type === 'text' && inText.test(t.content)) {
      inText.lastIndex = 0;
      let last = 0;
      for (const m of t.content.matchAll(inText)) {
        html(escape(t.content.slice(last, m.index)));
        html(`${fileLinkOpen(m[1], m[2] ? Number(m[2]) : undefined)}${escape(m[0])}</a>`);
        last = m.index + m[0].length;
      }
      html(escape(t.content.slice(last)));
      continue;
    }
    out.push(t);
  }
  return out;
}
