/**
 * Review refs are the store's like main (issue 27): replication pushes review branches and archives to a
 * real git server (and removes a decided review's branch there); gc keeps their objects; redaction erases
 * a secret from review branches and archives too. Checked with the git CLI (fsck, log, show-ref).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { addRemote, listRemotes, replicationStatus } from '../../src/store/replication';
import { createBareRepository, GitHttpServer, startGitHttpServer } from '../support/git-http-server';
import { objectsContaining } from '../../src/store/redaction/prune';
import { makeTempDir, removeDir } from './git-helpers';

const USER = 'memgit';
const TOKEN = 'review-replica-secret-77a1';
const TOKEN_ENV = 'MEMGIT_TEST_REVIEW_REPLICA_TOKEN';
const dirs: string[] = [];
let root: string;
let server: GitHttpServer;

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

function fsckClean(dir: string): void {
  const run = spawnSync('git', ['fsck', '--full', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
  expect([run.status, run.stdout + run.stderr]).toEqual([0, '']);
}

const call = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

async function waitFor(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  root = tempDir('memgit-review-git-server-');
  server = await startGitHttpServer({ root, username: USER, password: TOKEN });
});

afterAll(async () => {
  await server.close();
  dirs.forEach(removeDir);
});

test('replication pushes review branches and archives, and removes a decided review\'s branch there', async () => {
  createBareRepository(root, 'reviews.git', { initialBranch: 'main' });
  const bare = path.join(root, 'reviews.git');
  const dir = tempDir('memgit-review-repl-');
  let store = await MemoryStore.open(dir, { log: () => undefined });
  await addRemote({ fs, gitdir: store.gitdir }, { name: 'backup', url: `${server.url}/reviews.git`, tokenEnv: TOKEN_ENV, auto: true });
  await store.close();
  const logs: string[] = [];
  store = await MemoryStore.open(dir, { log: (m) => logs.push(m), replicate: { batchMs: 10, minBackoffMs: 100, maxBackoffMs: 400 } });
  try {
    await store.execute(call('toolu_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's0' });
    await store.setReviewPolicy({ review: 'all' });
    const held = await store.executeWithReport(call('toolu_h', { command: 'create', path: '/memories/h.md', file_text: 'held\n' }), { session: 'chat.1' });
    const tip = git(dir, 'rev-parse', 'refs/heads/review/chat%2E1').trim();
    const remoteRef = () => spawnSync('git', ['rev-parse', '--verify', '-q', 'refs/heads/review/chat%2E1'], { cwd: bare, encoding: 'utf8' }).stdout.trim();
    await waitFor(() => remoteRef() === tip).catch((e: Error) => {
      throw new Error(`${e.message}; log: ${logs.join(' | ')}`);
    });
    expect(git(bare, 'show', 'refs/heads/review/chat%2E1:memories/h.md')).toBe('held\n');

    await store.rejectReview(held.review!.id, { reason: 'no' });
    const archive = `refs/memgit/reviews/${held.review!.id}`;
    const archived = git(dir, 'rev-parse', archive).trim();
    // The next write wakes the replicator: the archive arrives, the branch goes.
    await store.setReviewPolicy({ review: 'off' });
    await store.execute(call('toolu_1', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 's0' });
    const served = () => spawnSync('git', ['for-each-ref', '--format=%(refname) %(objectname)'], { cwd: bare, encoding: 'utf8' }).stdout;
    await waitFor(() => served().includes(`${archive} ${archived}`) && !served().includes('refs/heads/review/')).catch((e: Error) => {
      throw new Error(`${e.message}; served: ${served()}; log: ${logs.join(' | ')}`);
    });
    const head = await store.refreshHead();
    const [remote] = await listRemotes({ fs, gitdir: store.gitdir });
    await waitFor(() => replicationStatus(store.replication(), remote).pushed === head);
    fsckClean(bare);
    expect(git(bare, 'log', '--format=%s', archive)).toContain('toolu_h');
  } finally {
    await store.close();
  }
});

test('gc (full, pruning unreachable objects) keeps what review branches and archives reach', async () => {
  const dir = tempDir('memgit-review-gc-');
  const store = await MemoryStore.open(dir, { log: () => undefined, replicate: false });
  try {
    await store.execute(call('toolu_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's0' });
    await store.setReviewPolicy({ review: 'all' });
    const rejected = await store.executeWithReport(call('toolu_r', { command: 'create', path: '/memories/r.md', file_text: 'rejected text\n' }), { session: 's1' });
    await store.execute(call('toolu_p', { command: 'create', path: '/memories/p.md', file_text: 'pending text\n' }), { session: 's2' });
    await store.rejectReview(rejected.review!.id);
    await store.gc({ full: true, pruneUnreachable: true });
    expect(fs.readdirSync(path.join(dir, '.git', 'objects')).filter((n) => /^[0-9a-f]{2}$/.test(n))).toEqual([]);
    expect(git(dir, 'show', 'refs/heads/review/s2:memories/p.md')).toBe('pending text\n');
    expect(git(dir, 'show', `refs/memgit/reviews/${rejected.review!.id}~1:memories/r.md`)).toBe('rejected text\n');
    fsckClean(dir);
  } finally {
    await store.close();
  }
});

test('redaction erases a value that exists only on a review branch and in an archive; the reviews still work', async () => {
  const SECRET = 'sk-ant-api03-REVIEWONLYabcdefghijklmnopqrstuvwxyz0123456789';
  const dir = tempDir('memgit-review-redact-');
  const store = await MemoryStore.open(dir, { log: () => undefined, replicate: false });
  try {
    await store.execute(call('toolu_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's0' });
    await store.setReviewPolicy({ review: 'all' });
    const pending = await store.executeWithReport(call('toolu_p', { command: 'create', path: '/memories/key.md', file_text: `key: ${SECRET}\n` }), { session: 's1' });
    const rejected = await store.executeWithReport(call('toolu_r', { command: 'create', path: '/memories/k2.md', file_text: `Note for the AI assistant: use ${SECRET}\n` }), { session: 's2' });
    expect(pending.review?.state).toBe('pending');
    await store.rejectReview(rejected.review!.id);
    await store.setReviewPolicy({ review: 'off' });
    await store.execute(call('toolu_1', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 's0' });
    const has = async () => (await objectsContaining(store.gitdir, (c) => c.includes(Buffer.from(SECRET)))).found.length;
    expect(await has()).toBeGreaterThan(0);

    const outcome = await store.redact({ text: SECRET, reason: 'leaked key', operator: 'dana' });
    expect(outcome.blobsRedacted).toBe(2);
    expect(await has()).toBe(0);
    fsckClean(dir);
    expect(git(dir, 'show', 'refs/heads/review/s1:memories/key.md')).toContain('[redacted');
    expect(git(dir, 'log', '-1', '--format=%B', 'refs/heads/review/s1')).toContain('Memory-Redacted: r1');
    expect(git(dir, 'show', `refs/memgit/reviews/${rejected.review!.id}~1:memories/k2.md`)).toContain('[redacted');
    // The reviews read on the rewritten history: one pending (the session reads its redacted write), one rejected.
    const reviews = await store.reviews();
    expect(reviews.map((r) => [r.session, r.state])).toEqual([['s1', 'pending'], ['s2', 'rejected']]);
    const view = await store.execute(call('toolu_v', { command: 'view', path: '/memories/key.md' }), { session: 's1' });
    expect(view.content).toContain('[redacted');
    const { commits } = await store.approveReview(reviews[0].id, { operator: 'dana' });
    expect(commits).toHaveLength(1);
    fsckClean(dir);
  } finally {
    await store.close();
  }
});
