/**
 * Issue 30: the fleet drill in a short form. Real HAProxy (deploy/haproxy/haproxy.cfg as shipped) in front
 * of three real `memgit server` processes (dist/), a real git server (git's http-backend), clients writing
 * through HAProxy; the node serving the first store is killed with SIGKILL under load, another node takes
 * its stores, the node comes back. Every call acknowledged in replicated mode is on the git server exactly
 * once afterwards, every store passes git fsck --full, the returning node re-synced the stores it had lost.
 * Then the drill as users run it (npm run drill:fleet -- --json --keep DIR): its one JSON line, the
 * acknowledgements file and the git server's repositories left in DIR. Every process is stopped by the drill.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HAPROXY_CFG, runFleetDrill } from '../../bench/fleet-drill';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { ensureBuilt, REPO_ROOT } from '../support/dist';

const base = makeTempDir('memgit-fleet-drill-test-');

beforeAll(async () => {
  await ensureBuilt([path.join(REPO_ROOT, 'bench', 'fleet-drill.ts')]);
}, 240_000);

afterAll(() => removeDir(base));

it('HAProxy accepts the shipped configuration with the addresses from the environment', () => {
  const env = { ...process.env, MEMGIT_FLEET_BIND: '127.0.0.1:8080', MEMGIT_NODE1: '127.0.0.1:8081', MEMGIT_NODE2: '127.0.0.1:8082', MEMGIT_NODE3: '127.0.0.1:8083' };
  const check = spawnSync('/usr/sbin/haproxy', ['-c', '-f', HAPROXY_CFG], { env, encoding: 'utf8' });
  expect(check.stdout + check.stderr).toContain('Configuration file is valid');
  expect(check.status).toBe(0);
  const cfg = fs.readFileSync(HAPROXY_CFG, 'utf8');
  expect(cfg).toMatch(/hash-type consistent/);
  expect(cfg).toMatch(/option httpchk GET \/healthz/);
});

it('a node killed under load loses no replicated acknowledgement; the returning node re-syncs', async () => {
  const result = await runFleetDrill({ mode: 'replicated', stores: 12, clients: 4, durationMs: 9000 });
  // One object, so that a failure shows every figure of the run.
  expect({ killed: result.killed, lost: result.lost, duplicated: result.duplicated, fsck: result.fsck, fenced: result.fenced, failedOver: result.failover_ms !== null }).toEqual({
    killed: true,
    lost: 0,
    duplicated: 0,
    fsck: true,
    fenced: true,
    failedOver: true,
  });
  expect(result.acked).toBeGreaterThan(0);
  // The stores were spread over more than one node while all were up.
  expect(Object.keys(result.perNode).length).toBeGreaterThan(1);
}, 120_000);

it('npm run drill:fleet -- --json --keep DIR prints one JSON line and leaves the git server and the acknowledgements', () => {
  const keep = path.join(base, 'kept');
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'bench', 'fleet-drill.js'), '--json', '--keep', keep, '--stores', '6', '--clients', '3', '--seconds', '7'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 110_000,
  });
  expect(run.status).toBe(0);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const result = JSON.parse(lines[0]) as { nodes: number; stores: number; killed: boolean; mode: string; acked: number; lost: number; fenced: boolean; failover_ms: number; gitRoot: string; acks: string };
  expect(result).toMatchObject({ nodes: 3, stores: 6, killed: true, mode: 'replicated', lost: 0 });
  expect(result.gitRoot).toBe(path.join(keep, 'git'));
  const acks = fs.readFileSync(result.acks, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { store: string; tool_use_id: string; commit: string; mode: string });
  expect(acks).toHaveLength(result.acked);
  // Each acknowledged call is a commit on the git server whose first line is its tool_use id.
  for (const ack of acks.slice(0, 20)) {
    const subject = spawnSync('git', ['--git-dir', path.join(keep, 'git', `${ack.store}.git`), 'log', '-1', '--format=%s', ack.commit], { encoding: 'utf8' });
    expect(ack.mode).toBe('replicated');
    expect(subject.stdout.trim()).toBe(ack.tool_use_id);
  }
}, 120_000);

/** Processes of this machine whose command line names `dir` (the drill's nodes run with --root DIR/nodeN). */
function processesNaming(dir: string): number[] {
  return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir) ? [Number(pid)] : [];
    } catch {
      return []; // ended meanwhile
    }
  });
}

it('without HAProxy the drill says so, exits 1 and leaves none of its nodes running', () => {
  const keep = path.join(base, 'no-haproxy');
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'bench', 'fleet-drill.js'), '--json', '--keep', keep, '--stores', '2', '--clients', '1', '--seconds', '3'], {
    cwd: REPO_ROOT,
    env: { ...process.env, MEMGIT_HAPROXY: path.join(base, 'no-such-haproxy') },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const left = processesNaming(keep);
  for (const pid of left) process.kill(pid, 'SIGKILL'); // so that a failure here leaves nothing behind either
  expect({ exit: run.status, left }).toEqual({ exit: 1, left: [] });
  expect(run.stderr).toContain(`HAProxy did not come up: ${path.join(base, 'no-such-haproxy')} could not be started: spawn ${path.join(base, 'no-such-haproxy')} ENOENT (install HAProxy, or name its binary with MEMGIT_HAPROXY)`);
  expect(run.stdout).toBe('');
}, 90_000);
