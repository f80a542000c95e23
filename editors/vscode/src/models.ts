// The model picker's pure part: the rows of the quick pick built from reprise.models, its title
// and placeholder, and what is said when a model is picked. No vscode import, so it is unit-tested
// as is; modelPicker.ts shows it.
import type { ModelInfo, ModelsResult } from './protocol';

/** retired is ModelInfo.status for a model the API no longer serves to new keys. */
const retired = 'retired';

/** ModelRow is one row of the picker: a model, the row that shows or hides retired models, or a separator. */
export interface ModelRow {
  label: string;
  description?: string;
  detail?: string;
  /** a separator: label names the group below it */
  separator?: boolean;
  /** shown whatever is typed in the filter */
  alwaysShow?: boolean;
  model?: ModelInfo;
  /** the row that asks again with all (or without) */
  toggleAll?: boolean;
}

export function isRetired(m: ModelInfo): boolean {
  return m.status === retired;
}

/** icon marks a row: a check on the model new sessions use, a slashed circle on a retired one. */
function icon(m: ModelInfo): string {
  if (m.current) return '$(check)';
  if (isRetired(m)) return '$(circle-slash)';
  return '$(blank)';
}

/**
 * modelRows lists the models in the server's order, the retired ones last under their own
 * separator (the replacement named in their description), then the row that shows all models or
 * only the usable ones.
 */
export function modelRows(r: ModelsResult, all: boolean): ModelRow[] {
  const models = r.models ?? [];
  const row = (m: ModelInfo): ModelRow => ({
    label: `${icon(m)} ${m.id}`,
    description: [m.statusText || m.status, m.default ? 'default' : '', m.current ? 'new sessions' : ''].filter(Boolean).join(' · '),
    detail: m.detail,
    model: m,
  });
  const usable = models.filter((m) => !isRetired(m)).map(row);
  const gone = models.filter(isRetired).map(row);
  const rows: ModelRow[] = [...usable];
  if (gone.length > 0) rows.push({ label: 'retired', separator: true }, ...gone);
  rows.push(
    { label: '', separator: true },
    all
      ? { label: '$(eye-closed) Hide retired models', toggleAll: true, alwaysShow: true }
      : { label: '$(eye) Show all models (retired too)', description: 'and the catalogue\'s models the API does not list', toggleAll: true, alwaysShow: true },
  );
  return rows;
}

/** pickerTitle is the quick pick's title; a warning from the server shows there in short. */
export function pickerTitle(r: ModelsResult | undefined, all: boolean): string {
  const title = all ? 'Reprise: Select Model (all models)' : 'Reprise: Select Model';
  return r?.warning ? `${title} · ⚠ the API's list is not available` : title;
}

/**
 * pickerPlaceholder says what picking does and where the list comes from; the server's warning,
 * whole, takes its place.
 */
export function pickerPlaceholder(r: ModelsResult): string {
  if (r.warning) return `⚠ ${r.warning}`;
  const listed = r.listedAt ? ` · API list of ${r.listedAt.slice(0, 16).replace('T', ' ')}` : '';
  // A model the server does not list (another provider's, after the provider changed) would fail
  // at the first call: said before then.
  const models = r.models ?? [];
  if (models.length > 0 && !models.some((m) => m.current)) return `⚠ New sessions use ${r.model}, which this server does not list: pick one`;
  return `New sessions use ${r.model} · catalogue of ${r.catalogueAsOf}${listed}`;
}

/** RetiredQuestion is the warning shown before a retired model is set. */
export interface RetiredQuestion {
  message: string;
  detail: string;
  /** the button that sets the replacement instead, when the catalogue names one */
  replacement?: string;
  /** the button that sets the retired model all the same */
  anyway: string;
}

/** retiredQuestion words the warning given when a retired model is picked. */
export function retiredQuestion(m: ModelInfo): RetiredQuestion {
  const use = m.replacement ? ` The catalogue's replacement is ${m.replacement}.` : '';
  return {
    message: `${m.id} is retired.`,
    detail:
      `New API keys get 404 for it; older keys are answered by another model and billed at that model's prices.${use}` +
      ' Reprise warns again before the first call of each session.',
    replacement: m.replacement ? `Use ${m.replacement}` : undefined,
    anyway: `Use ${m.id} Anyway`,
  };
}

/**
 * pickedMessage confirms a change: it applies to sessions created afterwards; an unpriced model's
 * (prices null) cost shows as unknown, but a local one's, which is free, as its time. prices
 * undefined: not known here, nothing said.
 */
export function pickedMessage(m: { id: string; prices?: ModelInfo['prices']; local?: boolean }): string {
  const price = m.local
    ? ' It runs on a server on your machine or network: free, so the meter counts its tokens and its time.'
    : m.prices !== null
      ? ''
      : ` Its price is unknown: costs show as "unknown", and it does not run under a dollar cap (the reprise.prices setting gives it one).`;
  return `Reprise: new sessions use ${m.id}; sessions already open keep their model.${price}`;
}

/**
 * overrideMessage warns that a workspace or folder setting wins over the user setting just
 * written, or undefined when none does. The server lets a workspace's model win only when it has
 * a known price no higher than the user's, for input, cached input and output alike (PROTOCOL.md,
 * Settings): a dearer or unpriced one is held to the user's choice. models is the list shown.
 */
export function overrideMessage(picked: string, workspaceValue: string | undefined, models: ModelInfo[] = []): string | undefined {
  if (workspaceValue === undefined || workspaceValue === picked) return undefined;
  const price = (id: string) => models.find((m) => m.id === id)?.prices ?? null;
  const mine = price(picked);
  const theirs = price(workspaceValue);
  const cheaper = !!mine && !!theirs && theirs.input <= mine.input && theirs.cachedInput <= mine.cachedInput && theirs.output <= mine.output;
  if (!cheaper) return undefined;
  return `Reprise: this workspace's settings set reprise.model to ${workspaceValue}, which wins over your user setting: new sessions here use ${workspaceValue}.`;
}
