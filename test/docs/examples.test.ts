/**
 * Every shell example of the README and the guides runs here, as a reader would type it, with `memgit` on
 * PATH (a shim for the built CLI in a temporary bin folder, as `npm install -g .` puts it there) and
 * against the demo store: `memgit demo --no-serve` is built once, and every example starts in a fresh
 * sandbox folder that stands in for the clone's root: a copy of the demo store as `.memgit-demo/`, a
 * link `examples/` to the clone's examples and a link `clients/` to a copy of the clone's clients (pip
 * builds a local package in its own folder; HOME is the sandbox's own `home/`). The markers (skip,
 * continues, background, cwd) and the transcript rules are described in test/docs/extract.ts.
 *
 * Examples that cannot run here are marked in the document with their reason and listed below by name;
 * the list is reviewed: a skip that is not in it (or an entry that no longer matches a marked example)
 * fails the test, so no example is ever skipped silently.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { venvPythonDir } from '../support/python-venv';
import { Example, extractExamples, outputMatches, trimOutput } from './extract';

/** The documents whose examples run: the README, every guide, the examples' own READMEs and the Python package's. */
const DOCUMENTS = [
  'README.md',
  'clients/python/README.md',
  ...fs.readdirSync(path.join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`),
  ...fs.readdirSync(path.join(REPO_ROOT, 'examples')).sort().flatMap((d) => (fs.existsSync(path.join(REPO_ROOT, 'examples', d, 'README.md')) ? [`examples/${d}/README.md`] : [])),
];

/** The examples not run here (reviewed): each is marked `<!-- example: skip REASON -->` in its document. */
const REVIEWED_SKIPS: string[] = [
  'README.md › memgit › npm install && npm start',
  'README.md › memgit › npm test',
  'README.md › Get memgit on your PATH › npm install -g .', // the link itself is checked below, into a temporary prefix
  'README.md › 3. MCP: Claude Code and Claude Desktop › claude mcp add memgit -- memgit mcp --repo ~/memories-repo',
  'docs/chat.md › Use it › export ANTHROPIC_API_KEY=sk-ant-...',
  'docs/dreams.md › Run one › export ANTHROPIC_API_KEY=sk-ant-...',
  'docs/library.md › Use it in your project › (cd ~/src/memgit && npm pack)',
  'docs/fleet.md › Run a node › sudo cp deploy/systemd/memgit-node.service /etc/systemd/system/',
  'docs/fleet.md › HAProxy › MEMGIT_FLEET_BIND=0.0.0.0:8080 MEMGIT_NODE1=10.0.0.11:8080 MEMGIT_NODE2=10.0.0.12:8080 ME…',
  'docs/fleet.md › The drill › npm run drill:fleet -- --json --keep /tmp/drill',
  'docs/mcp.md › Install › git clone <this repository> ~/src/memgit && cd ~/src/memgit && npm install && npm install…',
  'docs/mcp.md › Claude Code › claude mcp add memgit -- memgit mcp --repo /home/me/memories-repo',
  'docs/mcp.md › Over HTTP › claude mcp add --transport http memgit https://HOST/stores/acme-1/mcp --header "Authoriza…',
  'docs/performance.md › Run the benchmark › npm run bench',
  'docs/replication.md › Push a store to it › export MEMGIT_BACKUP_TOKEN=ghp_...',
  'docs/replication.md › Clone a store for an audit › memgit clone https://github.com/acme/agent-memory.git ./acme-audit --token-env MEMGIT_REA…',
];

const extracted = DOCUMENTS.map((file) => extractExamples(file, fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')));
const examples: Example[] = extracted.flatMap((e) => e.examples);
// Two examples with the same heading and first command are told apart by their order.
const seen = new Map<string, number>();
for (const example of examples) {
  const count = (seen.get(example.name) ?? 0) + 1;
  seen.set(example.name, count);
  if (count > 1) example.name = `${example.name} (${count})`;
}

const COMMAND_TIMEOUT_MS = 60_000;
let root = '';
let demoStore = '';
let binDir = '';
let clientsCopy = '';

beforeAll(async () => {
  await ensureBuilt();
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-docs-'));
  binDir = path.join(root, 'bin');
  fs.mkdirSync(binDir);
  // What `npm install -g .` puts on PATH: a `memgit` that runs the clone's built CLI.
  fs.writeFileSync(path.join(binDir, 'memgit'), `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(CLI_MAIN)} "$@"\n`, { mode: 0o755 });
  // `python3 -m venv` in the examples, on a python3 without ensurepip: the tests' own (test/support/python-venv.ts).
  const shimDir = venvPythonDir();
  if (shimDir) {
    fs.renameSync(path.join(shimDir, 'python3'), path.join(binDir, 'python3'));
    fs.rmdirSync(shimDir);
  }
  // The Python package, as `pip install './clients/python'` finds it in the clone (without what pip or
  // Python left there: a copy the examples' pip builds may write into).
  clientsCopy = path.join(root, 'clients');
  fs.cpSync(path.join(REPO_ROOT, 'clients'), clientsCopy, { recursive: true, filter: (source) => !/(^|\/)(build|__pycache__|[^/]*\.egg-info)$/.test(source) });
  demoStore = path.join(root, 'demo', '.memgit-demo');
  const built = spawnSync(path.join(binDir, 'memgit'), ['demo', '--no-serve', '--dir', demoStore], { env: baseEnv(path.join(root, 'demo')), encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`memgit demo --no-serve failed:\n${built.stdout}${built.stderr}`);
}, 240_000);

afterAll(async () => {
  await stopChain(current, false);
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * pip in the examples (`pip install './clients/python[anthropic]'`) installs from where the user's pip
 * installs from: the user's own pip configuration (index, local wheel set) is under the real HOME, which
 * the examples do not see, so it is named explicitly. An index that cannot be reached fails at once
 * instead of after 5 retries; no nagging about pip's own version.
 */
const PIP_ENV: NodeJS.ProcessEnv = (() => {
  // PIP_COMPILE=0 (pip's --no-compile): pip would byte-compile every file it installs (anthropic, pydantic,
  // pip itself: 3,400 files, two thirds of an install's CPU); Python compiles what an example imports.
  const env: NodeJS.ProcessEnv = { PIP_RETRIES: '0', PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_COMPILE: '0' };
  const configHome = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  const userConfig = [path.join(configHome, 'pip', 'pip.conf'), path.join(os.homedir(), '.pip', 'pip.conf')].find((f) => fs.existsSync(f));
  if (userConfig && !process.env.PIP_CONFIG_FILE) env.PIP_CONFIG_FILE = userConfig;
  return env;
})();

/** A user's environment with none of memgit's or the SDK's variables, `memgit` first on PATH. */
function baseEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('MEMGIT_') || name.startsWith('npm_') || name.startsWith('JEST_')) continue;
    env[name] = value;
  }
  return { ...PIP_ENV, ...env, HOME: home, PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1' };
}

interface Chain {
  dir: string;
  state: string;
  env: NodeJS.ProcessEnv;
  /** Ports of background examples: as documented → as used here. */
  ports: Map<number, number>;
  background: Array<{ name: string; child: ChildProcess; output: () => string; exited: Promise<number | null> }>;
}

let current: Chain | null = null;

function newChain(example: Example): Chain {
  const dir = fs.mkdtempSync(path.join(root, 'sandbox-'));
  const copied = spawnSync('cp', ['-a', demoStore, path.join(dir, '.memgit-demo')], { encoding: 'utf8' });
  if (copied.status !== 0) throw new Error(`copying the demo store failed: ${copied.stderr}`);
  fs.symlinkSync(path.join(REPO_ROOT, 'examples'), path.join(dir, 'examples'));
  fs.symlinkSync(clientsCopy, path.join(dir, 'clients'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const state = path.join(dir, '.example-state');
  fs.mkdirSync(state);
  const cwd = path.resolve(dir, example.cwd);
  fs.writeFileSync(path.join(state, 'cwd'), `${cwd}\n`);
  fs.writeFileSync(path.join(state, 'env'), '');
  return { dir, state, env: baseEnv(home), ports: new Map(), background: [] };
}

/** Stop a chain's background processes; with `check`, each must exit cleanly (0) on SIGTERM. */
async function stopChain(chain: Chain | null, check: boolean): Promise<void> {
  if (!chain) return;
  const codes: Array<[string, number | null, string]> = [];
  for (const proc of chain.background) {
    proc.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([proc.exited, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 15_000)))]);
    clearTimeout(timer); // a pending 15 s timer would keep jest from exiting after the last example
    killGroup(proc.child.pid, 'SIGKILL'); // anything it started goes with it
    codes.push([proc.name, code === 'timeout' ? -1 : code, proc.output()]);
  }
  chain.background = [];
  if (check) for (const [name, code, output] of codes) expect({ name, exit: code, output }).toEqual({ name, exit: 0, output });
}

function withPorts(chain: Chain, text: string): string {
  let result = text;
  for (const [documented, used] of chain.ports) result = result.replace(new RegExp(`\\b${documented}\\b`, 'g'), String(used));
  return result;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A bash script that restores the chain's variables and folder, then runs `body` and saves them again;
 * or, for a background example (one simple command), becomes that command: `bash -c` execs a lone simple
 * command, so the test's SIGTERM reaches the server itself and its exit status is the server's.
 */
function script(chain: Chain, body: string, options: { plain: boolean; background: boolean }): string {
  const state = shellQuote(chain.state);
  const prelude = ['exec 2>&1', `. ${state}/env`, `cd "$(cat ${state}/cwd)"`];
  if (options.background) return [...prelude, `exec bash -c ${shellQuote(body)}`, ''].join('\n');
  return [...prelude, `trap 'export -p > ${state}/env; pwd > ${state}/cwd' EXIT`, options.plain ? 'set -e' : '', body, ''].join('\n');
}

/** Kill a process group (an example's shell and whatever it started); gone already is fine. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Run one command (or a plain block) in its own process group. Once its shell exits, anything it left
 * running is killed, so a stray server cannot outlive its example (or hold the test's pipes open).
 */
function run(chain: Chain, body: string, plain: boolean): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script(chain, body, { plain, background: false })], { env: chain.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[the test stopped this command after ${COMMAND_TIMEOUT_MS / 1000} s]`;
      killGroup(child.pid, 'SIGKILL');
    }, COMMAND_TIMEOUT_MS);
    let code: number | null = null;
    child.on('error', reject);
    child.on('exit', (exitCode) => {
      code = exitCode;
      killGroup(child.pid, 'SIGKILL');
    });
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function startBackground(chain: Chain, example: Example): Promise<void> {
  const documented = example.background!;
  if (!chain.ports.has(documented)) chain.ports.set(documented, await freePort());
  const port = chain.ports.get(documented)!;
  const body = withPorts(chain, example.body.trim());
  const child = spawn('bash', ['-c', script(chain, body, { plain: false, background: true })], { env: chain.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  chain.background.push({ name: example.name, child, output: () => output, exited });
  // Up when the port answers HTTP (any status below 500: a page, a login, a 401 for a missing key).
  const deadline = Date.now() + 30_000;
  let status = 0;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${example.name} exited (${child.exitCode}) before listening:\n${output}`);
    status = await probe(port).catch(() => 0);
    if (status > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect({ example: example.name, answered: status > 0 && status < 500, status, output }).toEqual({ example: example.name, answered: true, status, output });
}

function probe(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

async function runExample(example: Example, lastOfChain: boolean): Promise<void> {
  if (!example.continues || !current) {
    await stopChain(current, false);
    current = newChain(example);
  }
  const chain = current;
  try {
    if (example.background !== null) {
      await startBackground(chain, example);
    } else if (example.commands.length === 0) {
      const result = await run(chain, withPorts(chain, example.body), true);
      expect({ example: example.name, exit: result.code, output: result.output }).toEqual({ example: example.name, exit: 0, output: result.output });
    } else {
      for (const command of example.commands) {
        const result = await run(chain, withPorts(chain, command.text), false);
        const expected = command.expected === null ? null : withPorts(chain, command.expected);
        const matches = expected === null || outputMatches(expected, result.output);
        expect({ command: command.text, exit: result.code, output: matches ? 'as shown' : trimOutput(result.output) }).toEqual({
          command: command.text,
          exit: command.exitCode,
          output: matches ? 'as shown' : expected,
        });
      }
    }
  } finally {
    if (lastOfChain) {
      current = null;
      await stopChain(chain, true);
    }
  }
}

test('every shell example is tagged sh, and every marker is well-formed and sits right before one', () => {
  for (const [i, result] of extracted.entries()) {
    expect({ file: DOCUMENTS[i], otherShellTags: result.untagged, strayMarkers: result.strayMarkers }).toEqual({ file: DOCUMENTS[i], otherShellTags: [], strayMarkers: [] });
  }
  // `continues` needs an example before it in the same file.
  for (const [i, example] of examples.entries()) {
    if (example.continues) expect([example.name, examples[i - 1]?.file]).toEqual([example.name, example.file]);
  }
});

test('examples not run here are marked with a reason and are exactly the reviewed list', () => {
  const skipped = examples.filter((e) => e.skip !== null);
  // Listed by name, with the reason the document gives, in the test's output.
  process.stdout.write(`\nDocumentation examples: ${examples.length - skipped.length} run, ${skipped.length} not run here:\n${skipped.map((e) => `  - ${e.name}: ${e.skip}\n`).join('')}`);
  expect(skipped.map((e) => e.name).sort()).toEqual([...REVIEWED_SKIPS].sort());
});

test('the README\'s PATH instruction links a working `memgit` (npm install -g into a prefix, offline)', () => {
  // The README's `npm install -g .`, into a temporary prefix rather than npm's real global folder, as its
  // EACCES variant does; --ignore-scripts so that no build runs under the other tests' feet.
  const prefix = path.join(root, 'npm-prefix');
  const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--no-update-notifier', '--ignore-scripts', '.'], {
    cwd: REPO_ROOT,
    env: { ...baseEnv(path.join(root, 'npm-home')) },
    encoding: 'utf8',
  });
  expect({ exit: install.status, output: install.stdout + install.stderr }).toEqual({ exit: 0, output: install.stdout + install.stderr });
  const linked = spawnSync(path.join(prefix, 'bin', 'memgit'), ['--version'], { encoding: 'utf8' });
  expect(linked.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version);
  // A link to the clone: a later build is what `memgit` runs.
  expect(fs.realpathSync(path.join(prefix, 'bin', 'memgit'))).toBe(fs.realpathSync(CLI_MAIN));
}, 120_000);

const runnable = examples.filter((e) => e.skip === null);
describe.each(DOCUMENTS)('%s', (file) => {
  const mine = runnable.filter((e) => e.file === file);
  for (const [i, example] of mine.entries()) {
    const lastOfChain = !(mine[i + 1]?.continues ?? false);
    test(`${example.name} (line ${example.line})`, () => runExample(example, lastOfChain), COMMAND_TIMEOUT_MS * Math.max(1, example.commands.length) + 40_000);
  }
});
