/**
 * The demo: a recorded transcript replayed through the scripted server and the SDK's tool runner into a
 * fresh store (the builder refuses any tool_result that differs from the recording), then `memgit demo`
 * as `npm start` runs it, serving the audit UI.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildDemoStore, DemoBuildResult } from '../../src/agent/demo/build';
import { RECORDED_TOOL_RESULTS } from '../../src/agent/demo/tool-results';
import { DEMO_DREAM, DREAM_BILLING_CALL, DREAM_SETUP_CALL } from '../../src/agent/demo/dream';
import { COMPACTED_SESSION, COMPACTION_SUMMARY, DEMO_SESSIONS, INJECTED_SESSION, INJECTED_TOOL_USE_ID, sessionStart } from '../../src/agent/demo/transcript';
import { NotAStoreError } from '../../src/store/errors';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, GitReport, INIT_MESSAGE, makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { cliEnv } from './run-cli';

const root = makeTempDir('memgit-demo-');
const store = path.join(root, 'demo');
let built: DemoBuildResult;
let report: GitReport;

interface Call {
  oid: string;
  id: string;
  command: string;
  path: string;
  session: string;
}

function calls(): Call[] {
  return report.commits.slice(1).map((c) => {
    const trailer = (key: string) => new RegExp(`^${key}: (.*)$`, 'm').exec(c.message)?.[1] ?? '';
    return {
      oid: c.oid,
      id: c.message.split('\n')[0],
      command: trailer('Memory-Command'),
      path: trailer('Memory-Path'),
      session: trailer('Memory-Session'),
    };
  });
}

function git(args: string[], cwd: string): string {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.stderr}`);
  return run.stdout;
}

beforeAll(async () => {
  built = await buildDemoStore(store);
  report = gitReport(store);
});

afterAll(() => removeDir(root));

test('the replay matches the recording and writes a clean store: three sessions, all six commands, two recovered errors', () => {
  expect(report.fsckCode).toBe(0);
  expect(report.status).toBe('');
  expect(report.commits[0].message).toBe(INIT_MESSAGE);
  expect(built.sessions).toEqual(['sess_20261124T091500_acme', 'sess_20261126T143000_acme', INJECTED_SESSION]);
  expect(built.commits).toBe(report.commits.length - 1);

  // Every memory call of the transcript was answered, as recorded, in the transcript's order.
  const transcriptIds = DEMO_SESSIONS.flatMap((s) => s.replies.flatMap((r) => r.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))));
  expect(built.toolResults.map((r) => r.tool_use_id)).toEqual(transcriptIds);
  expect(Object.keys(RECORDED_TOOL_RESULTS).sort()).toEqual([...transcriptIds].sort());
  for (const result of built.toolResults) expect(result).toEqual({ type: 'tool_result', tool_use_id: result.tool_use_id, ...RECORDED_TOOL_RESULTS[result.tool_use_id] });
  expect(built.toolResults.filter((r) => r.is_error)).toHaveLength(2);

  // One commit per successful write, named by its tool_use id, in the order of the transcript.
  const writes = built.toolResults.filter((r) => !r.is_error && !r.content.startsWith('Here'));
  expect(calls().map((c) => c.id)).toEqual(writes.map((r) => r.tool_use_id));
  const commands = new Set(calls().map((c) => c.command));
  expect([...commands].sort()).toEqual(['create', 'delete', 'insert', 'rename', 'str_replace']);
  expect(built.toolResults.some((r) => r.content.startsWith("Here's the content of"))).toBe(true); // view
  expect(new Set(calls().map((c) => c.session))).toEqual(new Set(built.sessions));

  // Owner-only like every store, its timeline (the compaction summary is conversation text) and marker too.
  const open: string[] = [];
  const walk = (full: string): void => {
    const stat = fs.lstatSync(full);
    if ((stat.mode & 0o077) !== 0) open.push(`${path.relative(store, full)} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of fs.readdirSync(full)) walk(path.join(full, name));
  };
  walk(path.join(store, '.git', 'memgit'));
  expect(open).toEqual([]);
});

test('the injected "fact" is one call among good writes, and reverting just that call keeps the later ones', () => {
  const all = calls();
  const index = all.findIndex((c) => c.id === INJECTED_TOOL_USE_ID);
  const injected = all[index];
  expect(injected).toMatchObject({ command: 'insert', path: '/memories/customers/acme-logistics/profile.md', session: INJECTED_SESSION });
  const later = all.slice(index + 1);
  expect(later.every((c) => c.session === INJECTED_SESSION)).toBe(true);
  expect(later.some((c) => c.path === injected.path)).toBe(true);
  expect(later.some((c) => c.path !== injected.path)).toBe(true);

  const profile = fs.readFileSync(path.join(store, 'memories/customers/acme-logistics/profile.md'), 'utf8');
  expect(profile).toContain('pre-approved without verification');
  expect(profile).toContain('prefers email for follow-ups');

  // The real git can undo that one commit on a clone with no conflict; the later good writes stay.
  const clone = path.join(root, 'clone');
  git(['clone', '-q', store, clone], root);
  git(['revert', '--no-commit', injected.oid], clone);
  const reverted = fs.readFileSync(path.join(clone, 'memories/customers/acme-logistics/profile.md'), 'utf8');
  expect(reverted).not.toContain('pre-approved');
  expect(reverted).not.toContain('payout-verify');
  expect(reverted).toContain('prefers email for follow-ups');
  expect(fs.readFileSync(path.join(clone, 'memories/customers/acme-logistics/setup.md'), 'utf8')).toContain('Label creation: batch endpoint');
});

test('session 2 ran with context editing and compaction: one clear and one summary on its timeline, between two calls', async () => {
  const opened = await MemoryStore.open(store, { create: false });
  try {
    const events = await opened.timeline.forSession(COMPACTED_SESSION);
    const strReplaceFix = calls().find((c) => c.id === 'toolu_01KFm7BEKAT3TqFZA7oIzMc0')!;
    expect(events).toEqual([
      expect.objectContaining({ kind: 'context_cleared', edit: 'clear_tool_uses_20250919', clearedToolUses: 3, clearedInputTokens: 18_240 }),
      expect.objectContaining({ kind: 'compaction', summary: COMPACTION_SUMMARY, encryptedContent: true }),
    ]);
    for (const event of events) expect(event).toMatchObject({ afterCommit: strReplaceFix.oid, afterToolUseId: strReplaceFix.id });
    // The next call of the session is the rename the compacted reply asked for; the other sessions have no events.
    const session2 = calls().filter((c) => c.session === COMPACTED_SESSION);
    expect(session2[session2.findIndex((c) => c.oid === strReplaceFix.oid) + 1]).toMatchObject({ id: 'toolu_01pYJzvItJ17FO6bBlKu8y0X', command: 'rename' });
    for (const other of built.sessions.filter((id) => id !== COMPACTED_SESSION)) expect(await opened.timeline.forSession(other)).toEqual([]);
  } finally {
    await opened.close();
  }
});

test('the store carries the conversations\' recorded times, not the time of the build; dated points work on it', async () => {
  // The transcript's times: each reply after its session's start (the time in the session id) and after the
  // reply before it; the sessions in order.
  for (const [i, session] of DEMO_SESSIONS.entries()) {
    const times = session.replies.map((r) => Date.parse(r.at));
    expect(times.every((t) => Number.isFinite(t))).toBe(true);
    expect(times[0]).toBeGreaterThan(sessionStart(session.id));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    if (i + 1 < DEMO_SESSIONS.length) expect(times.at(-1)!).toBeLessThan(sessionStart(DEMO_SESSIONS[i + 1].id));
  }
  // Every commit, as git reads it: author and committer time are the recorded time of the reply that made
  // the call; the store's first commit is the start of the first session.
  const recordedAt = new Map<string, number>();
  for (const session of DEMO_SESSIONS) {
    for (const reply of session.replies) for (const block of reply.content) if (block.type === 'tool_use') recordedAt.set(block.id, Date.parse(reply.at) / 1000);
  }
  const logged = git(['log', '--reverse', '--format=%at %ct %s'], store).trim().split('\n').map((line) => line.split(' '));
  expect(logged[0]).toEqual([String(sessionStart(DEMO_SESSIONS[0].id) / 1000), String(sessionStart(DEMO_SESSIONS[0].id) / 1000), 'memgit:', 'initialise', 'store']);
  for (const [author, committer, id] of logged.slice(1)) {
    expect(recordedAt.has(id)).toBe(true);
    expect([Number(author), Number(committer), id]).toEqual([recordedAt.get(id), recordedAt.get(id), id]);
  }
  // The call log (reads and failures too) and the timeline carry them as well.
  const opened = await MemoryStore.open(store, { create: false, log: () => undefined });
  try {
    const logTimes = (await opened.callLog.read()).map((c) => [c.id, c.time / 1000]);
    // Then the dream's memory calls (on its branch), at the times of its replies.
    const dreamCalls = DEMO_DREAM.replies.flatMap((r) => r.content.flatMap((b) => (b.type === 'tool_use' && b.name === 'memory' ? [[b.id, Date.parse(r.at) / 1000]] : [])));
    expect(dreamCalls).toHaveLength(5);
    expect(logTimes).toEqual([...recordedAt.entries(), ...dreamCalls]);
    const compacted = DEMO_SESSIONS.find((s) => s.id === COMPACTED_SESSION)!.replies.find((r) => r.content.some((b) => b.type === 'compaction'))!;
    for (const event of await opened.timeline.forSession(COMPACTED_SESSION)) expect(event.time).toBe(Date.parse(compacted.at));
  } finally {
    await opened.close();
  }

  // The README's dated examples: the memory as it was on the morning of 26 November (after the first
  // conversation only), and what the second conversation changed.
  await ensureBuilt();
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', store], { env: cliEnv(), encoding: 'utf8' });
  const ls = cli('ls', '/memories/customers', '--at', '2026-11-26');
  expect(ls.stderr).toBe('');
  expect(ls.stdout.trim().split('\n').map((line) => line.trim().split(/\s+/)[1])).toEqual([
    '/memories/customers/acme-logistics/profile.md',
    '/memories/customers/acme-logistics/setup.md',
    '/memories/customers/acme-logistics/webhook-signature-fix.md',
  ]);
  const diff = cli('diff', '2026-11-26', '2026-11-30', '/memories/customers', '--name-status');
  expect(diff.stderr).toBe('');
  expect(diff.stdout).toBe(
    'A\t/memories/customers/acme-logistics/batch-migration.md\n' +
      'M\t/memories/customers/acme-logistics/profile.md\n' +
      'M\t/memories/customers/acme-logistics/setup.md\n' +
      'D\t/memories/customers/acme-logistics/webhook-signature-fix.md\n',
  );
  expect(cli('cat', '/memories/customers/acme-logistics/profile.md', '--at', '2026-11-30T09:00Z').stdout).not.toContain('pre-approved');
});

test('after the sessions, a scripted dream tidied the memory on its branch: main untouched, its result a pending review', async () => {
  const dream = built.dream!;
  expect(dream).toMatchObject({ status: 'completed', error: null, instructions: DEMO_DREAM.instructions, created_at: DEMO_DREAM.start, ended_at: DEMO_DREAM.replies.at(-1)!.at });
  expect(dream.inputs).toEqual([{ type: 'sessions', session_ids: DEMO_SESSIONS.map((s) => s.id) }]);
  const branch = `refs/heads/dream/${dream.id}`;
  expect(dream.outputs).toEqual([{ type: 'review', review_id: expect.stringMatching(/^rv_[0-9a-f]{16}$/), branch, files_touched: ['/memories/customers/acme-logistics/profile.md', '/memories/customers/acme-logistics/setup.md'] }]);
  // Its two writes, one commit each on its branch, at the recorded time; main still has the planted terms.
  expect(git(['log', '--format=%s %at', `main..${branch}`], store).trim().split('\n')).toEqual([DREAM_SETUP_CALL, DREAM_BILLING_CALL].map((id) => `${id} ${Date.parse(DEMO_DREAM.replies[3].at) / 1000}`));
  expect(git(['show', `${branch}:memories/customers/acme-logistics/profile.md`], store)).not.toContain('pre-approved');
  expect(git(['show', 'main:memories/customers/acme-logistics/profile.md'], store)).toContain('pre-approved');
  // It read the three sessions through session_read (the scripted reply's calls were answered, none refused).
  const opened = await MemoryStore.open(store, { log: () => undefined, replicate: false });
  try {
    const review = (await opened.reviews()).find((r) => r.id === dream.outputs[0].review_id)!;
    expect(review).toMatchObject({ state: 'pending', dream: dream.id });
    const detail = await opened.review(review.id);
    expect(detail.calls.map((c) => [c.toolUseId, c.applies])).toEqual([[DREAM_BILLING_CALL, true], [DREAM_SETUP_CALL, true]]);
    expect(opened.dreams().map((d) => d.id)).toEqual([dream.id]);
  } finally {
    await opened.close();
  }
  expect(report.fsckCode).toBe(0);
});

test('a rebuild replaces an earlier demo store, and a folder the demo did not build is refused untouched', async () => {
  const again = await buildDemoStore(store);
  expect(again.commits).toBe(built.commits);
  expect(gitReport(store).commits).toHaveLength(report.commits.length);

  const foreign = path.join(root, 'foreign');
  fs.mkdirSync(foreign);
  fs.writeFileSync(path.join(foreign, 'keep-me.txt'), 'mine\n');
  await expect(buildDemoStore(foreign)).rejects.toThrow(NotAStoreError);
  expect(fs.readdirSync(foreign)).toEqual(['keep-me.txt']);
});

test('`memgit demo` (npm start) builds the store, prints the log and the injected call, and serves the audit UI', async () => {
  await ensureBuilt();
  const dir = path.join(root, 'cli-demo');
  const child = spawn(process.execPath, [CLI_MAIN, 'demo', '--dir', dir, '--port', '0'], { env: cliEnv(), cwd: REPO_ROOT });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stdout += `[stderr] ${chunk}`));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const match = /audit UI for .* at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`memgit demo exited (${code}) before serving:\n${stdout}`)));
  });
  try {
    expect(stdout).toContain(`tool_use ${INJECTED_TOOL_USE_ID}`);
    // One count of commits everywhere: the demo's summary, the overview, `memgit status` and `memgit log`.
    const total = Number(git(['rev-list', '--count', 'HEAD'], dir).trim());
    expect(stdout).toMatch(new RegExp(`\nBuilt in [0-9.]+ s: ${total} commits in 3 sessions \\(${total - 1} written by the agent's memory calls, after the store's first commit\\)\\.\n`));
    expect(((await (await fetch(`${url}/api`)).json()) as { totals: { commits: number } }).totals.commits).toBe(total);
    const status = spawnSync(process.execPath, [CLI_MAIN, 'status', '--repo', dir, '--json'], { env: cliEnv(), cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(status.stdout).commits).toBe(total);
    expect(stdout).not.toContain('error: Error:');
    expect(stdout).toMatch(new RegExp(`^[0-9a-f]{12}  \\S+  ${INJECTED_SESSION}  insert /memories/customers/acme-logistics/profile\\.md  ${INJECTED_TOOL_USE_ID}$`, 'm'));
    expect(stdout).not.toContain('[stderr]');
    const dreamId = /A dream \((drm_[0-9a-f]{24}), scripted\) then read the three sessions/.exec(stdout)![1];
    const reviewId = /waits as review (rv_[0-9a-f]{16}) \(2 files; the UI's Dreams page shows both\)/.exec(stdout)![1];
    const dreams = await (await fetch(`${url}/dreams`)).text();
    expect(dreams).toContain(`href="/dreams/${dreamId}"`);
    const dreamPage = await (await fetch(`${url}/dreams/${dreamId}`)).text();
    expect(dreamPage).toMatch(/Status<\/dt><dd>completed/);
    expect(dreamPage).toContain(`href="/reviews/${reviewId}"`);
    expect(await (await fetch(`${url}/reviews/${reviewId}`)).text()).toContain(`href="/dreams/${dreamId}"`);
    const page = await fetch(`${url}/commits/${INJECTED_TOOL_USE_ID}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(INJECTED_TOOL_USE_ID);
    expect(html).toContain(INJECTED_SESSION);
    expect(stdout).toContain('  context: clear_tool_uses_20250919 cleared 3 tool uses, 18240 input tokens\n');
    expect(stdout).toContain(`In session ${COMPACTED_SESSION} the API cleared old tool results and summarised the context`);
    const session = await (await fetch(`${url}/sessions/${COMPACTED_SESSION}`)).text();
    const order = ['toolu_01KFm7BEKAT3TqFZA7oIzMc0', 'Context cleared', 'Context summary', 'Jonas Berg (jonas.berg@acme-logistics.example) becomes', 'toolu_01pYJzvItJ17FO6bBlKu8y0X'];
    const at = order.map((text) => session.indexOf(text));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  } finally {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }
});

test('`memgit demo` on a busy port, or on a store another demo serves, changes nothing (HEAD stays)', async () => {
  await ensureBuilt();
  const dir = path.join(root, 'held-demo');
  const first = spawn(process.execPath, [CLI_MAIN, 'demo', '--dir', dir, '--port', '0'], { env: cliEnv(), cwd: REPO_ROOT });
  let output = '';
  first.stdout.setEncoding('utf8');
  first.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    first.stdout.on('data', (chunk: string) => {
      output += chunk;
      const match = /audit UI for .* at (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
      if (match) resolve(match[1]);
    });
    first.on('exit', (code) => reject(new Error(`memgit demo exited (${code}) before serving:\n${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => first.once('exit', (code) => resolve(code)));
  const port = new URL(url).port;
  const demo = (...args: string[]) => spawnSync(process.execPath, [CLI_MAIN, 'demo', ...args], { env: cliEnv(), cwd: REPO_ROOT, encoding: 'utf8' });
  try {
    // What the issue lost: an operator revert and one more write on the running demo's store.
    const live = await MemoryStore.open(dir, { log: () => undefined });
    expect((await live.revert(INJECTED_TOOL_USE_ID, { operator: 'sam' })).status).toBe('committed');
    await live.execute({ type: 'tool_use', id: 'toolu_after_revert', name: 'memory', input: { command: 'create', path: '/memories/x.md', file_text: 'x' } }, { session: 'sess_x' });
    await live.close();
    const head = git(['rev-parse', 'HEAD'], dir).trim();
    const count = git(['rev-list', '--count', 'HEAD'], dir).trim();

    const busy = demo('--dir', dir, '--port', port);
    expect(busy.status).toBe(1);
    expect(busy.stdout).toBe('');
    expect(busy.stderr).toBe(`memgit: port ${port} on 127.0.0.1 is already in use; use --port 0 to pick a free port (or stop what is listening there); nothing was rebuilt\n`);

    const held = demo('--dir', dir, '--port', '0', '--no-serve');
    expect(held.status).toBe(1);
    expect(held.stderr).toMatch(new RegExp(`^memgit: the demo store .* is in use by memgit demo \\(pid ${first.pid}, serving ${url}\\); nothing was rebuilt\\.`));

    const fresh = path.join(root, 'never-built');
    expect(demo('--dir', fresh, '--port', port).status).toBe(1);
    expect(fs.existsSync(fresh)).toBe(false);

    expect(git(['rev-parse', 'HEAD'], dir).trim()).toBe(head);
    expect(git(['rev-list', '--count', 'HEAD'], dir).trim()).toBe(count);
    expect((await fetch(`${url}/commits/toolu_after_revert`)).status).toBe(200);
  } finally {
    first.kill('SIGTERM');
    expect(await exited).toBe(0);
  }
  // Once that demo has stopped, the store is free to rebuild.
  const rebuilt = demo('--dir', dir, '--no-serve');
  expect(rebuilt.stderr).toBe('');
  expect(rebuilt.status).toBe(0);
  expect(git(['log', '--format=%s'], dir)).not.toContain('toolu_after_revert');
});
