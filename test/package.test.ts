/**
 * The package as a user installs it: `npm pack`, the tarball unpacked into a temporary app's node_modules
 * (its dependencies linked from this checkout's node_modules, as an installed tree would hold them: no
 * network), then used from an ES module and from a CommonJS script.
 *
 * The contract's vectors run through the official SDK's tool runner talking HTTP to the scripted Messages
 * API server; the tool_result texts the server receives must be the contract's, byte for byte, in both
 * module systems (the SDK's ToolError exists once per module system: the dual-package hazard), for a local
 * store's tool (store.memoryTool) and for a remote one (createHttpMemoryTool against a spawned memgit server).
 * Every name the README and the guides show is importable both ways.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lastToolResults, ScriptedServer, ScriptStep } from '../src/agent/scripted-server';
import { loadVectors, makeTempDir, removeDir } from './store/git-helpers';
import { ensureBuilt, REPO_ROOT } from './support/dist';
import { makeKey, spawnServer, SpawnedServer } from './server/spawn-server';

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

/**
 * The same loop with a remote store: each vector in a fresh store of a spawned memgit server, its setup
 * through httpToolCaller, its input through the runner with createHttpMemoryTool.
 */
const HTTP_VECTOR_LOOP = `
const { baseURL, server, key, prefix, vectors } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const client = new Anthropic({ baseURL, apiKey: 'sk-ant-test-not-a-real-key', maxRetries: 0 });
for (const [index, vector] of vectors.entries()) {
  const options = { url: server, key, store: prefix + index, session: ${JSON.stringify(SESSION)}, retries: 0 };
  const call = httpToolCaller(options);
  for (const [step, input] of vector.setup.entries()) {
    await call({ type: 'tool_use', id: 'toolu_setup_' + step, name: 'memory', input });
  }
  await client.beta.messages.toolRunner({
    model: 'claude-test',
    max_tokens: 64,
    messages: [{ role: 'user', content: vector.name }],
    tools: [createHttpMemoryTool(options)],
  });
}
console.log('done');
`;

const HTTP_APPS = {
  esm: {
    file: 'http-vectors.mjs',
    source: `import Anthropic from '@anthropic-ai/sdk';\nimport { createHttpMemoryTool, httpToolCaller } from 'memgit';\nimport * as fs from 'node:fs';\n${HTTP_VECTOR_LOOP}`,
  },
  cjs: {
    file: 'http-vectors.cjs',
    source: `const Anthropic = require('@anthropic-ai/sdk');\nconst { createHttpMemoryTool, httpToolCaller } = require('memgit');\nconst fs = require('node:fs');\n(async () => {${HTTP_VECTOR_LOOP}})().catch((error) => { console.error(error); process.exit(1); });\n`,
  },
};

/** Script the vectors' turns, run the app, and check every tool_result the SDK sent back is the contract's. */
async function expectContractThroughRunner(
  run: (baseURL: string) => Promise<{ status: number | null; stdout: string; stderr: string }>,
  cases: typeof vectors,
): Promise<void> {
  const steps: ScriptStep[] = [];
  cases.forEach((vector, index) => {
    steps.push({ content: [{ type: 'tool_use', id: `toolu_vector_${index}`, name: 'memory', input: vector.input }] });
    steps.push({ content: [{ type: 'text', text: 'noted' }] });
  });
  const server = await ScriptedServer.start(steps);
  try {
    const result = await run(server.url);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('done\n');
    expect(result.status).toBe(0);
    const requests = server.messageRequests;
    expect(requests).toHaveLength(2 * cases.length);
    cases.forEach((vector, index) => {
      const expected = {
        type: 'tool_result',
        tool_use_id: `toolu_vector_${index}`,
        content: vector.expect.text,
        ...(vector.expect.is_error ? { is_error: true } : {}),
      };
      expect({ vector: vector.name, results: lastToolResults(requests[2 * index + 1].body!) }).toEqual({ vector: vector.name, results: [expected] });
    });
    // The error vectors are the point: from ESM they used to arrive as `Error: Error: …`.
    expect(cases.filter((v) => v.expect.is_error).length).toBeGreaterThanOrEqual(40);
    expect(new Set(cases.filter((v) => !v.expect.is_error).map((v) => v.input.command)).size).toBe(6);
  } finally {
    await server.close();
  }
}

describe.each(Object.entries(APPS))('the contract through the SDK tool runner, from %s', (kind, { file, source }) => {
  it('sends every vector’s exact tool_result text, errors flagged', async () => {
    await expectContractThroughRunner(async (baseURL) => {
      const work = path.join(root, `stores-${kind}`);
      const input = path.join(root, `vectors-${kind}.json`);
      fs.writeFileSync(input, JSON.stringify({ baseURL, work, vectors }));
      return runApp(writeApp(file, source), [input]);
    }, vectors);
  }, 120_000);
});

describe('createHttpMemoryTool through the SDK tool runner', () => {
  let server: SpawnedServer;
  let key: string;
  let serverRoot: string;
  /** The vectors a server's store can run (its stores take the default options). */
  const httpVectors = vectors.filter((vector) => vector.options === undefined);

  beforeAll(async () => {
    serverRoot = path.join(root, 'server-root');
    fs.mkdirSync(serverRoot);
    key = (await makeKey(serverRoot, 'pkg-*', 'write')).key;
    server = await spawnServer(serverRoot);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it.each(Object.entries(HTTP_APPS))('from %s: every vector’s exact tool_result text, errors flagged', async (kind, { file, source }) => {
    await expectContractThroughRunner(async (baseURL) => {
      const input = path.join(root, `http-vectors-${kind}.json`);
      fs.writeFileSync(input, JSON.stringify({ baseURL, server: server.url, key, prefix: `pkg-${kind}-`, vectors: httpVectors }));
      return runApp(writeApp(file, source), [input]);
    }, httpVectors);
  }, 180_000);
});

/** Names of the SDK and of JavaScript that the docs mention as errors callers may see; not memgit's. */
const NOT_MEMGIT = new Set(['ToolError', 'TypeError', 'RangeError', 'SyntaxError']);

/** Guides of another package, whose names are not the npm package's: the Python package (clients/python). */
const OTHER_PACKAGES_GUIDES = new Set(['python.md']);

/**
 * What the README and the guides (docs/) name as memgit's API: the names in their `import { … } from
 * 'memgit'` and `require('memgit')` lines, every `…Error` class they mention, and the functions and classes
 * they describe in prose (listed here: prose has no marker to find them by).
 */
function documentedNames(): string[] {
  const files = [path.join(REPO_ROOT, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
      else if (entry.name.endsWith('.md') && !OTHER_PACKAGES_GUIDES.has(entry.name)) files.push(path.join(dir, entry.name));
    }
  };
  walk(path.join(REPO_ROOT, 'docs'));
  const names = new Set([
    'MemoryStore',
    'newSessionId',
    'startServer',
    'createApp',
    'rollbackRoutes',
    'startMemgitServer',
    'createKey',
    'listKeys',
    'revokeKey',
    'StoreRegistry',
    'createHttpMemoryTool',
    'httpToolCaller',
    'createMcpHttpHandler',
    'importMemoryDir',
    'ChatSession',
  ]);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const lists = [
      ...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*['"]memgit['"]/g),
      ...text.matchAll(/\{([^}]*)\}\s*=\s*require\(\s*['"]memgit['"]\s*\)/g),
    ];
    for (const [, list] of lists) {
      for (const item of list.split(',')) {
        const name = item.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0].trim();
        if (/^[A-Za-z_$][\w$]*$/.test(name) && !item.trim().startsWith('type ')) names.add(name);
      }
    }
    for (const [, name] of text.matchAll(/`([A-Z][A-Za-z]*Error)`/g)) if (!NOT_MEMGIT.has(name)) names.add(name);
  }
  return [...names].sort();
}

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

  it('exports every name the README and the guides show, to ESM and CommonJS alike', async () => {
    const names = documentedNames();
    // The names issue 24 found missing are among them (the scan below must keep finding such names).
    expect(names).toEqual(expect.arrayContaining(['createMcpHttpHandler', 'PointNotFoundError', 'AmbiguousPointError', 'InvalidPointError', 'PathNotFoundError', 'ReadOnlyStoreError']));
    const run = await runApp(
      writeApp(
        'documented.mjs',
        `import { createRequire } from 'node:module';
         import * as esm from 'memgit';
         const cjs = createRequire(import.meta.url)('memgit');
         const names = JSON.parse(process.argv[2]);
         console.log(JSON.stringify(Object.fromEntries(names.map((name) => [name, [typeof esm[name], typeof cjs[name]]]))));`,
      ),
      [JSON.stringify(names)],
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(Object.fromEntries(names.map((name) => [name, ['function', 'function']])));
  });

  it('the errors a caller branches on are memgit’s own classes, one copy for both module systems', async () => {
    const run = await runApp(
      writeApp(
        'errors.mjs',
        `import { createRequire } from 'node:module';
         import * as esm from 'memgit';
         const cjs = createRequire(import.meta.url)('memgit');
         const errors = Object.keys(cjs).filter((name) => name.endsWith('Error'));
         console.log(JSON.stringify(errors.map((name) => [name, esm[name] === cjs[name], cjs[name].prototype instanceof Error])));`,
      ),
    );
    expect(run.stderr).toBe('');
    const errors = JSON.parse(run.stdout) as Array<[string, boolean, boolean]>;
    expect(errors.length).toBeGreaterThanOrEqual(20);
    expect(errors.filter(([, same, isError]) => !same || !isError)).toEqual([]);
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
