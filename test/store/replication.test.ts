/**
 * Replication against a real git server: git's own `git http-backend` behind a small Node wrapper with
 * basic auth on 127.0.0.1. What arrives on the server is checked with the git CLI there.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { ReadOnlyStoreError, ReplicationRefusedError, ReplicationStoppedError } from '../../src/store/errors';
import { addRemote, cloneStore, listRemotes, pullStore, pushToRemote, replicationStatus } from '../../src/store/replication';
import { createBareRepository, GitHttpServer, startGitHttpServer } from '../support/git-http-server';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { makeTempDir, removeDir } from './git-helpers';
import request from 'supertest';
import { createApp } from '../../src/web/app';

const USER = 'memgit';
const TOKEN = 'replica-secret-4f9c2a7e1b';
const TOKEN_ENV = 'MEMGIT_TEST_REPLICA_TOKEN';
const QUIET = { log: () => undefined };

let root: string;
let server: GitHttpServer;
const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  dirs.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} in ${cwd}: ${result.stderr}`);
  return result.stdout;
}

function call(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use', id, name: 'memory', input };
}

/** The branch on the server, or '' while it has none. */
function served(bare: string): string {
  return spawnSync('git', ['rev-parse', '--verify', '-q', 'refs/heads/main'], { cwd: bare, encoding: 'utf8' }).stdout.trim();
}

/**
 * The CLI as a child process, asynchronously: the git server runs in this process, so a spawnSync would
 * stop it from answering the child.
 */
function memgit(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A store with one auto-replicated remote pointing at a new bare repository on the server. */
async function replicatedStore(name: string, options: { auto?: boolean; logs?: string[] } = {}) {
  createBareRepository(root, `${name}.git`);
  const dir = tempDir('memgit-repl-');
  let store = await MemoryStore.open(dir, { log: (m) => options.logs?.push(m) });
  await addRemote({ fs, gitdir: store.gitdir }, { name: 'backup', url: `${server.url}/${name}.git`, tokenEnv: TOKEN_ENV, auto: options.auto ?? true });
  await store.close();
  store = await MemoryStore.open(dir, { log: (m) => options.logs?.push(m), replicate: { batchMs: 10, minBackoffMs: 100, maxBackoffMs: 400 } });
  return { dir, store, bare: path.join(root, `${name}.git`) };
}

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  root = tempDir('memgit-git-server-');
  server = await startGitHttpServer({ root, username: USER, password: TOKEN });
  await ensureBuilt();
});

afterAll(async () => {
  await server.close();
  dirs.forEach(removeDir);
});

test('every commit reaches the remote in the background; the server holds the same, fsck-clean history', async () => {
  const { dir, store, bare } = await replicatedStore('continuous');
  for (let i = 0; i < 12; i++) {
    const result = await store.execute(call(`toolu_rep_${i}`, { command: 'create', path: `/memories/n${i % 3}.md`, file_text: `note ${i}\n` }), { session: 'sess_repl' });
    expect(result.is_error).toBeUndefined();
  }
  const head = await store.refreshHead();
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  // The server's branch moves before the pusher records it: wait for both.
  await waitFor(() => served(bare) === head && replicationStatus(store.replication(), remote).pushed === head);
  expect(git(bare, 'fsck', '--full', '--strict')).toBe('');
  expect(git(bare, 'log', '--format=%s', 'main').trim().split('\n')).toEqual(git(dir, 'log', '--format=%s', 'main').trim().split('\n'));
  // Batched: far fewer pushes (receive-pack POSTs) than commits is allowed, never more.
  const pushes = server.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/continuous.git/git-receive-pack'));
  expect(pushes.length).toBeGreaterThanOrEqual(1);
  expect(pushes.length).toBeLessThanOrEqual(12);
  expect(replicationStatus(store.replication(), remote)).toMatchObject({ lagCommits: 0, stopped: null, lastError: null, pushed: head });
  await store.close();
  // The remote is named backup: so is its tracking ref (as git names it), and nothing else is left there.
  expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/remotes').trim()).toBe(`refs/remotes/backup/main ${head}`);
  // Nothing about the token is in the store's config.
  expect(fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
  expect(fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8')).toContain(TOKEN_ENV);
});

test('with the server down, calls still succeed, the lag grows, and it catches up when the server is back', async () => {
  const logs: string[] = [];
  const { store, bare } = await replicatedStore('outage', { logs });
  await store.execute(call('toolu_out_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_out' });
  await waitFor(async () => served(bare) === (await store.refreshHead()));
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  // Acknowledged by the server and recorded here (a push cut off before its answer counts as not done).
  await waitFor(() => replicationStatus(store.replication(), remote).lagCommits === 0);
  const port = server.port;
  await server.close();
  for (let i = 1; i <= 5; i++) {
    const result = await store.execute(call(`toolu_out_${i}`, { command: 'str_replace', path: '/memories/a.md', old_str: i === 1 ? 'a' : `a${i - 1}`, new_str: `a${i}` }), { session: 'sess_out' });
    expect(result.is_error).toBeUndefined();
  }
  await waitFor(() => replicationStatus(store.replication(), remote).lastError !== null);
  const lagging = replicationStatus(store.replication(), remote);
  expect(lagging.lagCommits).toBe(5);
  expect(lagging.oldestUnpushedAt).not.toBeNull();
  expect(lagging.lastError?.message).toMatch(/unreachable/);
  const page = await request(createApp({ store, log: () => undefined })).get('/').set('Host', '127.0.0.1:3000');
  expect(page.text).toMatch(/Replica backup \(http:\/\/127\.0\.0\.1:\d+\/outage\.git\) is 5 commit\(s\) behind/);
  expect(logs.join('\n')).toMatch(/push to backup failed: .*unreachable.*retrying/);
  server = await startGitHttpServer({ root, username: USER, password: TOKEN, port });
  const head = await store.refreshHead();
  await waitFor(() => replicationStatus(store.replication(), remote).lagCommits === 0);
  expect(served(bare)).toBe(head);
  expect(replicationStatus(store.replication(), remote)).toMatchObject({ lagCommits: 0, lastError: null });
  expect(git(bare, 'fsck', '--full')).toBe('');
  await store.close();
});

test('a remote that moved is never overwritten: the push is refused, replication stops and says so', async () => {
  const logs: string[] = [];
  const { dir, store, bare } = await replicatedStore('moved', { logs, auto: false });
  await store.execute(call('toolu_mv_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_mv' });
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  await pushToRemote(store.replication(), remote);
  // Someone else writes to the replica.
  const other = tempDir('memgit-other-');
  git(other, 'clone', '-q', '-b', 'main', bare, 'w');
  const work = path.join(other, 'w');
  fs.writeFileSync(path.join(work, 'memories', 'intruder.md'), 'x\n');
  git(work, 'add', '-A');
  git(work, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-qm', 'not memgit');
  git(work, 'push', '-q', 'origin', 'main');
  const theirs = served(bare);
  await store.execute(call('toolu_mv_1', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 'sess_mv' });
  await expect(pushToRemote(store.replication(), remote)).rejects.toBeInstanceOf(ReplicationStoppedError);
  expect(served(bare)).toBe(theirs); // their commit survives
  expect(logs.join('\n')).toMatch(/replication to backup stopped: .*does not have/);
  expect(replicationStatus(store.replication(), remote).stopped?.reason).toMatch(/someone else wrote to the replica/);
  // Stays stopped for later pushes, also from another process (the CLI), until a deliberate force.
  const cli = await memgit(['push', '--repo', dir]);
  expect(cli.status).toBe(1);
  expect(cli.stderr).toMatch(/replication to backup is stopped/);
  const status = await memgit(['status', '--repo', dir]);
  expect(status.stdout).toMatch(/STOPPED/);
  // The audit UI says so loudly on the overview, and in its JSON twin.
  const app = createApp({ store, log: () => undefined });
  const page = await request(app).get('/').set('Host', '127.0.0.1:3000');
  expect(page.status).toBe(200);
  expect(page.text).toMatch(/class="warn replica-stopped"><strong>Replication to backup is stopped<\/strong>/);
  const json = await request(app).get('/api').set('Host', '127.0.0.1:3000');
  expect(json.body.replication.replicas[0]).toMatchObject({ remote: 'backup', stopped: { reason: expect.stringMatching(/does not have/) } });
  await expect(pushToRemote(store.replication(), remote, { force: true })).rejects.toBeInstanceOf(ReplicationRefusedError); // no reason
  const forced = await pushToRemote(store.replication(), remote, { force: true, reason: 'the intruder commit was a test' });
  expect(forced.forced).toBe(true);
  expect(logs.join('\n')).toMatch(/force-pushing .* to backup .*the intruder commit was a test/);
  expect(served(bare)).toBe(await store.refreshHead());
  await store.close();
});

test('a wrong or missing token is reported without the secret anywhere', async () => {
  const logs: string[] = [];
  const { dir, store } = await replicatedStore('badtoken', { logs, auto: false });
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  const wrong = 'wrong-token-9d8c7b6a5f';
  process.env[TOKEN_ENV] = wrong;
  try {
    const error = await pushToRemote(store.replication(), remote).catch((e: Error) => e);
    expect(error).toBeInstanceOf(ReplicationRefusedError);
    expect((error as Error).message).toMatch(/authentication failed .*MEMGIT_TEST_REPLICA_TOKEN/);
    expect((error as Error).message).not.toContain(wrong);
    delete process.env[TOKEN_ENV];
    const missing = await pushToRemote(store.replication(), remote).catch((e: Error) => e);
    expect((missing as Error).message).toMatch(/MEMGIT_TEST_REPLICA_TOKEN .* is not set/);
    const cli = await memgit(['push', '--repo', dir], { ...process.env, [TOKEN_ENV]: wrong });
    expect(cli.status).toBe(1);
    expect(cli.stderr + cli.stdout).toMatch(/authentication failed/);
    expect(cli.stderr + cli.stdout).not.toContain(wrong);
    const state = fs.readFileSync(path.join(dir, '.git', 'memgit', 'replication-v1.json'), 'utf8');
    expect(state).not.toContain(wrong);
  } finally {
    process.env[TOKEN_ENV] = TOKEN;
  }
  expect(logs.join('\n')).not.toContain(wrong);
  await store.close();
});

test('URLs with credentials, other transports and bad names are refused and nothing is written', async () => {
  const dir = tempDir('memgit-badremote-');
  const store = await MemoryStore.open(dir, QUIET);
  const args = { fs, gitdir: store.gitdir };
  const before = fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8');
  await expect(addRemote(args, { name: 'x', url: `http://u:${TOKEN}@127.0.0.1/x.git` })).rejects.toThrow(/holds credentials/);
  await expect(addRemote(args, { name: 'x', url: 'ssh://git@host/x.git' })).rejects.toThrow(/only http/);
  await expect(addRemote(args, { name: '../x', url: 'https://h/x.git' })).rejects.toThrow(/not a remote name/);
  await expect(addRemote(args, { name: 'x', url: 'https://h/x.git', tokenEnv: 'A=B' })).rejects.toThrow(/not an environment variable/);
  expect(fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8')).toBe(before);
  await store.close();
});

test('clone makes a read-only audit copy that serves, pulls forward, and never writes to the remote', async () => {
  const logs: string[] = [];
  const { store } = await replicatedStore('audited', { auto: true, logs });
  for (let i = 0; i < 4; i++) {
    await store.execute(call(`toolu_aud_${i}`, { command: 'create', path: `/memories/f${i}.md`, file_text: `v${i}\n` }), { session: 'sess_aud' });
  }
  await store.execute(call('toolu_aud_mv', { command: 'rename', old_path: '/memories/f0.md', new_path: '/memories/g/f0.md' }), { session: 'sess_aud' });
  const bare = path.join(root, 'audited.git');
  await waitFor(async () => served(bare) === (await store.refreshHead()));

  const [sourceRemote] = await listRemotes({ fs, gitdir: store.gitdir });
  await waitFor(() => replicationStatus(store.replication(), sourceRemote).lagCommits === 0);
  const receivePacks = () => server.requests.filter((r) => r.path.includes('git-receive-pack')).length;
  let pushesBefore = receivePacks();
  const copy = path.join(tempDir('memgit-clone-parent-'), 'copy');
  const cli = await memgit(['clone', `${server.url}/audited.git`, copy, '--token-env', TOKEN_ENV, '--json']);
  expect(cli.stderr).toBe('');
  expect(cli.status).toBe(0);
  expect(JSON.parse(cli.stdout)).toMatchObject({ commits: 6, readOnly: true });
  expect(git(copy, 'status', '--porcelain')).toBe('');
  expect(git(copy, 'fsck', '--full')).toBe('');
  expect(fs.readFileSync(path.join(copy, 'memories', 'g', 'f0.md'), 'utf8')).toBe('v0\n');
  expect(fs.readFileSync(path.join(copy, '.git', 'config'), 'utf8')).not.toContain(TOKEN);

  const clone = await MemoryStore.open(copy, QUIET);
  expect(clone.readOnly).toBe(true);
  // The audit UI serves the copy, says it is a read-only clone, and its rollbacks are refused.
  const app = createApp({ store: clone, log: () => undefined });
  const overview = await request(app).get('/').set('Host', '127.0.0.1:3000');
  expect(overview.status).toBe(200);
  expect(overview.text).toContain('This is a read-only clone');
  for (const url of ['/commits', '/sessions/sess_aud', '/files/g/f0.md', '/tree']) {
    expect([url, (await request(app).get(url).set('Host', '127.0.0.1:3000')).status]).toEqual([url, 200]);
  }
  await expect(clone.revert('toolu_aud_1', { operator: 'auditor', reason: 'try' })).rejects.toBeInstanceOf(ReadOnlyStoreError);
  expect(clone.history.byToolUseId('toolu_aud_mv')?.newPath).toBe('/memories/g/f0.md');
  const view = await clone.execute(call('toolu_view', { command: 'view', path: '/memories/f1.md' }), { session: 's' });
  expect(view.content).toContain('v1');
  await expect(clone.execute(call('toolu_w', { command: 'create', path: '/memories/x.md', file_text: 'x' }), { session: 's' })).rejects.toBeInstanceOf(
    ReadOnlyStoreError,
  );
  await expect(pushToRemote(clone.replication(), (await listRemotes({ fs, gitdir: clone.gitdir }))[0])).rejects.toThrow(/read-only clone/);
  await clone.close();
  expect(receivePacks()).toBe(pushesBefore); // the clone never spoke receive-pack

  // New commits on the source; pull brings the copy forward, through its write path.
  await store.execute(call('toolu_aud_late', { command: 'insert', path: '/memories/f1.md', insert_line: 1, insert_text: 'later' }), { session: 'sess_aud2' });
  await waitFor(() => replicationStatus(store.replication(), sourceRemote).lagCommits === 0);
  pushesBefore = receivePacks();
  const pull = await memgit(['pull', '--repo', copy, '--json']);
  expect(pull.status).toBe(0);
  expect(JSON.parse(pull.stdout)).toMatchObject({ commits: 1, to: await store.refreshHead() });
  expect(fs.readFileSync(path.join(copy, 'memories', 'f1.md'), 'utf8')).toBe('v1\nlater\n');
  expect(git(copy, 'status', '--porcelain')).toBe('');
  expect(git(copy, 'fsck', '--full')).toBe('');
  const reopened = await MemoryStore.open(copy, QUIET);
  expect(reopened.history.byToolUseId('toolu_aud_late')?.session).toBe('sess_aud2');
  await reopened.close();
  expect(receivePacks()).toBe(pushesBefore); // pull only fetched
  expect(served(bare)).toBe(await store.refreshHead());
  await store.close();
});

test('restore-from makes a writable store that goes on replicating to the same remote', async () => {
  const { store, bare } = await replicatedStore('recover');
  await store.execute(call('toolu_rec_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_rec' });
  await waitFor(async () => served(bare) === (await store.refreshHead()));
  await store.close();
  const copy = path.join(tempDir('memgit-restore-'), 'store');
  await cloneStore(`${server.url}/recover.git`, copy, { readOnly: false, tokenEnv: TOKEN_ENV });
  const restored = await MemoryStore.open(copy, { ...QUIET, replicate: { batchMs: 10 } });
  expect(restored.readOnly).toBe(false);
  const result = await restored.execute(call('toolu_rec_1', { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' }), { session: 'sess_rec2' });
  expect(result.is_error).toBeUndefined();
  // The second call with the first id replays: idempotency survives the restore.
  const replay = await restored.execute(call('toolu_rec_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_rec' });
  expect(replay.is_error).toBeUndefined();
  await waitFor(async () => served(bare) === (await restored.refreshHead()));
  expect(git(bare, 'fsck', '--full')).toBe('');
  await restored.close();
});

test('a pull that is not a fast-forward is refused and changes nothing', async () => {
  const { store, bare } = await replicatedStore('diverged', { auto: false });
  await store.execute(call('toolu_dv_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's' });
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  await pushToRemote(store.replication(), remote);
  const copy = path.join(tempDir('memgit-dv-'), 'copy');
  await cloneStore(`${server.url}/diverged.git`, copy, { readOnly: true, tokenEnv: TOKEN_ENV });
  const clone = await MemoryStore.open(copy, QUIET);
  const headBefore = await clone.refreshHead();
  // The source rewrites history (as a redaction would) and force-pushes.
  await store.execute(call('toolu_dv_1', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 's' });
  const rewritten = git(path.dirname(store.gitdir), 'commit-tree', '-p', git(path.dirname(store.gitdir), 'rev-parse', 'HEAD~2').trim(), '-m', 'rewritten', 'HEAD^{tree}').trim();
  git(bare, 'fetch', '-q', path.dirname(store.gitdir), 'main');
  spawnSync('git', ['-C', path.dirname(store.gitdir), 'push', '-q', '--force', bare, `${rewritten}:refs/heads/main`]);
  expect(served(bare)).toBe(rewritten);
  await expect(pullStore(clone.replication())).rejects.toThrow(/no longer contains this copy's head/);
  expect(await clone.refreshHead()).toBe(headBefore);
  expect(git(copy, 'status', '--porcelain')).toBe('');
  await clone.close();
  await store.close();
});

test('a push killed with SIGKILL leaves the remote whole; the next push completes it', async () => {
  const { dir, store, bare } = await replicatedStore('killed', { auto: false });
  // Enough content that the push takes a moment.
  for (let i = 0; i < 40; i++) {
    await store.execute(call(`toolu_k_${i}`, { command: 'create', path: `/memories/k${i}.md`, file_text: `${'x'.repeat(2000)} ${i}\n` }), { session: 's' });
  }
  await store.close();
  for (const delay of [30, 80, 150]) {
    const child = spawn(process.execPath, [CLI_MAIN, 'push', '--repo', dir], { env: { ...process.env }, stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, delay));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(spawnSync('git', ['fsck', '--full'], { cwd: bare, encoding: 'utf8' }).status).toBe(0);
    const remoteHead = served(bare);
    if (remoteHead) expect(git(dir, 'cat-file', '-t', remoteHead).trim()).toBe('commit'); // never something the store does not have
  }
  const final = await memgit(['push', '--repo', dir, '--json']);
  expect(final.status).toBe(0);
  expect(served(bare)).toBe(git(dir, 'rev-parse', 'HEAD').trim());
  expect(git(bare, 'fsck', '--full')).toBe('');
});

test('after a redaction the next push replaces the replica\'s history (logged), and replication goes on', async () => {
  const logs: string[] = [];
  const { store, bare } = await replicatedStore('redacted', { logs });
  const secret = 'ghp_R3dact3dT0kenV4lue000000000000000000';
  await store.execute(call('toolu_rd_0', { command: 'create', path: '/memories/a.md', file_text: `token ${secret}\n` }), { session: 's' });
  await store.execute(call('toolu_rd_1', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 's' });
  const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
  await waitFor(() => replicationStatus(store.replication(), remote).lagCommits === 0);
  expect(git(bare, 'log', '-p', 'main')).toContain(secret);
  await store.redact({ text: secret, reason: 'leaked token', operator: 'ops' });
  const head = await store.refreshHead();
  await waitFor(() => replicationStatus(store.replication(), remote).lagCommits === 0);
  expect(served(bare)).toBe(head);
  expect(git(bare, 'log', '-p', 'main')).not.toContain(secret);
  expect(git(bare, 'log', '--format=%s', 'main').trim().split('\n')).toEqual(['toolu_rd_1', 'toolu_rd_0', 'memgit: initialise store']);
  expect(logs.join('\n')).toMatch(/force-pushing .* to backup .*redaction r1 rewrote history/);
  expect(replicationStatus(store.replication(), remote)).toMatchObject({ stopped: null, lagCommits: 0 });
  // The audit log travels with the history it describes.
  const audit = git(store.dir, 'rev-parse', 'refs/memgit/audit').trim();
  await waitFor(() => logs.some((l) => l.startsWith('pushed refs/memgit/audit')));
  expect(git(bare, 'rev-parse', 'refs/memgit/audit').trim()).toBe(audit);
  expect(JSON.parse(git(bare, 'show', 'refs/memgit/audit:redactions/r1.json'))).toMatchObject({ id: 'r1', operator: 'ops', reason: 'leaked token' });
  expect(logs.join('\n')).toMatch(/pushed refs\/memgit\/audit \([0-9a-f]{12}\) to backup/);
  expect(git(bare, 'fsck', '--full', '--no-dangling')).toBe(''); // the replaced history dangles there until the server's own gc
  await store.execute(call('toolu_rd_2', { command: 'create', path: '/memories/c.md', file_text: 'c\n' }), { session: 's' });
  const next = await store.refreshHead();
  await waitFor(() => served(bare) === next);
  expect(logs.filter((l) => l.startsWith('pushed refs/memgit/audit'))).toHaveLength(1); // once, not with every push
  await store.close();

  // An auditor's clone of the replica has the record, and an old commit id resolves there too.
  const copy = path.join(tempDir('memgit-rd-clone-'), 'copy');
  await cloneStore(`${server.url}/redacted.git`, copy, { readOnly: true, tokenEnv: TOKEN_ENV });
  expect(git(copy, 'rev-parse', 'refs/memgit/audit').trim()).toBe(audit);
  const record = JSON.parse(git(copy, 'show', 'refs/memgit/audit:redactions/r1.json'));
  // The record's hash of what was erased is keyed with a secret that stays with the source store.
  expect(record.matched).toMatch(/^hmac-sha256:/);
  expect(record.matched).not.toBe(`sha256:${createHash('sha256').update(`text\0${secret}`).digest('hex')}`);
  expect(fs.existsSync(path.join(store.gitdir, 'memgit', 'redaction-key'))).toBe(true);
  expect(fs.existsSync(path.join(copy, '.git', 'memgit', 'redaction-key'))).toBe(false);
  const clone = await MemoryStore.open(copy, QUIET);
  const oldCommit = Object.keys(record.map).find((old) => record.map[old] === clone.history.byToolUseId('toolu_rd_0')!.commit)!;
  expect((await clone.resolve(oldCommit)).toolUseId).toBe('toolu_rd_0');
  expect(git(copy, 'log', '-p', '--all')).not.toContain(secret);
  await clone.close();
});

test('a replica made with plain `git init --bare` (HEAD names master): memgit warns where it can, clones and restores from it all the same', async () => {
  const bare = createBareRepository(root, 'plain.git');
  expect(git(bare, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/master');
  const dir = tempDir('memgit-plain-');
  const store = await MemoryStore.open(dir, QUIET);
  await store.execute(call('toolu_pl_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 'sess_pl' });
  await store.close();
  const url = `${server.url}/plain.git`;

  // `remote add` asks the (still empty) replica what its HEAD names and warns, with the fix.
  const added = await memgit(['remote', 'add', 'backup', url, '--repo', dir, '--token-env', TOKEN_ENV]);
  expect(added.status).toBe(0);
  expect(added.stderr).toMatch(/^memgit: warning: the replica's HEAD names master, a branch it does not have \(memgit pushes main\)/);
  expect(added.stderr).toContain('git symbolic-ref HEAD refs/heads/main');
  const status = await memgit(['status', '--repo', dir]);
  expect(status.stdout).toContain("warning: the replica's HEAD names master");
  const opened = await MemoryStore.open(dir, QUIET);
  const overview = await request(createApp({ store: opened, log: () => undefined })).get('/').set('Host', '127.0.0.1:3000');
  expect(overview.text).toContain('Replica backup: the replica&#39;s HEAD names master');
  await opened.close();

  // The push succeeds and says so too; the tracking ref is named after the remote.
  const pushed = await memgit(['push', '--repo', dir]);
  expect(pushed.status).toBe(0);
  expect(pushed.stdout).toMatch(/^backup: pushed 2 commit\(s\)/);
  expect(pushed.stderr).toContain("memgit: warning: backup: the replica's HEAD names master");
  expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/remotes').trim().split('\n')).toEqual(['refs/remotes/backup/main']);

  // Clone and restore-from take main whatever the remote HEAD says.
  for (const command of ['clone', 'restore-from']) {
    const copy = path.join(tempDir('memgit-plain-copy-'), 'copy');
    const cli = await memgit([command, url, copy, '--token-env', TOKEN_ENV, '--json']);
    expect([command, cli.stderr, cli.status]).toEqual([command, '', 0]);
    expect(JSON.parse(cli.stdout)).toMatchObject({ commits: 2, head: git(dir, 'rev-parse', 'HEAD').trim() });
    expect(git(copy, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(fs.readFileSync(path.join(copy, 'memories', 'a.md'), 'utf8')).toBe('a\n');
    expect(git(copy, 'fsck', '--full')).toBe('');
  }

  // Fixed on the server as the warning says: the next push finds it fixed, and status stops warning.
  git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  const again = await memgit(['push', '--repo', dir]);
  expect([again.status, again.stderr]).toEqual([0, '']);
  const json = JSON.parse((await memgit(['status', '--repo', dir, '--json'])).stdout);
  expect(json.replicas[0].headProblem).toBeNull();
  expect((await memgit(['status', '--repo', dir])).stdout).not.toContain('warning');
});

test('a replica made with `git init --bare -b main` draws no warning', async () => {
  createBareRepository(root, 'proper.git', { initialBranch: 'main' });
  const dir = tempDir('memgit-proper-');
  const store = await MemoryStore.open(dir, QUIET);
  await store.close();
  const added = await memgit(['remote', 'add', 'backup', `${server.url}/proper.git`, '--repo', dir, '--token-env', TOKEN_ENV]);
  expect([added.status, added.stderr]).toEqual([0, '']);
  const pushed = await memgit(['push', '--repo', dir]);
  expect([pushed.status, pushed.stderr]).toEqual([0, '']);
  expect(JSON.parse((await memgit(['status', '--repo', dir, '--json'])).stdout).replicas[0].headProblem).toBeNull();
});

test('a remote that cannot be reached when added is kept, with a note', async () => {
  const dir = tempDir('memgit-unreachable-');
  const store = await MemoryStore.open(dir, QUIET);
  await store.close();
  const added = await memgit(['remote', 'add', 'later', 'http://127.0.0.1:9/none.git', '--repo', dir]);
  expect(added.status).toBe(0);
  expect(added.stdout).toMatch(/^added remote later /);
  expect(added.stderr).toMatch(/^memgit: note: could not ask later what its HEAD names: .*unreachable.*\(the remote is kept; a push checks again\)\n$/);
});
