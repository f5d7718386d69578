/**
 * V8's heap flags for `memgit serve` and `memgit server` (src/cli/heap.ts, docs/performance.md): set through
 * NODE_OPTIONS, they take effect in the serving process, and its start-up line states the limit in force.
 * The young generation is 3 × the semi-space (two semi-spaces and the new large-object space), so
 * `--max-semi-space-size=2` lowers V8's heap limit by 3 × (16 − 2) = 42 MB on 64-bit Node.
 */
import { spawn } from 'node:child_process';
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

test('memgit serve: --max-semi-space-size in NODE_OPTIONS takes effect (42 MB less heap), and the line says where it came from', async () => {
  const plain = await heapLineOf(['serve', '--repo', storeDir], undefined);
  expect(plain).toMatch(/V8's defaults; NODE_OPTIONS=--max-semi-space-size=2 is recommended/);
  const tuned = await heapLineOf(['serve', '--repo', storeDir], '--max-semi-space-size=2');
  expect(tuned).toMatch(/\(--max-semi-space-size=2\)$/);
  expect(limitOf(plain) - limitOf(tuned)).toBe(42);
});

test('memgit server: both flags in NODE_OPTIONS set the limit (old space + 3 × semi-space)', async () => {
  const root = makeTempDir();
  dirs.push(root);
  const line = await heapLineOf(['server', '--root', root], '--max-old-space-size=300 --max-semi-space-size=2');
  expect(limitOf(line)).toBe(300 + 3 * 2);
  expect(line).toContain('--max-old-space-size=300 --max-semi-space-size=2');
});
