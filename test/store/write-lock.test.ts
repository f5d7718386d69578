/**
 * The cross-process write lock's fast takeover: a lock whose holder is a dead process of this host is
 * taken over at once (and logged); a live or foreign holder's lock never is, short of proper-lockfile's
 * own staleness. The lock directories are laid out by hand, as a killed process would leave them.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockTimeoutError, WriteLock } from '../../src/store/write-lock';
import { makeTempDir, removeDir } from './git-helpers';

let dir: string;
let target: string;
let logged: string[];
beforeEach(() => {
  dir = makeTempDir('memgit-lock-');
  target = path.join(dir, 'memgit-write');
  logged = [];
});
afterEach(() => removeDir(dir));

const lock = () => new WriteLock(target, { timeoutMs: 300, log: (m) => logged.push(m) });
/** A pid that certainly belonged to a process of this host that has exited and been reaped. */
const deadPid = () => spawnSync('true').pid!;

function plantLock(owner: string | null, intents: string[] = []): void {
  fs.mkdirSync(`${target}.lock`);
  if (owner !== null) fs.writeFileSync(path.join(`${target}.lock`, 'owner'), owner);
  fs.mkdirSync(`${target}.lock.intents`, { recursive: true });
  for (const intent of intents) fs.writeFileSync(path.join(`${target}.lock.intents`, intent), '');
}

test('a lock whose owner died is taken over at once, and the takeover is logged', async () => {
  const pid = deadPid();
  plantLock(`${pid}@${os.hostname()}\n`, [`${os.hostname()}-${pid}-1`]);
  await expect(lock().withLock(async () => 'written')).resolves.toBe('written');
  expect(logged.join('\n')).toContain(`from process ${pid}, which has died`);
  // Released, and the dead process's intent cleaned up with its lock.
  expect(fs.existsSync(`${target}.lock`)).toBe(false);
  expect(fs.readdirSync(`${target}.lock.intents`)).toEqual([]);
});

test('an ownerless lock (its holder killed before recording itself) is taken over when every announced process is dead', async () => {
  const pid = deadPid();
  plantLock(null, [`${os.hostname()}-${pid}-7`]);
  await expect(lock().withLock(async () => 'written')).resolves.toBe('written');
  expect(logged.join('\n')).toContain('which has died');
});

test('a live holder keeps its lock, recorded or not yet recorded', async () => {
  const sleeper = spawn('sleep', ['30']);
  try {
    plantLock(`${sleeper.pid}@${os.hostname()}\n`);
    await expect(lock().withLock(async () => 'stolen')).rejects.toBeInstanceOf(LockTimeoutError);
    fs.rmSync(path.join(`${target}.lock`, 'owner'));
    fs.writeFileSync(path.join(`${target}.lock.intents`, `${os.hostname()}-${sleeper.pid}-1`), '');
    fs.writeFileSync(path.join(`${target}.lock.intents`, `${os.hostname()}-${deadPid()}-2`), '');
    await expect(lock().withLock(async () => 'stolen')).rejects.toBeInstanceOf(LockTimeoutError);
    expect(logged).toEqual([]);
  } finally {
    sleeper.kill('SIGKILL');
  }
});

test("another host's lock, and an ownerless lock nobody announced, are left to the lock's age", async () => {
  plantLock(`${deadPid()}@another-host.example\n`, [`another-host.example-1-1`]);
  await expect(lock().withLock(async () => 'stolen')).rejects.toBeInstanceOf(LockTimeoutError);
  fs.rmSync(`${target}.lock`, { recursive: true });
  fs.rmSync(`${target}.lock.intents`, { recursive: true });
  plantLock(null);
  await expect(lock().withLock(async () => 'stolen')).rejects.toBeInstanceOf(LockTimeoutError);
  expect(logged).toEqual([]);
});

test('two stores in one process exclude each other without taking the lock from one another', async () => {
  const order: string[] = [];
  const a = new WriteLock(target, { log: (m) => logged.push(m) });
  const b = new WriteLock(target, { log: (m) => logged.push(m) });
  await Promise.all([
    a.withLock(async () => {
      order.push('a start');
      await new Promise((resolve) => setTimeout(resolve, 100));
      order.push('a end');
    }),
    b.withLock(async () => {
      order.push('b start');
      order.push('b end');
    }),
  ]);
  expect([order.slice(0, 2), order.slice(2)].map((pair) => pair[0].split(' ')[0] === pair[1].split(' ')[0])).toEqual([true, true]);
  expect(logged).toEqual([]);
});
