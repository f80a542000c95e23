// The context meter on the status bar: shown while a session exists, coloured by the thresholds,
// spinning while a compaction runs; a click opens the context view.
import * as vscode from 'vscode';
import { compacting, level, meterText, meterTooltip } from './meter';
import type { Store } from './store';

export function createMeter(store: Store, command: string): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('reprise.meter', vscode.StatusBarAlignment.Right, 1000);
  item.name = 'Reprise Context';
  item.command = command;
  const render = () => {
    const u = store.usage();
    if (!store.hasSession || !u) {
      item.hide();
      return;
    }
    const busy = compacting(u, store.compacting);
    item.text = meterText(u, busy);
    item.tooltip = new vscode.MarkdownString(meterTooltip(u, busy), true);
    const l = level(u);
    item.backgroundColor =
      l === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : l === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    item.accessibilityInformation = { label: `Reprise context ${Math.round(u.percent)} percent used` };
    item.show();
  };
  const sub = store.onChange(render);
  render();
  return vscode.Disposable.from(item, sub);
}
