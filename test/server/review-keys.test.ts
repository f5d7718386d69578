/**
 * Review before trust on memgit server: a key made with `--review all` has every write held, over the
 * HTTP tool API (the answer gains `review`) and MCP (`_meta` gains `memgit/review`); the model's text is
 * the contract's; main (checked with git) never has the held content; another key's session reads main.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { keysCli, makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';
import { mcpUrl, rawInitialize, rawPost, toolCallMessage, toolText } from './mcp-raw';

const root = makeTempDir('memgit-review-keys-');
let server: SpawnedServer;
let held: { key: string; id: string };
let plain: { key: string; id: string };

beforeAll(async () => {
  await ensureBuilt();
  held = await makeKey(root, 'acme', 'write', ['--review', 'all']);
  plain = await makeKey(root, 'acme', 'write');
  server = await spawnServer(root, []);
}, 240_000);

afterAll(async () => {
  await server?.stop();
  removeDir(root);
});

function git(...args: string[]): string {
  const run = spawnSync('git', args, { cwd: path.join(root, 'acme'), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout;
}

test('keys list says a key needs review; a bad --review is refused', () => {
  expect(keysCli(['list', '--root', root]).stdout).toContain('writes need review (all)');
  expect(keysCli(['create', '--root', root, '--stores', 'x', '--review', 'often']).status).not.toBe(0);
});

test('HTTP tool API and MCP: held writes say so beside the contract\'s text, and stay off main', async () => {
  const seeded = await postToolCall(server.url, 'acme', plain.key, { tool_use: toolUse('toolu_seed', { command: 'create', path: '/memories/a.md', file_text: 'seed\n' }), session: 'sess_plain' });
  expect(seeded.status).toBe(200);
  expect(JSON.parse(seeded.text).review).toBeUndefined();

  const answer = await postToolCall(server.url, 'acme', held.key, { tool_use: toolUse('toolu_h1', { command: 'create', path: '/memories/b.md', file_text: 'held\n' }), session: 'sess_held' });
  expect(answer.status).toBe(200);
  const body = JSON.parse(answer.text);
  expect(body.tool_result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_h1', content: 'File created successfully at: /memories/b.md' });
  expect(body.review).toEqual({ id: expect.stringMatching(/^rv_[0-9a-f]{16}$/), state: 'pending' });
  expect(git('ls-tree', '--name-only', 'main', 'memories/')).toBe('memories/a.md\n');
  expect(git('show', 'refs/heads/review/sess_held:memories/b.md')).toBe('held\n');

  // The held session reads its own write; the other key's session does not see it.
  const mine = await postToolCall(server.url, 'acme', held.key, { tool_use: toolUse('toolu_v1', { command: 'view', path: '/memories' }), session: 'sess_held' });
  expect(JSON.parse(mine.text).tool_result.content).toContain('b.md');
  const theirs = await postToolCall(server.url, 'acme', plain.key, { tool_use: toolUse('toolu_v2', { command: 'view', path: '/memories' }), session: 'sess_plain' });
  expect(JSON.parse(theirs.text).tool_result.content).not.toContain('b.md');

  const url = mcpUrl(server.url, 'acme');
  const { session } = await rawInitialize(url, held.key);
  const mcp = await rawPost(url, held.key, toolCallMessage(7, { command: 'create', path: '/memories/c.md', file_text: 'via mcp\n' }), session!);
  expect(toolText(mcp.messages[0])).toEqual({ text: 'File created successfully at: /memories/c.md', isError: false });
  const meta = (mcp.messages[0].result as { _meta: Record<string, unknown> })._meta;
  expect(meta['memgit/review']).toEqual({ id: expect.stringMatching(/^rv_[0-9a-f]{16}$/), state: 'pending' });
  expect(git('ls-tree', '--name-only', 'main', 'memories/')).toBe('memories/a.md\n');
  expect(fs.existsSync(path.join(root, 'acme', 'memories', 'c.md'))).toBe(false);
  const fsck = spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: path.join(root, 'acme'), encoding: 'utf8' });
  expect([fsck.status, fsck.stdout + fsck.stderr]).toEqual([0, '']);
});

test('the operator API lists, shows, refuses, rejects and approves reviews; a write key may not', async () => {
  const operator = await makeKey(root, 'acme', 'operator');
  const api = async (method: string, url: string, key: string, body?: unknown) => {
    const response = await fetch(`${server.url}/api/v1/stores/acme${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: JSON.parse(await response.text()) };
  };
  expect((await api('GET', '/reviews', plain.key)).status).toBe(403);
  const listed = await api('GET', '/reviews', operator.key);
  expect(listed.status).toBe(200);
  const pending = (listed.body.reviews as Array<{ id: string; session: string; state: string }>).filter((r) => r.state === 'pending');
  expect(pending.map((r) => r.session).sort()).toHaveLength(2);
  const [first, second] = pending;
  const shown = await api('GET', `/reviews/${first.id}`, operator.key);
  expect(shown.status).toBe(200);
  expect(shown.body.review.calls[0]).toHaveProperty('detection');
  expect((await api('GET', '/reviews/rv_0000000000000000', operator.key)).status).toBe(404);
  expect((await api('POST', `/reviews/${first.id}/approve`, operator.key, { calls: 'all' })).status).toBe(400);
  expect((await api('POST', `/reviews/${first.id}/merge`, operator.key, {})).status).toBe(404);
  const rejected = await api('POST', `/reviews/${first.id}/reject`, operator.key, { reason: 'not wanted' });
  expect(rejected.status).toBe(200);
  expect(rejected.body.review.state).toBe('rejected');
  expect((await api('POST', `/reviews/${first.id}/reject`, operator.key, {})).status).toBe(409);
  const approved = await api('POST', `/reviews/${second.id}/approve`, operator.key, { reason: 'fine' });
  expect(approved.status).toBe(200);
  expect(approved.body.commits.length).toBeGreaterThan(0);
  expect(git('log', '-1', '--format=%(trailers:key=Memory-Approved-By,valueonly)', 'main').trim()).toBe(`key:${operator.id}`);
  const fsck = spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: path.join(root, 'acme'), encoding: 'utf8' });
  expect([fsck.status, fsck.stdout + fsck.stderr]).toEqual([0, '']);
});
