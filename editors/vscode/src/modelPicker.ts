// Reprise: Select Model. A quick pick of the models reprise.models lists (the API's list joined
// with the model catalogue); picking one writes the user's reprise.model setting, which the
// server gets through workspace/configuration and applies to sessions created afterwards.
import * as vscode from 'vscode';
import { message, Server } from './client';
import { isRetired, modelRows, ModelRow, overrideMessage, pickedMessage, pickerPlaceholder, pickerTitle, retiredQuestion } from './models';
import { CommandModels, ConfigSection, ModelInfo, ModelsArgs, ModelsResult } from './protocol';

type Item = vscode.QuickPickItem & { row: ModelRow };

function items(rows: ModelRow[]): Item[] {
  return rows.map((row) =>
    row.separator
      ? { label: row.label, kind: vscode.QuickPickItemKind.Separator, row }
      : { label: row.label, description: row.description, detail: row.detail, alwaysShow: row.alwaysShow, row },
  );
}

/**
 * selectModel shows the picker and sets the model picked. newSession is the command offered
 * afterwards, since the sessions already open keep their model.
 */
export async function selectModel(server: Server, newSession: string): Promise<void> {
  if (server.running && !server.supports(CommandModels)) {
    const a = await vscode.window.showErrorMessage(
      'Reprise: this server cannot list the models (it has no reprise.models): update it, or set reprise.model in the settings.',
      'Open Settings',
    );
    if (a) await vscode.commands.executeCommand('workbench.action.openSettings', `${ConfigSection}.model`);
    return;
  }
  const picked = await showPicker(server);
  if (picked) await setModel(picked, newSession);
}

/** showPicker resolves with the model accepted, or undefined when the picker is closed. */
function showPicker(server: Server): Promise<{ model: ModelInfo; list: ModelsResult } | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  let all = false;
  let seq = 0;
  let closed = false;
  let list: ModelsResult | undefined;
  const refresh: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('refresh'), tooltip: "Read the API's model list again" };
  const showAll = (): vscode.QuickInputButton => ({
    iconPath: new vscode.ThemeIcon(all ? 'eye-closed' : 'eye'),
    tooltip: all ? 'Hide retired models' : 'Show all models (retired too)',
  });
  const dress = () => {
    qp.title = pickerTitle(list, all);
    qp.buttons = [showAll(), refresh];
  };
  // Each answer replaces the rows; an answer overtaken by a later question is dropped.
  const load = async (args: ModelsArgs) => {
    const n = ++seq;
    qp.busy = true;
    try {
      const r = await server.execute<ModelsResult>(CommandModels, args);
      if (closed || n !== seq) return;
      list = r;
      qp.items = items(modelRows(r, all));
      qp.placeholder = pickerPlaceholder(r);
      const current = qp.items.find((i) => i.row.model?.current);
      if (current) qp.activeItems = [current];
      dress();
    } catch (err) {
      if (closed || n !== seq) return;
      qp.hide();
      void vscode.window.showErrorMessage(`Reprise: the models could not be listed: ${message(err)}`);
    } finally {
      if (!closed && n === seq) qp.busy = false;
    }
  };
  const toggle = () => {
    all = !all;
    qp.value = ''; // what was typed to reach the toggle would hide the models it brings
    dress();
    void load(all ? { all } : {});
  };
  return new Promise((resolve) => {
    qp.matchOnDescription = true;
    qp.placeholder = 'Reading the models…';
    dress();
    qp.onDidTriggerButton((b) => (b === refresh ? void load({ ...(all ? { all } : {}), refresh: true }) : toggle()));
    qp.onDidAccept(() => {
      const row = qp.selectedItems[0]?.row;
      if (row?.toggleAll) return toggle();
      if (!row?.model || !list) return;
      resolve({ model: row.model, list });
      qp.hide();
    });
    qp.onDidHide(() => {
      closed = true;
      resolve(undefined);
      qp.dispose();
    });
    qp.show();
    void load({});
  });
}

/**
 * setModel writes reprise.model at the user's level. A retired model is set only once the user
 * confirms it (or takes its replacement); a workspace value that wins over the user's is named.
 */
async function setModel({ model, list }: { model: ModelInfo; list: ModelsResult }, newSession: string): Promise<void> {
  // prices undefined: a model the list does not show, whose price is not known here.
  let chosen: { id: string; prices?: ModelInfo['prices']; current?: boolean } = model;
  if (isRetired(model)) {
    const q = retiredQuestion(model);
    const answer = await vscode.window.showWarningMessage(
      q.message,
      { modal: true, detail: q.detail },
      ...(q.replacement ? [q.replacement] : []),
      q.anyway,
    );
    if (answer === undefined) return;
    if (answer === q.replacement && model.replacement) {
      const id = model.replacement;
      // The replacement may not be in the list shown (retired models list it only with all).
      chosen = (list.models ?? []).find((m) => m.id === id) ?? { id, current: list.model === id };
    }
  }
  if (chosen.current) return;
  const cfg = vscode.workspace.getConfiguration(ConfigSection);
  try {
    await cfg.update('model', chosen.id, vscode.ConfigurationTarget.Global);
  } catch (err) {
    void vscode.window.showErrorMessage(`Reprise: reprise.model could not be set: ${message(err)}`);
    return;
  }
  const i = vscode.workspace.getConfiguration(ConfigSection).inspect<string>('model');
  const over = overrideMessage(chosen.id, i?.workspaceFolderValue ?? i?.workspaceValue, list.models ?? []);
  if (over) {
    void vscode.window
      .showWarningMessage(over, 'Open Workspace Settings')
      .then((a) => a && vscode.commands.executeCommand('workbench.action.openWorkspaceSettingsFile'));
    return;
  }
  const a = await vscode.window.showInformationMessage(pickedMessage(chosen), 'New Session');
  if (a) await vscode.commands.executeCommand(newSession);
}
