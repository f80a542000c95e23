// Bundles the extension (Node, vscode external) and the chat webview's script (browser).
import { copyFileSync, mkdirSync } from 'node:fs';
import * as esbuild from 'esbuild';

const common = { bundle: true, minify: true, sourcemap: false, logLevel: 'info' };
await Promise.all([
  esbuild.build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] }),
  esbuild.build({ ...common, entryPoints: ['src/chat/webview.ts'], outfile: 'dist/webview.js', platform: 'browser', format: 'iife', target: 'es2022' }),
]);
// VS Code's icon font for the webviews (codicons), beside the scripts.
mkdirSync('dist', { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) copyFileSync(`node_modules/@vscode/codicons/dist/${f}`, `dist/${f}`);
