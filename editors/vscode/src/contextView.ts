// The Show Context webview panel: asks the server for reprise.context and refreshes on usage.
import * as vscode from 'vscode';
import { contextBody, contextStyle, forgetNoteCommand } from './contextHtml';
import { CommandContext, CommandMCP, ContextResult, MCPResult } from './protocol';
import type { Server } from './client';
import type { Store } from './store';

export class ContextView implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private timer?: ReturnType<typeof setTimeout>;
  private readonly sub: { dispose(): void };

  constructor(
    private readonly server: Server,
    private readonly store: Store,
  ) {
    // Usage arrives after every model response: refresh at most every 300 ms.
    this.sub = store.onChange(() => {
      if (!this.panel || this.timer) return;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.refresh();
      }, 300);
    });
  }

  async show(): Promise<void> {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('reprise.context', 'Reprise Context', vscode.ViewColumn.Active, {
        enableScripts: false,
        // A note's Delete link, and no other command.
        enableCommandUris: [forgetNoteCommand],
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else this.panel.reveal();
    await this.refresh();
  }

  /** refresh asks the server again, when the view is open. */
  async refresh(): Promise<void> {
    if (!this.panel) return;
    const id = this.store.current;
    let body: string;
    try {
      const c = await this.server.execute<ContextResult>(CommandContext, id ? { sessionId: id } : {});
      // The servers' states come from reprise.mcp; an older server without it shows the shares only.
      const servers = this.server.supports(CommandMCP) ? await this.server.execute<MCPResult>(CommandMCP).catch(() => undefined) : undefined;
      body = contextBody(c, servers);
    } catch (err) {
      body = `<p>No context to show: ${String((err as Error).message ?? err).replace(/</g, '&lt;')}</p>`;
    }
    if (this.panel) this.panel.webview.html = `<!DOCTYPE html><html><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';"><style>${contextStyle}</style></head><body>${body}</body></html>`;
  }

  dispose(): void {
    this.sub.dispose();
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
  }
}
