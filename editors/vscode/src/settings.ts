// Which VS Code settings go to the server, and how the binary is found. Pure: unit-tested.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigSection } from './protocol';

/** serverKeys are the `reprise.*` settings the server understands (PROTOCOL.md, Settings). */
export const serverKeys = [
  'model',
  'thinking',
  'compactionModel',
  'compactionTier',
  'subagents',
  'subagentModel',
  'subagentBudget',
  'subagentParallel',
  'subagentMaxCalls',
  'contextBudget',
  'compactAt',
  'blockAt',
  'keepRecentTurns',
  'toolOutputMaxChars',
  'largeOutputThresholdBytes',
  'sessionTokenCap',
  'maxCostUSD',
  'explicitCache',
  'explicitCacheIdle',
  'cacheHead',
  'maxTurnRequests',
  'prices',
  'models',
  'allow',
  'sandbox',
  'allowNetwork',
  'hidePaths',
  'readPaths',
  'mcpServers',
  'mcpToolBudget',
  'provider',
  'baseURL',
  'apiKeyEnv',
] as const;

/** clientKeys are settings of the extension itself; changing one restarts the server. */
export const clientKeys = ['path', 'env'] as const;

/**
 * machineKeys choose what runs and what it may do: the binary, its environment, the commands run
 * without asking, the sandbox, the network, the paths hidden from commands or shown to them, the MCP servers
 * started, and where the model is asked (a base URL from a workspace would send the code elsewhere). A cloned repository is not the user, so these come only from the user's (or the remote
 * machine's) settings or the default, never from a workspace or folder settings file. package.json
 * declares them `"scope": "machine"`, which current VS Code enforces; reading them through
 * inspect() keeps a workspace value out even where it does not. The server's own (all but path and
 * env) go only in initializationOptions, as the server takes them from nowhere else (PROTOCOL.md,
 * "Protected settings"): changing one restarts the server.
 */
export const machineKeys = [
  'path',
  'env',
  'allow',
  'sandbox',
  'allowNetwork',
  'hidePaths',
  'readPaths',
  'mcpServers',
  'provider',
  'baseURL',
  'apiKeyEnv',
] as const;

function isMachineKey(k: string): boolean {
  return (machineKeys as readonly string[]).includes(k);
}

/**
 * spendingKeys are the user's spending limits and the prices costs are counted at. The server
 * lets a workspace lower the caps below the user's, never raise or remove them, nor change the
 * prices (PROTOCOL.md, Settings), and it knows the user's level from initializationOptions only:
 * these carry the user's value (or the default), while workspace/configuration carries the merged
 * one, which the server holds to the user's. A change of the user's value restarts the server.
 */
export const spendingKeys = ['sessionTokenCap', 'maxCostUSD', 'prices', 'models'] as const;

/**
 * costKeys set what a token costs or how many a session spends. The server holds a workspace's
 * value dearer than the user's level to it (PROTOCOL.md, Settings): initializationOptions carry the
 * user's values, and when the user changes one (the model picker writes the user's reprise.model)
 * the extension sends the user's values with reprise/didChangeUserSettings before the merged ones.
 */
export const costKeys = [
  'model',
  'compactionModel',
  'thinking',
  'contextBudget',
  'maxTurnRequests',
  'explicitCache',
  'explicitCacheIdle',
  'cacheHead',
  'subagents',
  'subagentModel',
  'subagentBudget',
  'subagentParallel',
  'subagentMaxCalls',
] as const;

function isCostKey(k: string): boolean {
  return (costKeys as readonly string[]).includes(k);
}

/** userCosts are the user's values of the cost keys: what reprise/didChangeUserSettings carries. */
export function userCosts(cfg: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of costKeys) {
    const v = userValue<unknown>(cfg, k);
    if (isSet(k, v)) out[k] = v;
  }
  return out;
}

/**
 * emptyMeansDefault are the settings whose empty string is a value (compactionModel, subagentModel: the
 * session's own model), sent as it is so that clearing one undoes it.
 */
const emptyMeansDefault: readonly string[] = ['compactionModel', 'subagentModel'];

function isSet(k: string, v: unknown): boolean {
  return v !== undefined && v !== null && (v !== '' || emptyMeansDefault.includes(k));
}

function isSpendingKey(k: string): boolean {
  return (spendingKeys as readonly string[]).includes(k);
}

/** userValue is a key's value at the user's level: the user's (or remote machine's) settings, else the default. */
function userValue<T>(cfg: Config, key: string): T | undefined {
  const i = cfg.inspect<T>(key);
  return i?.globalValue ?? i?.defaultValue;
}

/** userSpending is what initializationOptions carry of the spending keys. */
export function userSpending(cfg: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of spendingKeys) {
    const v = userValue<unknown>(cfg, k);
    if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

/** Inspection is the part of vscode's ConfigurationInspect that says where a value comes from. */
export interface Inspection<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** Config is the part of vscode.WorkspaceConfiguration (section `reprise`) the settings are read through. */
export interface Config {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string): Inspection<T> | undefined;
}

/**
 * setting reads one `reprise.*` key (or a path into one, `env.NAME`); a machine key only from the
 * user's settings or the default.
 */
export function setting<T>(cfg: Config, key: string): T | undefined {
  const [head, ...rest] = key.split('.');
  if (!isMachineKey(head)) return cfg.get<T>(key);
  const i = cfg.inspect<unknown>(head);
  let v: unknown = i?.globalValue ?? i?.defaultValue;
  for (const k of rest) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v as T | undefined;
}

/**
 * serverSettings picks the server's settings out of the `reprise` configuration section:
 * initializationOptions, the user's level. The machine, spending and cost keys are the user's values.
 */
export function serverSettings(cfg: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of serverKeys) {
    const v = isSpendingKey(k) || isCostKey(k) ? userValue<unknown>(cfg, k) : setting<unknown>(cfg, k);
    if (isSet(k, v)) out[k] = v;
  }
  return out;
}

/**
 * changeableSettings are the server's settings without the machine keys, the spending keys as
 * merged (the workspace's lower caps included): what workspace/configuration and
 * didChangeConfiguration carry. The server ignores the machine keys there (and warns when one
 * differs from its initializationOptions), so sending them would only race a restart.
 */
export function changeableSettings(cfg: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of serverKeys) {
    if (isMachineKey(k)) continue;
    const v = cfg.get<unknown>(k);
    if (isSet(k, v)) out[k] = v;
  }
  return out;
}

/** restartsServer tells whether a change of `reprise.<key>` needs a new server process. */
export function restartsServer(affects: (section: string) => boolean): boolean {
  return machineKeys.some((k) => affects(`${ConfigSection}.${k}`));
}

/** launchSettings are what starting the server takes from the settings: the binary and extra environment. */
export function launchSettings(cfg: Config): { path?: string; env: Record<string, string> } {
  return { path: setting<string>(cfg, 'path'), env: setting<Record<string, string>>(cfg, 'env') ?? {} };
}

/**
 * configurationValue answers one `workspace/configuration` item in place of vscode-languageclient,
 * which reads workspace values too: the `reprise` section as changeableSettings, one of its keys
 * through setting (null for a machine key), and the whole configuration (no section) with its
 * `reprise` part replaced. `read` gives the `reprise` section; other sections keep the client's
 * own answer.
 */
export function configurationValue(section: string | null | undefined, read: () => Config, clientAnswer: unknown): unknown {
  const prefix = `${ConfigSection}.`;
  if (section === ConfigSection) return changeableSettings(read());
  if (section && section.startsWith(prefix)) {
    const key = section.slice(prefix.length);
    return isMachineKey(key.split('.')[0]) ? null : (setting(read(), key) ?? null);
  }
  if (section === undefined || section === null || section === '') {
    const all = clientAnswer && typeof clientAnswer === 'object' ? (clientAnswer as Record<string, unknown>) : {};
    return { ...all, [ConfigSection]: changeableSettings(read()) };
  }
  return clientAnswer;
}

/** Where findBinary looks, first to last. */
export interface BinarySearch {
  /** reprise.path from the user's settings. */
  setting?: string;
  /** The extension's own folder: a platform package carries the server in bin/. */
  extensionPath?: string;
  /** PATH of the server's environment. */
  envPath?: string;
  /** process.platform; a parameter so the Windows names are testable anywhere. */
  platform?: NodeJS.Platform;
}

/**
 * findBinary returns the server's path and where it came from: `reprise.path` when set (an
 * explicit choice wins, and a wrong one is reported rather than passed over), else the binary
 * bundled in the extension's bin/, else `reprise` on PATH.
 */
export function findBinary(
  where: BinarySearch,
  exists: (p: string) => boolean = isExecutable,
): { path?: string; source?: 'setting' | 'bundled' | 'PATH'; problem?: string } {
  const win = (where.platform ?? process.platform) === 'win32';
  const p = win ? path.win32 : path.posix;
  const exe = win ? 'reprise.exe' : 'reprise';
  const setting = where.setting?.trim();
  if (setting) {
    return exists(setting) ? { path: setting, source: 'setting' } : { problem: `reprise.path is set to ${setting}, which is not an executable file.` };
  }
  if (where.extensionPath) {
    const bundled = p.join(where.extensionPath, 'bin', exe);
    if (exists(bundled)) return { path: bundled, source: 'bundled' };
  }
  for (const dir of (where.envPath ?? '').split(p.delimiter)) {
    if (!dir) continue;
    const candidate = p.join(dir, exe);
    if (exists(candidate)) return { path: candidate, source: 'PATH' };
  }
  return { problem: `The ${exe} binary was not found on PATH.` };
}

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** installHint is the fix offered with a missing binary. */
export const installHint =
  'Install the extension for your platform (it carries the server), or put the binary from a release archive (https://github.com/reprise-dev/reprise/releases) on PATH, or run `go install github.com/reprise-dev/reprise/cmd/reprise@latest` (then make sure $(go env GOPATH)/bin is on PATH), or set `reprise.path` to the binary.';

/** keyHint is the fix offered when the server cannot build the model. */
export const keyHint =
  'Enter a Gemini API key (kept in VS Code\'s secret storage), or set GEMINI_API_KEY (or GOOGLE_API_KEY, or Vertex AI\'s GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION) in the environment VS Code starts from, or in the `reprise.env` setting, then run "Reprise: Restart Server".';

/** hasKey tells whether an environment lets the server reach a model. */
export function hasKey(env: Record<string, string | undefined>): boolean {
  return !!(env.GEMINI_API_KEY || env.GOOGLE_API_KEY || env.GOOGLE_GENAI_USE_VERTEXAI);
}

/** apiKeySecret is the SecretStorage key of the Gemini API key the user entered (never a setting). */
export const apiKeySecret = 'reprise.geminiApiKey';

/**
 * withStoredKey gives the server the key from secret storage when its environment has none: a key
 * the user set in the environment or reprise.env wins.
 */
export function withStoredKey(env: Record<string, string | undefined>, stored: string | undefined): Record<string, string | undefined> {
  return hasKey(env) || !stored ? env : { ...env, GEMINI_API_KEY: stored };
}
