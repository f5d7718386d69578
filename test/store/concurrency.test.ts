/**
 * Several writers on one store at once: four `memgit exec` processes and two in-process sessions calling
 * `execute` concurrently, all racing on the same files (a `str_replace` that only one of them can win at
 * each step, inserts into one shared file). Afterwards the history must be a serial order of exactly the
 * successful mutations: replaying the commits in git order through the in-memory model reproduces every
 * committed result text, every other result (errors, views) matches the model at some point its caller
 * allows, and nothing was lost or applied twice.
 */
import { spawn } from 'node:child_process';
import { DEFAULT_CONTRACT_OPTIONS, MemoryTree, runCommand, applyEdits } from '../../src/contract';
import { MemoryStore, ToolResult } from '../../src/store/memory-store';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { gitReport, makeTempDir, removeDir } from './git-helpers';

interface Call {
  id: string;
  /** Who made it; calls of one caller happened in this order. */
  caller: string;
  sequence: number;
  input: Record<string, unknown>;
  result?: ToolResult;
}

const PROCESSES = 4;
const CALLS_PER_PROCESS = 25;
const LIBRARY_SESSIONS = 2;
const CALLS_PER_LIBRARY_SESSION = 12;

const SETUP = [
  { command: 'create', path: '/memories/counter.md', file_text: 'slot-0\n' },
  { command: 'create', path: '/memories/log.md', file_text: 'start\n' },
];

function callsFor(caller: string, count: number): Call[] {
  const calls: Call[] = [];
  for (let k = 0; k < count; k += 1) {
    let input: Record<string, unknown>;
    switch (k % 5) {
      case 0:
      case 3:
        // Every caller tries to move the counter on from each value in turn: one wins, the rest miss.
        input = { command: 'str_replace', path: '/memories/counter.md', old_str: `slot-${Math.floor(k / 2)}\n`, new_str: `slot-${Math.floor(k / 2) + 1}\n` };
        break;
      case 1:
        input = { command: 'insert', path: '/memories/log.md', insert_line: 1, insert_text: `${caller}-${k}\n` };
        break;
      case 2:
        input = { command: 'create', path: `/memories/${caller}/n${k}.md`, file_text: `note ${k} of ${caller}\n` };
        break;
      default:
        input = k % 2 ? { command: 'view', path: '/memories/log.md' } : { command: 'rename', old_path: `/memories/${caller}/n${k - 2}.md`, new_path: `/memories/${caller}/r${k}.md` };
    }
    calls.push({ id: `toolu_${caller}_${k}`, caller, sequence: k, input });
  }
  return calls;
}

function runExec(repo: string, session: string, calls: Call[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, 'exec', '--repo', repo, '--session', session], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`memgit exec exited ${code}: ${err}`));
      const lines = out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as ToolResult);
      if (lines.length !== calls.length) return reject(new Error(`expected ${calls.length} results, got ${lines.length}: ${err}`));
      lines.forEach((result, i) => (calls[i].result = result));
      resolve();
    });
    for (const call of calls) child.stdin.write(`${JSON.stringify({ type: 'tool_use', id: call.id, name: 'memory', input: call.input })}\n`);
    child.stdin.end();
  });
}

const isMutation = (call: Call): boolean => !call.result!.is_error && call.input.command !== 'view';

let repo: string;
beforeAll(() => ensureBuilt());
beforeEach(() => (repo = makeTempDir()));
afterEach(() => removeDir(repo));

test('processes and in-process sessions writing at once are serialised: one commit per success, a serial order explains every result', async () => {
  const store = await MemoryStore.open(repo);
  for (const [i, input] of SETUP.entries()) {
    const result = await store.execute({ type: 'tool_use', id: `toolu_setup_${i}`, name: 'memory', input }, { session: 'sess_setup' });
    expect(result.is_error).toBeUndefined();
  }

  const processCalls = Array.from({ length: PROCESSES }, (_, p) => callsFor(`p${p}`, CALLS_PER_PROCESS));
  const libraryCalls = Array.from({ length: LIBRARY_SESSIONS }, (_, s) => callsFor(`lib${s}`, CALLS_PER_LIBRARY_SESSION));
  await Promise.all([
    ...processCalls.map((calls, p) => runExec(repo, `sess_p${p}`, calls)),
    // The library sessions issue every call at once; the store's queue orders them.
    ...libraryCalls.flat().map(async (call) => {
      call.result = await store.execute({ type: 'tool_use', id: call.id, name: 'memory', input: call.input }, { session: `sess_${call.caller}` });
    }),
  ]);
  const all = [...processCalls.flat(), ...libraryCalls.flat()];
  await store.close();

  const git = gitReport(repo);
  expect(git.fsckCode).toBe(0);
  expect(git.status).toBe('');
  const titles = git.commits.map((c) => c.message.split('\n')[0]).filter((t) => t.startsWith('toolu_') && !t.startsWith('toolu_setup_'));

  // Exactly the successful mutations, each once.
  const successes = all.filter(isMutation).map((c) => c.id);
  expect(new Set(titles).size).toBe(titles.length);
  expect([...titles].sort()).toEqual([...successes].sort());
  // The race on the counter had winners and losers.
  const counterWins = all.filter((c) => isMutation(c) && c.input.path === '/memories/counter.md');
  expect(counterWins.length).toBeGreaterThan(2);
  expect(all.filter((c) => c.input.path === '/memories/counter.md' && c.result!.is_error).length).toBeGreaterThan(0);

  // Replay the commits in git order: every committed call reproduces its result text.
  const byId = new Map(all.map((c) => [c.id, c]));
  const position = new Map(titles.map((t, i) => [t, i]));
  const states: MemoryTree[] = [];
  const fresh = async (): Promise<MemoryTree> => {
    const tree = new MemoryTree();
    for (const input of SETUP) applyEdits(tree, (await runCommand(input, tree, DEFAULT_CONTRACT_OPTIONS)).edits!);
    return tree;
  };
  const model = await fresh();
  const snapshot = async (): Promise<MemoryTree> => {
    const copy = await fresh();
    for (const title of titles.slice(0, states.length)) applyEdits(copy, (await runCommand(byId.get(title)!.input, copy, DEFAULT_CONTRACT_OPTIONS)).edits!);
    return copy;
  };
  states.push(await snapshot());
  for (const title of titles) {
    const call = byId.get(title)!;
    const outcome = await runCommand(call.input, model, DEFAULT_CONTRACT_OPTIONS);
    expect({ id: title, text: outcome.text, isError: outcome.isError }).toEqual({ id: title, text: call.result!.content, isError: false });
    applyEdits(model, outcome.edits!);
    states.push(await snapshot());
  }

  // Every other result matches the model at a state between its caller's neighbouring commits.
  for (const call of all.filter((c) => !isMutation(c))) {
    const sameCaller = all.filter((c) => c.caller === call.caller && position.has(c.id));
    const isProcess = call.caller.startsWith('p');
    const before = sameCaller.filter((c) => c.sequence < call.sequence).map((c) => position.get(c.id)! + 1);
    const after = sameCaller.filter((c) => c.sequence > call.sequence).map((c) => position.get(c.id)!);
    const low = isProcess ? Math.max(0, ...before) : 0;
    const high = isProcess ? Math.min(titles.length, ...after) : titles.length;
    let explained = false;
    for (let s = low; s <= high && !explained; s += 1) {
      const outcome = await runCommand(call.input, states[s], DEFAULT_CONTRACT_OPTIONS);
      explained = outcome.text === call.result!.content && outcome.isError === Boolean(call.result!.is_error);
    }
    expect({ id: call.id, explained }).toEqual({ id: call.id, explained: true });
  }

  // Nothing lost: the counter moved once per win, and every successful insert is in the log once.
  const final = new Map(model.items().filter((i) => i.kind === 'file').map((i) => [i.path, i.content!]));
  expect(final.get('counter.md')).toBe(`slot-${counterWins.length}\n`);
  const logLines = final.get('log.md')!.split('\n');
  for (const call of all.filter((c) => isMutation(c) && c.input.command === 'insert')) {
    expect(logLines.filter((line) => line === call.input.insert_text!.toString().trimEnd())).toHaveLength(1);
  }
}, 120_000);
