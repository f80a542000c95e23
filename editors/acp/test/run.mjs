// Drives `reprise acp` the way an editor does, through the official Agent Client Protocol client
// library (@agentclientprotocol/sdk), against the scripted fake Gemini (cmd/fakegemini). Each step
// is one thing an editor relies on: the handshake, a session, a prompt with a tool call and
// usage, permission both ways, cancellation, the slash commands, a session loaded after the agent
// was killed, and bad input that leaves the agent running. Started by test/run.sh, which builds
// the binaries and sets the ACP_* variables.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';

const here = dirname(fileURLToPath(import.meta.url));
const env = (k) => {
  if (!process.env[k]) {
    console.error(`acp-e2e: ${k} is not set: run test/run.sh`);
    process.exit(2);
  }
  return process.env[k];
};
const tmp = env('ACP_TMP');
const reprise = env('ACP_REPRISE');
const fakegemini = env('ACP_FAKEGEMINI');

// How long one request may take before the step fails instead of hanging the run.
const REQUEST_TIMEOUT = 20_000;

// Every child runs in its own process group (detached), killed as a group when the run ends.
const children = [];
function start(cmd, args, opts) {
  const p = spawn(cmd, args, { ...opts, detached: true });
  children.push(p);
  return p;
}
process.on('exit', () => {
  for (const p of children) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {}
  }
});

function firstLine(p) {
  return new Promise((resolve, reject) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i).trim());
    });
    p.on('exit', (c) => reject(new Error(`fakegemini exited ${c} before printing its URL`)));
  });
}

function exited(p) {
  return p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => p.once('exit', () => resolve()));
}

function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// --- the fake model and the workspace ---
const fake = start(fakegemini, ['--script', join(here, 'testdata', 'script.json'), '--log', join(tmp, 'requests.jsonl')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const modelURL = await firstLine(fake);
const ws = join(tmp, 'workspace');
cpSync(join(here, 'testdata', 'workspace'), ws, { recursive: true });
const agentEnv = {
  PATH: process.env.PATH,
  HOME: join(tmp, 'home'),
  GEMINI_API_KEY: 'test-key',
  GOOGLE_GEMINI_BASE_URL: modelURL,
  REPRISE_HOME: join(tmp, 'reprise-home'),
  REPRISE_CONFIG_HOME: join(tmp, 'reprise-config'),
};

/**
 * An agent process and the client connected to it. Every session/update lands in `updates`, in
 * the order received; `awaitUpdate` waits for one without polling.
 * @typedef {{ p: import('node:child_process').ChildProcess, conn: acp.ClientConnection,
 *   updates: acp.SessionNotification[], stderr: () => string,
 *   awaitUpdate: (what: string, pred: (u: acp.SessionUpdate) => boolean, from?: number, ms?: number) => Promise<acp.SessionUpdate>,
 *   request: (method: string, params: unknown, ms?: number) => Promise<any> }} Agent
 */

/**
 * What the client answers to session/request_permission; each step sets it. The requests
 * received are kept for the assertions.
 * @type {(req: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>}
 */
let answerPermission = () => ({ outcome: { outcome: 'cancelled' } });
/** @type {acp.RequestPermissionRequest[]} */
const permissionRequests = [];
/** @type {string[]} paths the agent read through fs/read_text_file */
const clientReads = [];
/** @type {{sessionId: string, pins: {id: string, kind: string}[]}[]} the _reprise/pinsUpdate notifications */
const pinUpdates = [];

/** waitFor polls cond (a state, not a time) until it holds or the request timeout passes. */
async function waitFor(what, cond, ms = REQUEST_TIMEOUT) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** @returns {Agent} */
function startAgent() {
  const p = start(reprise, ['acp'], { cwd: ws, env: agentEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  p.stderr.on('data', (d) => (stderr += d));
  /** @type {acp.SessionNotification[]} */
  const updates = [];
  /** @type {Set<() => void>} */
  const listeners = new Set();
  const stream = acp.ndJsonStream(Writable.toWeb(p.stdin), Readable.toWeb(p.stdout));
  const conn = acp
    .client({ name: 'reprise-acp-e2e' })
    .onRequest('session/request_permission', async ({ params }) => {
      permissionRequests.push(params);
      return answerPermission(params);
    })
    .onRequest('fs/read_text_file', async ({ params }) => {
      clientReads.push(params.path);
      let content = await readFile(params.path, 'utf8');
      if (params.line || params.limit) {
        const lines = content.split('\n');
        const first = Math.max((params.line ?? 1) - 1, 0);
        content = lines.slice(first, params.limit ? first + params.limit : undefined).join('\n');
      }
      return { content };
    })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
      for (const l of [...listeners]) l();
    })
    // An extension notification: the SDK takes a parser of its params (here, as they come).
    .onNotification('_reprise/pinsUpdate', (params) => params, ({ params }) => {
      pinUpdates.push(params);
    })
    .connect(stream);
  // If the agent dies, pending requests fail with its exit status and its last words.
  const died = new Promise((_, reject) => {
    p.once('exit', (code, signal) => {
      const tail = stderr.trim().split('\n').slice(-8).join('\n');
      reject(new Error(`reprise acp exited (${signal ?? code})${tail ? `; stderr:\n${tail}` : ''}`));
    });
  });
  died.catch(() => {});
  return {
    p,
    conn,
    updates,
    stderr: () => stderr,
    request: (method, params, ms = REQUEST_TIMEOUT) =>
      within(ms, method, Promise.race([conn.agent.request(method, params), died])),
    awaitUpdate(what, pred, from = 0, ms = REQUEST_TIMEOUT) {
      const find = () => updates.slice(from).find((n) => pred(n.update))?.update;
      const found = find();
      if (found) return Promise.resolve(found);
      let listener;
      const waiting = new Promise((resolve) => {
        listener = () => {
          const u = find();
          if (u) resolve(u);
        };
        listeners.add(listener);
      });
      return within(ms, what, Promise.race([waiting, died])).finally(() => listeners.delete(listener));
    },
  };
}

/** The updates of `kind` among `list`. */
const ofKind = (list, kind) => list.map((n) => n.update).filter((u) => u.sessionUpdate === kind);
/** The text of the message chunks of `kind`, joined. */
const chunkText = (list, kind) =>
  ofKind(list, kind)
    .map((u) => (u.content?.type === 'text' ? u.content.text : ''))
    .join('');
/** What a tool call's updates say, as text: content blocks and raw output. */
function toolOutput(updates) {
  const out = [];
  for (const u of updates) {
    for (const c of u.content ?? []) {
      if (c.type === 'content' && c.content?.type === 'text') out.push(c.content.text);
    }
    if (u.rawOutput !== undefined && u.rawOutput !== null) out.push(JSON.stringify(u.rawOutput));
  }
  return out.join('\n');
}
const describe = (list) =>
  list
    .slice(-12)
    .map((n) => {
      const u = n.update;
      const extra = u.status ? ` ${u.status}` : u.content?.text ? ` ${JSON.stringify(u.content.text.slice(0, 60))}` : '';
      return `${u.sessionUpdate}${extra}`;
    })
    .join(', ');
const prompt = (sessionId, text) => ({ sessionId, prompt: [{ type: 'text', text }] });
const option = (req, kind) => {
  const o = req.options.find((o) => o.kind === kind);
  if (!o) throw new Error(`no ${kind} option among ${req.options.map((o) => o.kind).join(', ')}`);
  return { outcome: { outcome: 'selected', optionId: o.optionId } };
};

const results = [];
/** @type {Agent | undefined} */
let last;
async function step(name, f) {
  const t0 = Date.now();
  try {
    const note = await f();
    results.push(true);
    console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)${note ? `: ${note}` : ''}`);
  } catch (e) {
    results.push(false);
    console.log(`FAIL ${name}: ${e.message}`);
    if (last?.updates.length) console.log(`     last updates: ${describe(last.updates)}`);
  }
}
const needSession = () => {
  if (!sessionId) throw new Error('no session (an earlier step failed)');
};

const initParams = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
  clientInfo: { name: 'reprise-acp-e2e', version: '0.0.0' },
};
const question = 'What does notes.txt say?';
const answer = 'The notes say to remember the milk, and list three chores: shopping, the garden and the bike.';
const commands = ['compact', 'context', 'checkpoints', 'restore', 'undo-compaction'];

let agent = startAgent();
last = agent;
const spawned = performance.now();
/** @type {string | undefined} */
let sessionId;
let usedBefore;

await step('initialize: loadSession, prompt capabilities, the API-key auth method', async () => {
  const r = await agent.request('initialize', initParams);
  const ms = Math.round(performance.now() - spawned);
  if (r.protocolVersion !== acp.PROTOCOL_VERSION) throw new Error(`protocolVersion ${r.protocolVersion}, want ${acp.PROTOCOL_VERSION}`);
  if (r.agentCapabilities?.loadSession !== true) throw new Error(`agentCapabilities.loadSession is ${r.agentCapabilities?.loadSession}`);
  if (typeof r.agentCapabilities?.promptCapabilities !== 'object') throw new Error('no agentCapabilities.promptCapabilities');
  const ids = (r.authMethods ?? []).map((m) => m.id);
  if (!ids.includes('gemini-api-key')) throw new Error(`authMethods are [${ids.join(', ')}], want gemini-api-key among them`);
  return `answered ${ms} ms after spawn`;
});

// Without an agent that answers initialize, nothing else can be checked: say why and stop.
if (!results[0]) {
  await within(1_000, 'reprise acp to exit', exited(agent.p)).catch(() => {}); // a dying agent reports its exit
  const first = agent.stderr().trim().split('\n')[0] ?? '';
  const state = agent.p.exitCode !== null ? `exited ${agent.p.exitCode}` : 'is running but did not answer';
  console.log(`acp-e2e: \`${reprise} acp\` ${state}${first ? `: ${first}` : ''}; the other steps need it`);
  console.log('acp-e2e: 0 passed, 1 failed');
  process.exit(1);
}

await step('session/new: a session and the slash commands', async () => {
  const from = agent.updates.length;
  const r = await agent.request('session/new', { cwd: ws, mcpServers: [] });
  if (typeof r.sessionId !== 'string' || !r.sessionId) throw new Error(`sessionId ${JSON.stringify(r.sessionId)}`);
  sessionId = r.sessionId;
  const u = await agent.awaitUpdate('available_commands_update', (u) => u.sessionUpdate === 'available_commands_update', from);
  const names = u.availableCommands.map((c) => c.name);
  const missing = commands.filter((c) => !names.includes(c));
  if (missing.length) throw new Error(`commands [${names.join(', ')}] lack ${missing.join(', ')}`);
});

await step('a prompt: read_file as a tool call, the streamed answer, usage', async () => {
  needSession();
  const from = agent.updates.length;
  const r = await agent.request('session/prompt', prompt(sessionId, question));
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  const got = agent.updates.slice(from).filter((n) => n.sessionId === sessionId);
  const call = ofKind(got, 'tool_call').find((u) => u.kind === 'read');
  if (!call) throw new Error(`no tool_call of kind read among: ${describe(got)}`);
  if (!call.title) throw new Error('the read tool_call has no title');
  if (!(call.locations ?? []).some((l) => l.path.endsWith('notes.txt'))) {
    throw new Error(`the read tool_call's locations ${JSON.stringify(call.locations)} do not name notes.txt`);
  }
  const done = ofKind(got, 'tool_call_update').find((u) => u.toolCallId === call.toolCallId && u.status === 'completed');
  if (!done) throw new Error(`no completed tool_call_update for ${call.toolCallId}`);
  const text = chunkText(got, 'agent_message_chunk');
  if (text !== answer) throw new Error(`the answer is ${JSON.stringify(text)}, want ${JSON.stringify(answer)}`);
  const usage = ofKind(got, 'usage_update');
  if (!usage.length) throw new Error('no usage_update');
  const u = usage.at(-1);
  if (typeof u.used !== 'number' || typeof u.size !== 'number' || u.used <= 0 || u.size < u.used) {
    throw new Error(`usage_update used=${u.used} size=${u.size}`);
  }
  if (typeof u.cost?.amount !== 'number' || typeof u.cost?.currency !== 'string') {
    throw new Error(`usage_update cost ${JSON.stringify(u.cost)}, want {amount, currency}`);
  }
  usedBefore = u.used;
  return `${u.used}/${u.size} tokens, ${u.cost.amount} ${u.cost.currency}${clientReads.length ? `; read through the client: ${clientReads.length}` : ''}`;
});

/** Runs a prompt whose tool call needs permission, answered by `kind`; returns the tool call's updates. */
async function withPermission(text, kind) {
  needSession();
  const asked = permissionRequests.length;
  answerPermission = (req) => option(req, kind);
  const from = agent.updates.length;
  const r = await agent.request('session/prompt', prompt(sessionId, text));
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  const req = permissionRequests[asked];
  if (!req) throw new Error('the client was not asked for permission');
  const kinds = req.options.map((o) => o.kind);
  for (const k of ['allow_once', 'allow_always', 'reject_once']) {
    if (!kinds.includes(k)) throw new Error(`permission options [${kinds.join(', ')}] lack ${k}`);
  }
  const got = agent.updates.slice(from);
  const id = req.toolCall.toolCallId;
  const call = [...ofKind(got, 'tool_call'), ...ofKind(got, 'tool_call_update')].filter((u) => u.toolCallId === id);
  if (!call.length) throw new Error(`no updates for the tool call ${id} the permission was about`);
  return call;
}

await step('permission: allow once runs the command', async () => {
  const call = await withPermission('Run the permission test.', 'allow_once');
  const final = call.at(-1);
  if (final.status !== 'completed') throw new Error(`the tool call ended ${final.status}`);
  const out = toolOutput(call);
  if (!out.includes('permission-test')) throw new Error(`the tool result ${JSON.stringify(out.slice(0, 200))} lacks the output`);
  if (!existsSync(join(ws, 'out.txt'))) throw new Error('out.txt was not written');
});

await step('permission: reject refuses the command', async () => {
  const call = await withPermission('Run the refused test.', 'reject_once');
  const final = call.at(-1);
  if (final.status !== 'failed') throw new Error(`the tool call ended ${final.status}, want failed`);
  const out = toolOutput(call);
  if (!/refused/i.test(out)) throw new Error(`the tool result ${JSON.stringify(out.slice(0, 200))} does not say refused`);
  if (existsSync(join(ws, 'refused.txt'))) throw new Error('refused.txt was written');
});

await step('session/cancel stops a running command', async () => {
  needSession();
  /** @type {(id: string) => void} */
  let granted;
  const permitted = new Promise((resolve) => (granted = resolve));
  answerPermission = (req) => {
    const answer = option(req, 'allow_once');
    granted(req.toolCall.toolCallId);
    return answer;
  };
  const from = agent.updates.length;
  const turn = agent.request('session/prompt', prompt(sessionId, 'Wait for a while.'), 60_000);
  turn.catch(() => {});
  try {
    // The command starts once the permission is answered and its tool call is known.
    const id = await within(REQUEST_TIMEOUT, 'the permission request for sleep 30', Promise.race([permitted, turn.then(() => {
      throw new Error('the prompt ended before asking permission for sleep 30');
    })]));
    await agent.awaitUpdate('the sleep tool call', (u) => u.toolCallId === id && u.sessionUpdate === 'tool_call', from);
    const t0 = performance.now();
    await agent.conn.agent.notify('session/cancel', { sessionId });
    const r = await within(5_000, 'the cancelled prompt to end', turn);
    if (r.stopReason !== 'cancelled') throw new Error(`stopReason ${r.stopReason}, want cancelled`);
    const end = agent.updates.slice(from).map((n) => n.update).filter((u) => u.toolCallId === id && u.status).at(-1);
    return `ended ${Math.round(performance.now() - t0)} ms after session/cancel; the tool call ended ${end?.status}`;
  } catch (e) {
    // Leave the session idle for the next steps.
    await agent.conn.agent.notify('session/cancel', { sessionId }).catch(() => {});
    await within(10_000, 'the prompt to end', turn).catch(() => {});
    throw e;
  }
});

await step('/compact: a compaction tool call and less context used', async () => {
  needSession();
  const from = agent.updates.length;
  usedBefore = ofKind(agent.updates, 'usage_update').at(-1)?.used;
  const r = await agent.request('session/prompt', prompt(sessionId, '/compact keep the notes'), 30_000);
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  const got = agent.updates.slice(from);
  const call = ofKind(got, 'tool_call').find((u) => /compact/i.test(u.title ?? ''));
  if (!call) throw new Error(`no tool_call titled like "Compacting the context" among: ${describe(got)}`);
  if (call.kind !== 'other') throw new Error(`the compaction tool call's kind is ${call.kind}, want other`);
  const statuses = [call, ...ofKind(got, 'tool_call_update').filter((u) => u.toolCallId === call.toolCallId)]
    .map((u) => u.status)
    .filter(Boolean);
  if (!statuses.includes('in_progress') || statuses.at(-1) !== 'completed') {
    throw new Error(`the compaction went ${statuses.join(' → ')}, want in_progress → completed`);
  }
  const usage = ofKind(got, 'usage_update').at(-1);
  if (!usage) throw new Error('no usage_update after the compaction');
  if (usedBefore !== undefined && !(usage.used < usedBefore)) throw new Error(`used ${usage.used} after, ${usedBefore} before`);
  return `used ${usedBefore} → ${usage.used}`;
});

/** Sends a slash command and returns the agent's reply text. */
async function slash(text) {
  needSession();
  const from = agent.updates.length;
  const r = await agent.request('session/prompt', prompt(sessionId, text));
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  return chunkText(agent.updates.slice(from), 'agent_message_chunk');
}

await step('/checkpoints lists the checkpoints', async () => {
  const text = await slash('/checkpoints');
  if (!text.includes('Checkpoint 1')) throw new Error(`the reply ${JSON.stringify(text.slice(0, 200))} lacks "Checkpoint 1"`);
});

await step('/context shows the breakdown', async () => {
  const text = await slash('/context');
  for (const want of ['System prompt', 'Messages']) {
    if (!text.includes(want)) throw new Error(`the reply ${JSON.stringify(text.slice(0, 300))} lacks "${want}"`);
  }
});

await step("the agent's plan reaches the client as ACP's plan update", async () => {
  needSession();
  const from = agent.updates.length;
  const r = await agent.request('session/prompt', prompt(sessionId, 'Plan the chores.'));
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  const plans = ofKind(agent.updates.slice(from).filter((n) => n.sessionId === sessionId), 'plan');
  if (plans.length !== 1) throw new Error(`${plans.length} plan updates, want 1`);
  const got = plans[0].entries.map((e) => `${e.status}/${e.priority}: ${e.content}`);
  const want = ['completed/medium: Read the notes', 'in_progress/high: List the chores', 'completed/medium: Ask about the bike (cancelled)', 'pending/medium: Check the tools'];
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`the plan is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  return got.join(' · ');
});

await step('subagents: each task call streams its subagent, one stopped with _reprise/cancelSubagent while the prompt goes on', async () => {
  needSession();
  const from = agent.updates.length;
  const prompted = agent.request('session/prompt', prompt(sessionId, 'Survey with helpers.'));
  const metaOf = (u) => u._meta?.reprise?.subagent;
  // The waiting one streams "running" in its call's content, its id in _meta.
  const running = await agent.awaitUpdate('the waiting subagent running', (u) => {
    if (u.sessionUpdate !== 'tool_call_update' || metaOf(u)?.status !== 'running') return false;
    const call = ofKind(agent.updates.slice(from), 'tool_call').find((c) => c.toolCallId === u.toolCallId);
    return call?.title === 'Subagent: wait for the weather';
  }, from);
  const text = running.content?.[0]?.content?.text ?? '';
  if (!text.startsWith('Subagent running on gemini-3.5-flash-lite')) throw new Error(`its content: ${JSON.stringify(text)}`);
  await agent.awaitUpdate('the survey completed', (u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed' &&
    (u.content?.[0]?.content?.text ?? '').startsWith('HELPER-REPORT'), from);
  const res = await agent.conn.agent.request('_reprise/cancelSubagent', { sessionId, subagentId: metaOf(running).subagentId });
  if (res?.cancelled !== true) throw new Error(`_reprise/cancelSubagent answered ${JSON.stringify(res)}`);
  const r = await prompted;
  if (r.stopReason !== 'end_turn') throw new Error(`stopReason ${r.stopReason}`);
  const stopped = ofKind(agent.updates.slice(from), 'tool_call_update').find((u) => u.toolCallId === running.toolCallId && u.status === 'failed');
  if (!(stopped?.content?.[0]?.content?.text ?? '').includes('the user stopped this subagent')) throw new Error(`the stopped one: ${JSON.stringify(stopped)}`);
  const context = await slash('/context');
  if (!/Subagents: 2 subagents, 2 calls \$/.test(context)) throw new Error(`/context: ${context.slice(-300)}`);
  return text;
});

await step('pins: _reprise/pin, and each change told with _reprise/pinsUpdate, as LSP\'s pins update', async () => {
  needSession();
  const from = pinUpdates.length;
  const r = await agent.conn.agent.request('_reprise/pin', { sessionId, kind: 'message', text: 'Use tabs.' });
  if (r?.pin?.id === undefined) throw new Error(`_reprise/pin answered ${JSON.stringify(r)}`);
  await waitFor('the pins update', () => pinUpdates.length > from);
  const u = pinUpdates.at(-1);
  if (u.sessionId !== sessionId || !u.pins.some((p) => p.id === r.pin.id && p.kind === 'message')) throw new Error(`the update: ${JSON.stringify(u)}`);
  await agent.conn.agent.request('_reprise/unpin', { sessionId, id: r.pin.id });
  await waitFor('the unpin told', () => pinUpdates.length > from + 1 && !pinUpdates.at(-1).pins.some((p) => p.id === r.pin.id));
  return `${pinUpdates.length - from} updates`;
});

await step('session/load after SIGKILL replays the history', async () => {
  needSession();
  agent.p.kill('SIGKILL');
  await exited(agent.p);
  agent = startAgent();
  last = agent;
  await agent.request('initialize', initParams);
  const r = await agent.request('session/load', { sessionId, cwd: ws, mcpServers: [] });
  // Notifications are dispatched in order, so what the load replayed is here by now.
  const got = agent.updates.filter((n) => n.sessionId === sessionId);
  const user = chunkText(got, 'user_message_chunk');
  if (!user.includes(question)) throw new Error(`the replayed user messages ${JSON.stringify(user.slice(0, 200))} lack the first question`);
  const said = chunkText(got, 'agent_message_chunk');
  if (!said.includes(answer)) throw new Error(`the replayed agent messages ${JSON.stringify(said.slice(0, 200))} lack the first answer`);
  if (r === undefined) throw new Error('no load response');
  const plan = ofKind(got, 'plan').at(-1);
  if (plan?.entries?.length !== 4 || plan.entries[1].status !== 'in_progress') throw new Error(`the loaded session's plan is ${JSON.stringify(plan)}`);
  return `${got.length} updates replayed, the plan with them`;
});

/** Expects `promise` to fail with a JSON-RPC error, `code` if given. */
async function rejects(promise, code) {
  try {
    await promise;
  } catch (e) {
    if (typeof e?.code !== 'number') throw new Error(`not a JSON-RPC error: ${e?.message ?? e}`);
    if (code !== undefined && e.code !== code) throw new Error(`error ${e.code} (${e.message}), want ${code}`);
    return e.code;
  }
  throw new Error('the request succeeded');
}

await step('an unknown method gets -32601 and the agent keeps serving', async () => {
  await rejects(agent.request('reprise/no_such_method', {}), -32601);
  await agent.request('initialize', initParams);
});

await step('a prompt for an unknown session gets an error and the agent keeps serving', async () => {
  const code = await rejects(agent.request('session/prompt', prompt('no-such-session', 'hello')));
  await agent.request('initialize', initParams);
  return `error ${code}`;
});

// The library checks the params of the methods it knows before sending them, so malformed params
// go as raw lines to an agent of their own.
await step('malformed params get -32602 and the agent keeps serving', async () => {
  const p = start(reprise, ['acp'], { cwd: ws, env: agentEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  p.stderr.on('data', (d) => (stderr += d));
  const waiters = new Map();
  p.stdout.on('data', (d) => {
    out += d;
    let i;
    while ((i = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        waiters.forEach((w) => w.reject(new Error(`not JSON on stdout: ${line.slice(0, 120)}`)));
        continue;
      }
      waiters.get(msg.id)?.resolve(msg);
    }
  });
  p.once('exit', (c, s) => waiters.forEach((w) => w.reject(new Error(`reprise acp exited (${s ?? c}): ${stderr.trim().split('\n').slice(-5).join('\n')}`))));
  const send = (id, method, params) =>
    within(REQUEST_TIMEOUT, `${method} #${id}`, new Promise((resolve, reject) => {
      waiters.set(id, { resolve, reject });
      p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    }));
  try {
    const bad = await send(1, 'initialize', { protocolVersion: 'one', clientCapabilities: 7 });
    if (bad.error?.code !== -32602) throw new Error(`initialize with bad params answered ${JSON.stringify(bad).slice(0, 200)}`);
    const ok = await send(2, 'initialize', initParams);
    if (!ok.result) throw new Error(`a valid initialize after it answered ${JSON.stringify(ok).slice(0, 200)}`);
    const s = await send(3, 'session/new', { cwd: ws, mcpServers: [] });
    if (!s.result?.sessionId) throw new Error(`session/new answered ${JSON.stringify(s).slice(0, 200)}`);
    const badPrompt = await send(4, 'session/prompt', { sessionId: s.result.sessionId, prompt: 'not a list of blocks' });
    if (badPrompt.error?.code !== -32602) throw new Error(`session/prompt with bad params answered ${JSON.stringify(badPrompt).slice(0, 200)}`);
    const again = await send(5, 'initialize', initParams);
    if (!again.result) throw new Error(`a valid initialize after it answered ${JSON.stringify(again).slice(0, 200)}`);
  } finally {
    p.stdin.end();
    p.kill('SIGTERM');
  }
});

// The agent ends when its stdin closes, as when an editor quits.
await step('the agent exits when its stdin closes', async () => {
  agent.p.stdin.end();
  await within(5_000, 'reprise acp to exit', exited(agent.p));
});

fake.kill('SIGTERM');
await within(5_000, 'fakegemini to exit', exited(fake)).catch(() => {});
const passed = results.filter(Boolean).length;
const failed = results.length - passed;
if (failed) {
  console.log(`reprise acp stderr (tail):\n${agent.stderr().trim().split('\n').slice(-20).join('\n')}`);
  if (existsSync(join(tmp, 'requests.jsonl'))) {
    const turns = readFileSync(join(tmp, 'requests.jsonl'), 'utf8').trim().split('\n').filter(Boolean).length;
    console.log(`fakegemini served ${turns} requests (log: ${join(tmp, 'requests.jsonl')})`);
  }
}
console.log(`acp-e2e: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
