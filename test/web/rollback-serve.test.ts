import { spawn, spawnSync } from 'node:child_process';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import type { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, git, newStore, replace } from '../rollback/helpers';

/** `memgit serve` prints an operator token (or takes MEMGIT_TOKEN) that the rollback API accepts. */

let store: MemoryStore;

beforeAll(async () => {
  await ensureBuilt();
  store = await newStore();
  await call(store, 'toolu_01', create('/memories/a.md', 'a\nb\n'));
  await call(store, 'toolu_02', replace('/memories/a.md', 'b', 'B'));
  await store.close();
});

afterAll(async () => dispose(store));

/** Start `memgit serve` on a free port; resolves with its URL and stdout once it is listening. */
function serve(env: NodeJS.ProcessEnv): Promise<{ url: string; stdout: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--port', '0'], { env, cwd: REPO_ROOT });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
      if (match && /reading needs/.test(out) && (env.MEMGIT_TOKEN || /operator token/.test(out))) resolve({ url: match[1], stdout: () => out, stop });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
}

it('prints a fresh token at start-up; the JSON API accepts it and refuses others', async () => {
  const server = await serve({ ...process.env, MEMGIT_TOKEN: undefined });
  try {
    const token = /operator token \(log in at .*\/login to revert or restore\): (\S+)/.exec(server.stdout())![1];
    expect(token.length).toBeGreaterThanOrEqual(32);
    const post = (bearer: string) =>
      fetch(`${server.url}/api/rollback/revert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ ref: 'toolu_02', operator: 'ci', reason: 'serve test' }),
      });
    expect((await post('x'.repeat(32))).status).toBe(401);
    const res = await post(token);
    expect(res.status).toBe(201);
    const outcome = (await res.json()) as { commit: string };
    expect(outcome.commit).toBe(git(store.dir, 'rev-parse', 'HEAD'));
    expect(git(store.dir, 'show', 'HEAD:memories/a.md')).toBe('a\nb');
  } finally {
    await server.stop();
  }
});

it('uses MEMGIT_TOKEN without printing it, and refuses a short or guessable one', async () => {
  const token = 'env-token-for-the-operator-0001';
  const server = await serve({ ...process.env, MEMGIT_TOKEN: token });
  try {
    expect(server.stdout()).not.toContain(token);
    expect(server.stdout()).toContain('memgit: loopback only: reading needs no login; rollbacks need the operator login');
    // A preview shows memory, so it needs the operator like its HTML page.
    expect((await fetch(`${server.url}/api/rollback/revert?ref=toolu_01`)).status).toBe(401);
    const res = await fetch(`${server.url}/api/rollback/revert?ref=toolu_01`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
  } finally {
    await server.stop();
  }
  const refused = (value: string) =>
    spawnSync(process.execPath, [CLI_MAIN, 'serve', '--repo', store.dir, '--port', '0'], { env: { ...process.env, MEMGIT_TOKEN: value }, encoding: 'utf8' });
  const short = refused('short');
  expect(short.status).toBe(1);
  expect(short.stderr).toContain('MEMGIT_TOKEN: the operator token must be at least 16 characters');
  for (const weak of ['aaaaaaaaaaaaaaaa', 'abababababababababababababab', '0123456789abcdef']) {
    const result = refused(weak);
    expect([weak, result.status]).toEqual([weak, 1]);
    expect(result.stderr).toMatch(/MEMGIT_TOKEN: the operator token is too easy to guess \(about \d+ bits; at least 128 needed\)/);
  }
});
