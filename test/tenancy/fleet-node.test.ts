/**
 * Issue 30: a node of a fleet (src/tenancy/fleet.ts) against a real git server (git's `http-backend` on
 * loopback): placement by rendezvous hashing, the replicated ack (a write answered only once the git
 * server holds its commit), failover (another node clones the store and serves it), fencing (a node whose
 * push is refused because another node wrote the store refuses it, sets its copy aside and re-syncs),
 * not_replicated when the git server is down (and a retry of the same tool_use id acknowledged once it is
 * back, never applied twice), and the local ack. The git server's repositories are read with the git CLI.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startMemgitServer } from '../../src/compose/server';
import type { RunningMemgitServer } from '../../src/server/server';
import { createKey } from '../../src/tenancy/keys';
import { placeStore, placementBalance, placementOrder, type AckMode } from '../../src/tenancy/fleet';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { createBareRepository, GitHttpServer, startGitHttpServer } from '../support/git-http-server';

const USER = 'fleet';
const TOKEN = 'fleet-node-test-token-0123456789';
const TOKEN_ENV = 'MEMGIT_FLEET_NODE_TEST_TOKEN';

const base = makeTempDir('memgit-fleet-node-');
const gitRoot = path.join(base, 'git');
let git: GitHttpServer;
let key: string;
const nodes: RunningMemgitServer[] = [];

const git$ = (bare: string, ...args: string[]) => {
  const run = spawnSync('git', ['--git-dir', path.join(gitRoot, bare), ...args], { encoding: 'utf8' });
  return { status: run.status, out: run.stdout.trim(), err: run.stderr };
};
const remoteHead = (store: string) => git$(`${store}.git`, 'rev-parse', '--verify', '-q', 'refs/heads/main').out || null;
const onGitServer = (store: string, commit: string) => git$(`${store}.git`, 'merge-base', '--is-ancestor', commit, 'refs/heads/main').status === 0;
/** The tool_use ids of the commits on the git server's branch (each commit's first line), newest first. */
const remoteCalls = (store: string) => git$(`${store}.git`, 'log', '--format=%s', 'refs/heads/main').out.split('\n');

async function startNode(name: string, ack: AckMode = 'replicated'): Promise<RunningMemgitServer> {
  const root = path.join(base, name);
  fs.mkdirSync(path.join(root, '.memgit'), { recursive: true, mode: 0o700 });
  // The nodes share their keys: the same keys file in every root.
  fs.copyFileSync(path.join(base, 'keys-root', '.memgit', 'keys.json'), path.join(root, '.memgit', 'keys.json'));
  const node = await startMemgitServer({
    root,
    port: 0,
    logger: pino({ level: 'silent' }),
    ui: false,
    log: () => undefined,
    fleet: { node: name, remote: `${git.url}/{store}.git`, tokenEnv: TOKEN_ENV, user: USER, ack, log: () => undefined },
  });
  nodes.push(node);
  return node;
}

async function call(node: RunningMemgitServer, store: string, id: string, input: Record<string, unknown>) {
  const response = await fetch(`${node.url}/api/v1/stores/${store}/tool-calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ tool_use: toolUse(id, input), session: 'sess_fleet' }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { tool_result?: { content: string; is_error?: boolean }; commit?: string | null; ack?: string; error?: { type: string; message: string } };
  return { status: response.status, node: response.headers.get('x-memgit-node'), retryAfter: response.headers.get('retry-after'), ...body };
}
const create = (file: string, text: string) => ({ command: 'create', path: `/memories/${file}`, file_text: text });
const view = (file: string) => ({ command: 'view', path: `/memories/${file}` });

beforeAll(async () => {
  process.env[TOKEN_ENV] = TOKEN;
  for (const store of ['acme-1', 'acme-2', 'acme-3', 'acme-4', 'acme-5']) createBareRepository(gitRoot, `${store}.git`, { initialBranch: 'main' });
  git = await startGitHttpServer({ root: gitRoot, username: USER, password: TOKEN });
  fs.mkdirSync(path.join(base, 'keys-root'), { mode: 0o700 });
  key = (await createKey(path.join(base, 'keys-root'), { stores: ['acme-*'], scope: 'write', create: true })).key;
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  await git?.close();
  delete process.env[TOKEN_ENV];
  removeDir(base);
});

describe('placement', () => {
  const names = Array.from({ length: 20 }, (_, i) => `node-${i + 1}`);
  const stores = Array.from({ length: 10_000 }, (_, i) => `tenant-${i}`);

  it('puts a store on the same node whatever the order of the node list, the first of its placement order', () => {
    for (const store of stores.slice(0, 200)) {
      const owner = placeStore(store, names);
      expect(placeStore(store, [...names].reverse())).toBe(owner);
      expect(placementOrder(store, names)[0]).toBe(owner);
      expect(new Set(placementOrder(store, names)).size).toBe(names.length);
    }
  });

  it('spreads 10,000 stores over 20 nodes, every node taking some, none far above the mean', () => {
    const balance = placementBalance(stores, names);
    expect(Object.values(balance.perNode).reduce((a, b) => a + b, 0)).toBe(stores.length);
    expect(balance.mean).toBe(500);
    expect(Math.min(...Object.values(balance.perNode))).toBeGreaterThan(0);
    expect(balance.maxOverMean).toBeLessThan(1.5);
  });

  it('moves only the stores of a node that leaves, each to its next node in order', () => {
    const fewer = names.filter((n) => n !== 'node-7');
    for (const store of stores.slice(0, 2000)) {
      const before = placementOrder(store, names);
      const after = placeStore(store, fewer);
      if (before[0] !== 'node-7') expect(after).toBe(before[0]);
      else expect(after).toBe(before[1]);
    }
  });
});

describe('a node of a fleet', () => {
  let a: RunningMemgitServer;
  let b: RunningMemgitServer;

  beforeAll(async () => {
    a = await startNode('node-a');
    b = await startNode('node-b');
  });

  it('acknowledges a write in replicated mode only with its commit on the git server', async () => {
    const answer = await call(a, 'acme-1', 'toolu_fleet_a1', create('plan.md', 'first\n'));
    expect(answer.status).toBe(200);
    expect(answer.ack).toBe('replicated');
    expect(answer.node).toBe('node-a');
    expect(answer.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(remoteHead('acme-1')).toBe(answer.commit);
    expect(git$('acme-1.git', 'fsck', '--full').status).toBe(0);
  });

  it('shares pushes among concurrent calls of a store: every answered call is on the git server', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call(a, 'acme-1', `toolu_fleet_batch${i}`, create(`batch-${i}.md`, `${i}\n`))));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(onGitServer('acme-1', answer.commit!)).toBe(true);
    }
    const health = (await (await fetch(`${a.url}/healthz`)).json()) as { fleet: { pushes: number; pushedCommits: number; node: string } };
    expect(health.fleet.node).toBe('node-a');
    // 9 commits so far (and the store's first), in fewer pushes than calls.
    expect(health.fleet.pushedCommits).toBeGreaterThanOrEqual(9);
    expect(health.fleet.pushes).toBeLessThan(9);
  });

  it('fails over: another node clones the store from the git server and serves every acknowledged write', async () => {
    const seen = await call(b, 'acme-1', 'toolu_fleet_b_view', view('plan.md'));
    expect(seen.status).toBe(200);
    expect(seen.node).toBe('node-b');
    expect(seen.tool_result!.content).toContain('first');
    const written = await call(b, 'acme-1', 'toolu_fleet_b1', create('from-b.md', 'b wrote this\n'));
    expect(written.status).toBe(200);
    expect(remoteHead('acme-1')).toBe(written.commit);
    // A retry of a call node-a acknowledged answers its first result on node-b, and adds no commit.
    const retry = await call(b, 'acme-1', 'toolu_fleet_a1', create('plan.md', 'first\n'));
    expect(retry.status).toBe(200);
    expect(remoteHead('acme-1')).toBe(written.commit);
    expect(remoteCalls('acme-1').filter((s) => s === 'toolu_fleet_a1')).toHaveLength(1);
  });

  it('fences a node whose push is refused: its stale write never reaches the git server, and it re-syncs before serving again', async () => {
    const headBefore = remoteHead('acme-1');
    // node-a still holds acme-1 open at the head it last pushed; node-b has written since.
    const stale = await call(a, 'acme-1', 'toolu_fleet_stale', create('stale.md', 'written on a stale copy\n'));
    expect(stale.status).toBe(503);
    expect(stale.error!.type).toBe('overloaded_error');
    expect(stale.error!.message).toContain('no longer holds the newest copy');
    expect(stale.retryAfter).toBe('1');
    expect(remoteHead('acme-1')).toBe(headBefore);
    expect(remoteCalls('acme-1')).not.toContain('toolu_fleet_stale');

    // The fence holds while the node re-syncs; once done, node-a serves the git server's history.
    let answer = await call(a, 'acme-1', 'toolu_fleet_after', view('from-b.md'));
    for (let i = 0; answer.status === 503 && i < 100; i++) {
      expect(['overloaded_error']).toContain(answer.error!.type);
      await new Promise((r) => setTimeout(r, 100));
      answer = await call(a, 'acme-1', 'toolu_fleet_after', view('from-b.md'));
    }
    expect(answer.status).toBe(200);
    expect(answer.tool_result!.content).toContain('b wrote this');
    const health = (await (await fetch(`${a.url}/healthz`)).json()) as { fleet: { fenced: number; resynced: number; setAsideWithUnpushed: number; unavailable: string[] } };
    expect(health.fleet.fenced).toBe(1);
    expect(health.fleet.resynced).toBeGreaterThanOrEqual(1);
    expect(health.fleet.setAsideWithUnpushed).toBe(1);
    expect(health.fleet.unavailable).toEqual([]);
    // The stale copy is kept aside for inspection, its unacknowledged commit in it.
    const aside = fs.readdirSync(path.join(base, 'node-a', '.memgit', 'fenced'));
    expect(aside.some((d) => d.startsWith('acme-1.'))).toBe(true);
    // And node-a writes again, on top of node-b's commits.
    // (A 503 here is a push that did not go through yet on a loaded machine: the documented answer is to
    // retry the same tool_use id, which is acknowledged once a push carries it, never applied twice.)
    let next = await call(a, 'acme-1', 'toolu_fleet_a2', create('again.md', 'a again\n'));
    for (let i = 0; next.status === 503 && i < 50; i++) {
      expect(next.error!.type).toBe('overloaded_error');
      await new Promise((r) => setTimeout(r, 100));
      next = await call(a, 'acme-1', 'toolu_fleet_a2', create('again.md', 'a again\n'));
    }
    expect({ status: next.status, error: next.error }).toEqual({ status: 200, error: undefined });
    expect(remoteCalls('acme-1').filter((id) => id === 'toolu_fleet_a2')).toHaveLength(1);
    expect(remoteHead('acme-1')).toBe(next.commit);
    expect(onGitServer('acme-1', headBefore!)).toBe(true);
    expect(git$('acme-1.git', 'fsck', '--full').status).toBe(0);
  });

  it('answers not_replicated while the git server is down, and acknowledges a retry of the same call once it is back', async () => {
    expect((await call(a, 'acme-2', 'toolu_fleet_c0', create('c.md', 'zero\n'))).status).toBe(200);
    const port = git.port;
    await git.close();
    const refused = await call(a, 'acme-2', 'toolu_fleet_c1', create('c1.md', 'one\n'));
    expect(refused.status).toBe(503);
    expect(refused.error!.type).toBe('api_error');
    expect(refused.error!.message).toContain('not acknowledged');
    // A store the node has not opened yet cannot be checked against the git server: it is not served.
    const unchecked = await call(a, 'acme-4', 'toolu_fleet_unchecked', create('u.md', 'u\n'));
    expect(unchecked.status).toBe(503);
    expect(unchecked.error!.type).toBe('overloaded_error');
    expect(unchecked.error!.message).toContain('cannot be served until it is checked against its git server');
    expect(fs.existsSync(path.join(base, 'node-a', 'acme-4'))).toBe(false);
    git = await startGitHttpServer({ root: gitRoot, username: USER, password: TOKEN, port });
    expect(remoteCalls('acme-2')).not.toContain('toolu_fleet_c1');
    const retried = await call(a, 'acme-2', 'toolu_fleet_c1', create('c1.md', 'one\n'));
    expect(retried.status).toBe(200);
    expect(remoteHead('acme-2')).toBe(retried.commit);
    expect(remoteCalls('acme-2').filter((s) => s === 'toolu_fleet_c1')).toHaveLength(1);
  });

  it('a node returning with a copy the git server has moved past re-syncs it when it opens the store', async () => {
    expect((await call(a, 'acme-3', 'toolu_fleet_d1', create('d.md', 'a\n'))).status).toBe(200);
    await a.close();
    expect((await call(b, 'acme-3', 'toolu_fleet_d2', create('d2.md', 'b\n'))).status).toBe(200);
    // node-a comes back on its root: its copy of acme-3 is one commit behind the git server.
    const root = path.join(base, 'node-a');
    const again = await startMemgitServer({
      root,
      port: 0,
      logger: pino({ level: 'silent' }),
    ui: false,
    log: () => undefined,
      fleet: { node: 'node-a', remote: `${git.url}/{store}.git`, tokenEnv: TOKEN_ENV, user: USER, ack: 'replicated', log: () => undefined },
    });
    nodes.push(again);
    const seen = await call(again, 'acme-3', 'toolu_fleet_d3', view('d2.md'));
    expect(seen.status).toBe(200);
    expect(seen.tool_result!.content).toContain('b');
    const health = (await (await fetch(`${again.url}/healthz`)).json()) as { fleet: { resynced: number; setAsideWithUnpushed: number } };
    expect(health.fleet.resynced).toBe(1);
    expect(health.fleet.setAsideWithUnpushed).toBe(0);
  });

  it('pushes a commit no acknowledgement carried (made on the store directly, as a rollback is) in the background', async () => {
    const commit = await b.registry.use('acme-3', { create: false }, async (store) => {
      const report = await store.executeWithReport(toolUse('toolu_fleet_direct', create('direct.md', 'direct\n')), { session: 'sess_fleet' }, { settle: true });
      return report.commit!;
    });
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    for (let i = 0; i < 100 && remoteHead('acme-3') !== commit; i++) await new Promise((r) => setTimeout(r, 100));
    expect(remoteHead('acme-3')).toBe(commit);
  });

  it('acknowledges an MCP tool call in replicated mode only with its commit on the git server', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${b.url}/stores/acme-5/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    const client = new Client({ name: 'fleet-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = (await client.callTool({ name: 'memory', arguments: { command: 'create', path: '/memories/mcp.md', file_text: 'over mcp\n' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const commit = (result._meta as Record<string, string>)['memgit/commit'];
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      expect(remoteHead('acme-5')).toBe(commit);
    } finally {
      await client.close();
    }
  });

  it('in local mode acknowledges at once and pushes in the background', async () => {
    const local = await startNode('node-local', 'local');
    const answer = await call(local, 'acme-4', 'toolu_fleet_l1', create('l.md', 'local\n'));
    expect(answer.status).toBe(200);
    expect(answer.ack).toBe('local');
    for (let i = 0; i < 100 && !onGitServerSafe('acme-4', answer.commit!); i++) await new Promise((r) => setTimeout(r, 100));
    expect(onGitServer('acme-4', answer.commit!)).toBe(true);
  });
});

function onGitServerSafe(store: string, commit: string): boolean {
  return remoteHead(store) !== null && onGitServer(store, commit);
}
