// A checkpoint's summary, shown in a webview of the extension's own: the model wrote it, so it is
// rendered as inert text. VS Code's Markdown preview, used before, loads https: images (its
// content security policy allows them): an image in a summary was a beacon that got past the
// network being off for the agent. Here the policy allows nothing but the extension's stylesheet,
// scripts are off, links are shown as text with their target, and images as their description.
import MarkdownIt from 'markdown-it';
import { escape } from './chat/render';
import { inertLinks } from './chat/links';

const md = new MarkdownIt({ html: false, linkify: false, breaks: false }).use(inertLinks);

/** checkpointCSP is the view's content security policy: the stylesheet, nothing else. */
export function checkpointCSP(cspSource: string): string {
  return `default-src 'none'; style-src ${cspSource};`;
}

/** checkpointHtml is the whole page of a checkpoint's summary. Pure: unit-tested. */
export function checkpointHtml(markdown: string, title: string, cspSource: string, styleUri: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${checkpointCSP(cspSource)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escape(styleUri)}">
<title>${escape(title)}</title>
</head>
<body class="checkpoint markdown">
${md.render(markdown)}
</body>
</html>`;
}
