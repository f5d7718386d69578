/**
 * The package as a user installs it: `npm pack`, the tarball unpacked into a temporary app's node_modules
 * (its dependencies linked from this checkout's node_modules, as an installed tree would hold them: no
 * network), then used from an ES module and from a CommonJS script.
 *
 * The contract's vectors run through the official SDK's tool runner talking HTTP to the scripted Messages
 * API server; the tool_result texts the server receives must be the contract's, byte for byte, in both
 * module systems (the SDK's ToolError exists once per module system: the dual-package hazard).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lastToolResults, ScriptedServer, ScriptStep } from '../src/agent/scripted-server';
import { loadVectors, makeTempDir, removeDir } from './store/git-helpers';
import { ensureBuilt, REPO_ROOT } from './support/dist';

const SESSION = 'sess_package';
/** The contract's error vectors (the texts the hazard garbled), and one success per command. */
const vectors = loadVectors().filter(
  (vector, index, all) => vector.expect.is_error || all.findIndex((v) => !v.expect.is_error && v.input.command === vector.input.command) === index,
);

let app: string;

/** Pack the built package and unpack it as node_modules/memgit of a fresh app. */
function installTarball(into: string): void {
  const packDir = path.join(into, 'pack');
  fs.mkdirSync(packDir);
  // dist/ is already built (ensureBuilt); --ignore-scripts skips `prepare`'s second compile.
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], { cwd: REPO_ROOT, encoding: 'utf8' });
  expect(pack.status).toBe(0);
  const [{ filename }] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
  const modules = path.join(into, 'app', 'node_modules');
  fs.mkdirSync(path.join(modules, 'memgit'), { recursive: true });
  const untar = spawnSync('tar', ['-xzf', path.join(packDir, filename), '-C', path.join(modules, 'memgit'), '--strip-components=1']);
  expect(untar.status).toBe(0);
  for (const name of fs.readdirSync(path.join(REPO_ROOT, 'node_modules'))) {
    if (name.startsWith('.')) continue;
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', name), path.join(modules, name));
  }
  fs.writeFileSync(path.join(into, 'app', 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
}

/** Run a script of the app with node (asynchronously: the scripted server answers from this process). */
function runApp(file: string, args: string[] = []): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, ...args], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function writeApp(name: string, source: string): string {
  const file = path.join(app, name);
  fs.writeFileSync(file, source);
  return file;
}

let root: string;

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('memgit-package-');
  installTarball(root);
  app = path.join(root, 'app');
}, 120_000);

afterAll(() => removeDir(root));

/** The runner loop of an app: every vector in a fresh store, its setup through execute, its input through the runner. */
const VECTOR_LOOP = `
const { baseURL, work, vectors } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const client = new Anthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key', maxRetries: 0 });
for (const [index, vector] of vectors.entries()) {
  const store = await MemoryStore.open(path.join(work, String(index)), { ...vector.options, fsync: false, log: () => {} });
  for (const [step, input] of vector.setup.entries()) {
    await store.execute({ type: 'tool_use', id: 'toolu_setup_' + step, name: 'memory', input }, { session: ${JSON.stringify(SESSION)} });
  }
  await client.beta.messages.toolRunner({
    model: 'claude-test',
    max_tokens: 64,
    messages: [{ role: 'user', content: vector.name }],
    tools: [store.memoryTool({ session: ${JSON.stringify(SESSION)} })],
  });
  await store.close();
}
console.log('done');
`;

const APPS = {
  esm: {
    file: 'vectors.mjs',
    source: `import Anthropic from '@anthropic-ai/sdk';\nimport { MemoryStore } from 'memgit';\nimport * as fs from 'node:fs';\nimport * as path from 'node:path';\n${VECTOR_LOOP}`,
  },
  cjs: {
    file: 'vectors.cjs',
    source: `const Anthropic = require('@anthropic-ai/sdk');\nconst { MemoryStore } = require('memgit');\nconst fs = require('node:fs');\nconst path = require('node:path');\n(async () => {${VECTOR_LOOP}})().catch((error) => { console.error(error); process.exit(1); });\n`,
  },
};

describe.each(Object.entries(APPS))('the contract through the SDK tool runner, from %s', (kind, { file, source }) => {
  it('sends every vector’s exact tool_result text, errors flagged', async () => {
    const steps: ScriptStep[] = [];
    vectors.forEach((vector, index) => {
      steps.push({ content: [{ type: 'tool_use', id: `toolu_vector_${index}`, name: 'memory', input: vector.input }] });
      steps.push({ content: [{ type: 'text', text: 'noted' }] });
    });
    const server = await ScriptedServer.start(steps);
    try {
      const work = path.join(root, `stores-${kind}`);
      const input = path.join(root, `vectors-${kind}.json`);
      fs.writeFileSync(input, JSON.stringify({ baseURL: server.url, work, vectors }));
      const run = await runApp(writeApp(file, source), [input]);
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe('done\n');
      expect(run.status).toBe(0);
      const requests = server.messageRequests;
      expect(requests).toHaveLength(2 * vectors.length);
      vectors.forEach((vector, index) => {
        const expected = {
          type: 'tool_result',
          tool_use_id: `toolu_vector_${index}`,
          content: vector.expect.text,
          ...(vector.expect.is_error ? { is_error: true } : {}),
        };
        expect({ vector: vector.name, results: lastToolResults(requests[2 * index + 1].body!) }).toEqual({ vector: vector.name, results: [expected] });
      });
      // The error vectors are the point: from ESM they used to arrive as `Error: Error: …`.
      expect(vectors.filter((v) => v.expect.is_error).length).toBeGreaterThanOrEqual(40);
      expect(new Set(vectors.filter((v) => !v.expect.is_error).map((v) => v.input.command)).size).toBe(6);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('the package root is the whole public API', () => {
  const probe = (importLine: string) => `
    const store = await MemoryStore.open(process.argv[2], { log: () => {} });
    const server = await startServer({ store, port: 0 });
    const overview = await fetch(server.url + '/api');
    const app = createApp({ store });
    await server.close();
    await store.close();
    console.log(JSON.stringify({ status: overview.status, app: typeof app.listen, tool: store.memoryTool({ session: 'sess_x' }, { cache_control: { type: 'ephemeral' } }).cache_control }));
  `;

  it.each([
    ['esm', 'api.mjs', `import { MemoryStore, startServer, createApp } from 'memgit';\n`, (body: string) => body],
    ['cjs', 'api.cjs', `const { MemoryStore, startServer, createApp } = require('memgit');\n`, (body: string) => `(async () => {${body}})();`],
  ])('from %s: startServer and createApp are importable and serve the store', async (_kind, file, header, wrap) => {
    const store = path.join(root, `api-store-${file}`);
    const run = await runApp(writeApp(file, header + wrap(probe(header))), [store]);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ status: 200, app: 'function', tool: { type: 'ephemeral' } });
  });

  it('shares one copy of every class between ESM and CommonJS, and exposes no deep paths', async () => {
    const run = await runApp(
      writeApp(
        'shared.mjs',
        `import { createRequire } from 'node:module';
         import * as esm from 'memgit';
         const require = createRequire(import.meta.url);
         const cjs = require('memgit');
         const names = Object.keys(cjs).sort();
         const deep = [];
         for (const specifier of ['memgit/dist/src/web/server.js', 'memgit/dist/src/store/memory-store']) {
           try { require(specifier); deep.push('resolved ' + specifier); } catch (error) { deep.push(error.code); }
           await import(specifier).then(() => deep.push('imported ' + specifier), (error) => deep.push(error.code));
         }
         console.log(JSON.stringify({
           sameNames: JSON.stringify(Object.keys(esm).filter((n) => n !== 'default' && n !== '__esModule').sort()) === JSON.stringify(names),
           sameErrors: esm.MemgitError === cjs.MemgitError && esm.NotAStoreError === cjs.NotAStoreError,
           esmStoreIsAStore: esm.MemoryStore.prototype instanceof cjs.MemoryStore,
           names,
           deep,
         }));`,
      ),
    );
    expect(run.stderr).toBe('');
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ sameNames: true, sameErrors: true, esmStoreIsAStore: true });
    expect(result.names).toEqual(expect.arrayContaining(['MemoryStore', 'startServer', 'createApp', 'rollbackRoutes', 'newSessionId', 'MemgitError']));
    expect(result.deep).toEqual(Array(4).fill('ERR_PACKAGE_PATH_NOT_EXPORTED'));
  });
});
