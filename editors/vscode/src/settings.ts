// Which VS Code settings go to the server, and how the binary is found. Pure: unit-tested.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** serverKeys are the `reprise.*` settings the server understands (PROTOCOL.md, Settings). */
export const serverKeys = [
  'model',
  'contextBudget',
  'compactAt',
  'blockAt',
  'keepRecentTurns',
  'toolOutputMaxChars',
  'sessionTokenCap',
  'allow',
] as const;

/** clientKeys are settings of the extension itself; changing one restarts the server. */
export const clientKeys = ['path', 'env'] as const;

export interface Getter {
  get<T>(key: string): T | undefined;
}

/** serverSettings picks the server's settings out of the `reprise` configuration section. */
export function serverSettings(cfg: Getter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of serverKeys) {
    const v = cfg.get<unknown>(k);
    if (v !== undefined && v !== null && v !== '') out[k] = v;
  }
  return out;
}

/** findBinary returns the server's path: the setting when given, else `reprise` on PATH. */
export function findBinary(setting: string | undefined, envPath: string | undefined, exists = isExecutable): { path?: string; problem?: string } {
  if (setting && setting.trim() !== '') {
    const p = setting.trim();
    return exists(p) ? { path: p } : { problem: `reprise.path is set to ${p}, which is not an executable file.` };
  }
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'reprise');
    if (exists(p)) return { path: p };
  }
  return { problem: 'The reprise binary was not found on PATH.' };
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
  'Install it with `go install github.com/reprise-dev/reprise/cmd/reprise@latest` (then make sure $(go env GOPATH)/bin is on PATH) or set `reprise.path` to the binary.';

/** keyHint is the fix offered when the server cannot build the model. */
export const keyHint =
  'Set GEMINI_API_KEY (or GOOGLE_API_KEY, or Vertex AI\'s GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION) in the environment VS Code starts from, or in the `reprise.env` setting, then run "Reprise: Restart Server".';

/** hasKey tells whether an environment lets the server reach a model. */
export function hasKey(env: Record<string, string | undefined>): boolean {
  return !!(env.GEMINI_API_KEY || env.GOOGLE_API_KEY || env.GOOGLE_GENAI_USE_VERTEXAI);
}
