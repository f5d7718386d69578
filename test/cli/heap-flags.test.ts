/**
 * V8's heap flags for `memgit serve` and `memgit server` (src/cli/heap.ts, docs/performance.md): set through
 * NODE_OPTIONS, they take effect in the serving process, and its start-up line states the limit in force.
 * The young generation is 3 × the semi-space (two semi-spaces and the new large-object space), so
 * `--max-semi-space-size=2` lowers V8's heap limit by 3 × (16 − 2) = 42 MB on 64-bit Node. The flags memgit
 * sets itself for serving (how the generations grow, read by V8 as it runs) are stated on the same line.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { MemoryStore } from '../../src/store/memory-store';

jest.setTimeout(180_000);

const dirs: string[] = [];
let storeDir: string;

beforeAll(async () => {
  await ensureBuilt();
  storeDir = makeTempDir();
  dirs.push(storeDir);
  const store = await MemoryStore.open(storeDir, { fsync: false, log: () => undefined });
  await store.close();
});

afterAll(() => dirs.forEach(removeDir));

/** Start the CLI with `args` and NODE_OPTIONS, return its heap line once it is printed, then stop it. */
function heapLineOf(args: string[], nodeOptions: string | undefined): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, MEMGIT_TOKEN: 'heap-flags-operator-token-Zq8wX3vK9mT2pL7r' };
  delete env.NODE_OPTIONS;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  const child = spawn(process.execPath, [CLI_MAIN, ...args, '--port', '0'], { env, cwd: REPO_ROOT });
  let out = '';
  return new Promise<string>((resolve, reject) => {
    let found: string | null = null;
    const seen = () => {
      const line = /^memgit: V8 heap limit .*$/m.exec(out);
      if (!line || found !== null) return;
      found = line[0];
      child.kill('SIGTERM');
    };
    child.stdout.on('data', (chunk: Buffer) => ((out += chunk.toString('utf8')), seen()));
    child.stderr.on('data', (chunk: Buffer) => ((out += chunk.toString('utf8')), seen()));
    child.once('exit', (code) => (found !== null ? resolve(found) : reject(new Error(`exited (${code}) before stating its heap: ${out}`))));
  });
}

const limitOf = (line: string) => Number(/heap limit (\d+) MB/.exec(line)![1]);

test('memgit serve: V8 defaults plus the serving flags memgit sets; --max-semi-space-size in NODE_OPTIONS takes effect (42 MB less heap) and keeps memgit off the young generation', async () => {
  const plain = await heapLineOf(['serve', '--repo', storeDir], undefined);
  expect(plain).toMatch(/\(V8's defaults\); set by memgit for serving: --semi-space-growth-factor=1 --heap-growing-percent=20 \(docs\/performance\.md\)$/);
  const tuned = await heapLineOf(['serve', '--repo', storeDir], '--max-semi-space-size=2');
  expect(tuned).toMatch(/\(--max-semi-space-size=2\); set by memgit for serving: --heap-growing-percent=20 \(docs\/performance\.md\)$/);
  expect(limitOf(plain) - limitOf(tuned)).toBe(42);
});

test('memgit server: both flags in NODE_OPTIONS set the limit (old space + 3 × semi-space)', async () => {
  const root = makeTempDir();
  dirs.push(root);
  const line = await heapLineOf(['server', '--root', root], '--max-old-space-size=300 --max-semi-space-size=2');
  expect(limitOf(line)).toBe(300 + 3 * 2);
  expect(line).toContain('(--max-old-space-size=300 --max-semi-space-size=2); set by memgit for serving: --heap-growing-percent=20');
});

/** In a fresh node: the new space's capacity before and after 200 MB of short-lived garbage, tuned or not. */
function youngGeneration(tune: boolean): Promise<{ before: number; after: number; applied: string[] }> {
  const script = `
    const v8 = require('node:v8');
    const heap = require(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'src', 'cli', 'heap.js'))});
    const applied = ${tune} ? heap.tuneHeapForServing() : [];
    const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    const before = size();
    let keep = 0;
    for (let i = 0; i < 2e6; i++) { const o = { i, s: 'x' + i, a: [i, i, i] }; if (i % 100 === 0) keep += o.a.length; }
    process.stdout.write(JSON.stringify({ before, after: size(), applied, keep }));`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { env });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`node exited ${code}`))));
  });
}

test('the serving flags take effect in a running node: the same garbage grows its young generation less than V8 grows it by default', async () => {
  const untuned = await youngGeneration(false);
  expect(untuned.after).toBeGreaterThan(untuned.before); // the growth the flag holds back, so that this test sees it
  const tuned = await youngGeneration(true);
  expect(tuned.applied).toEqual(['--semi-space-growth-factor=1', '--heap-growing-percent=20']);
  expect(tuned.after).toBeLessThan(untuned.after);
});
