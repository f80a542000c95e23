// The connection to `reprise serve --stdio`: finding the binary, starting it with the experimental
// capability and the settings, and the one way to call the server's commands.
import * as vscode from 'vscode';
import {
  ClientCapabilities,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  FeatureState,
  LanguageClient,
  LanguageClientOptions,
  MessageActionItem,
  ServerOptions,
  ShowMessageRequest,
  ShowMessageRequestParams,
  CancellationToken,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { ConfigSection, ContextUsage, ExperimentalCapability, MethodContextUsage, MethodDidChangeUserSettings, MethodSessionUpdate, SessionUpdate } from './protocol';
import { apiKeySecret, changeableSettings, configurationValue, findBinary, hasKey, installHint, keyHint, launchSettings, serverSettings, userCosts, userSpending, withStoredKey } from './settings';

/** experimentalFeature declares capabilities.experimental.reprise so the server sends its own notifications. */
class ExperimentalFeature implements StaticFeature {
  fillClientCapabilities(caps: ClientCapabilities): void {
    caps.experimental = { ...((caps.experimental as object | undefined) ?? {}), [ExperimentalCapability]: true };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: 'static' };
  }
  clear(): void {}
}

export interface Handlers {
  usage(u: ContextUsage): void;
  update(p: SessionUpdate): void;
  /** showMessageRequest answers the server's questions (approvals among them) in place of vscode-languageclient's notification. */
  showMessageRequest(p: ShowMessageRequestParams, token: CancellationToken): Promise<MessageActionItem | null>;
  /** stopped: the server process is gone; its questions are void. */
  stopped(): void;
}

/** Server owns the language client; it is restarted when a machine key (settings.ts) changes. */
export class Server implements vscode.Disposable {
  private client?: LanguageClient;
  /** The user's spending settings the running server was started with (settings.ts, spendingKeys). */
  private spending = '';

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly handlers: Handlers,
    /** The extension's folder, where a platform package keeps the server (bin/). */
    private readonly extensionPath: string,
    /** Where the API key the user entered is kept (apiKeySecret). */
    private readonly secrets?: vscode.SecretStorage,
  ) {}

  /** asking is true while the API key notification is on screen: it is shown once, not per failure. */
  private asking = false;

  /**
   * askForKey offers to enter the API key, once at a time: the key goes to secret storage and the
   * server restarts with it in its environment. It is never written to settings.
   */
  async askForKey(detail = 'no Gemini API key for the server.'): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      const a = await vscode.window.showWarningMessage(`Reprise: ${detail} Enter one to start working.`, 'Enter API Key', 'Open Settings');
      if (a === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'reprise.env');
      if (a === 'Enter API Key') await this.enterKey();
    } finally {
      this.asking = false;
    }
  }

  /** enterKey asks for the API key, stores it in secret storage and restarts the server. */
  async enterKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'Gemini API Key',
      prompt: 'Kept in VS Code\'s secret storage and passed to the Reprise server only (never written to settings)',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'the key from aistudio.google.com/apikey'),
    });
    if (!key?.trim() || !this.secrets) return;
    await this.secrets.store(apiKeySecret, key.trim());
    await this.restart();
  }

  get running(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /** start launches the server; a missing binary is reported with its fix and start returns false. */
  async start(): Promise<boolean> {
    const cfg = vscode.workspace.getConfiguration(ConfigSection);
    // The binary and its environment come from the user's settings only (settings.ts, machineKeys).
    const launch = launchSettings(cfg);
    const stored = await this.secrets?.get(apiKeySecret);
    const env = withStoredKey({ ...process.env, ...launch.env }, stored);
    const found = findBinary({ setting: launch.path, extensionPath: this.extensionPath, envPath: env.PATH ?? env.Path });
    if (!found.path) {
      this.output.appendLine(`${found.problem} ${installHint}`);
      void vscode.window
        .showErrorMessage(`Reprise: ${found.problem} ${installHint}`, 'Open Settings')
        .then((a) => a && vscode.commands.executeCommand('workbench.action.openSettings', 'reprise.path'));
      return false;
    }
    if (!hasKey(env)) {
      this.output.appendLine(`No API key in the environment. ${keyHint}`);
      void this.askForKey();
    }
    const serverOptions: ServerOptions = {
      command: found.path,
      args: ['serve', '--stdio'],
      transport: TransportKind.stdio,
      options: { env },
    };
    this.spending = JSON.stringify(userSpending(cfg));
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      initializationOptions: serverSettings(cfg),
      synchronize: { configurationSection: ConfigSection },
      // vscode-languageclient would send the section as VS Code merges it, workspace values
      // included: both the pull and the push answer with changeableSettings instead (the machine
      // keys go in initializationOptions only; changing one restarts the server).
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, i) =>
              configurationValue(item.section, () => vscode.workspace.getConfiguration(ConfigSection, scope(item.scopeUri)), answers[i]),
            );
          },
          didChangeConfiguration: async () => {
            // The user's own cost settings first: the server holds the merged ones to them.
            const cfg = vscode.workspace.getConfiguration(ConfigSection);
            await client.sendNotification(MethodDidChangeUserSettings, { settings: userCosts(cfg) });
            await client.sendNotification(DidChangeConfigurationNotification.type, {
              settings: { [ConfigSection]: changeableSettings(cfg) },
            });
          },
        },
      },
    };
    const client = new LanguageClient('reprise', 'Reprise', serverOptions, clientOptions);
    client.registerFeature(new ExperimentalFeature());
    client.onNotification(MethodContextUsage, (u: ContextUsage) => this.handlers.usage(u));
    client.onNotification(MethodSessionUpdate, (p: SessionUpdate) => this.handlers.update(p));
    // Registered before start, it replaces the client's own handler (a notification that fades
    // into the notification centre after a few seconds while the agent waits).
    client.onRequest(ShowMessageRequest.type, (p, token) => this.handlers.showMessageRequest(p, token));
    this.client = client;
    try {
      await client.start();
      // Which of the three places won: a stale reprise.path would otherwise hide the bundled server.
      this.output.appendLine(`Reprise server started: ${found.path} (${sourceLabel[found.source!]})`);
      return true;
    } catch (err) {
      void vscode.window.showErrorMessage(`Reprise: the server did not start: ${message(err)}. See the Reprise output.`);
      return false;
    }
  }

  /**
   * spendingChanged tells whether the user's spending settings differ from those the server
   * started with: it takes them from initializationOptions only, so a change needs a restart.
   */
  spendingChanged(): boolean {
    return this.spending !== JSON.stringify(userSpending(vscode.workspace.getConfiguration(ConfigSection)));
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    this.handlers.stopped();
    // A client that does not stop in time is disposed: its commands must be gone before the next
    // client registers the same ones.
    if (c) await c.stop().catch(() => c.dispose().catch(() => undefined));
  }

  private restarting?: Promise<boolean>;
  private restartAgain = false;

  /**
   * restart stops the server and starts it again. Restarts asked while one runs (a settings file
   * written twice, the user's and the machine's) make one more after it, never a second client
   * at once: two would register the same commands ("command 'reprise.ask' already exists").
   */
  restart(): Promise<boolean> {
    if (this.restarting) {
      this.restartAgain = true;
      return this.restarting;
    }
    this.restarting = (async () => {
      let ok = false;
      do {
        this.restartAgain = false;
        await this.stop();
        ok = await this.start();
      } while (this.restartAgain);
      return ok;
    })().finally(() => (this.restarting = undefined));
    return this.restarting;
  }

  /** supports says whether the running server announces a command in executeCommandProvider. */
  supports(command: string): boolean {
    return this.client?.initializeResult?.capabilities.executeCommandProvider?.commands.includes(command) ?? false;
  }

  /** execute runs one of the server's commands with a single argument object (or none). */
  async execute<T>(command: string, args?: object): Promise<T> {
    if (!this.client || !this.client.isRunning()) throw new Error('the Reprise server is not running');
    return (await this.client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: args === undefined ? [] : [args],
    })) as T;
  }

  dispose(): void {
    void this.stop();
  }
}

const sourceLabel = { setting: 'reprise.path', bundled: 'bundled with the extension', PATH: 'from PATH' } as const;

function scope(uri: string | null | undefined): vscode.Uri | undefined {
  return uri ? vscode.Uri.parse(uri) : undefined;
}

export function message(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

export function code(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'code' in err) {
    const c = (err as { code: unknown }).code;
    return typeof c === 'number' ? c : undefined;
  }
  return undefined;
}
