// The context meter on the status bar: shown while a session exists, coloured by the thresholds,
// spinning while a compaction runs; a click opens the context view. Its tooltip names the model
// new sessions use, with a link to the model picker.
import * as vscode from 'vscode';
import { compacting, costLabel, level, meterText, meterTooltip } from './meter';
import { ConfigSection } from './protocol';
import type { Store } from './store';

/** createMeter puts the meter on the status bar; command runs on a click, pickModel from the tooltip's link. */
export function createMeter(store: Store, command: string, pickModel: string): vscode.Disposable {
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
    const model = vscode.workspace.getConfiguration(ConfigSection).get<string>('model') ?? '';
    const tip = new vscode.MarkdownString(meterTooltip(u, busy, { model, command: pickModel }), true);
    // The tooltip's one link runs the model picker, and nothing else may run from it.
    tip.isTrusted = { enabledCommands: [pickModel] };
    item.tooltip = tip;
    const l = level(u);
    item.backgroundColor =
      l === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : l === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    const cost = u.totals?.cost ? `, ${costLabel(u.totals.cost)}` : '';
    item.accessibilityInformation = { label: `Reprise context ${Math.round(u.percent)} percent used${cost}` };
    item.show();
  };
  const sub = store.onChange(render);
  const cfg = vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration(`${ConfigSection}.model`) && render());
  render();
  return vscode.Disposable.from(item, sub, cfg);
}
