/**
 * The OpenAPI document of memgit server: valid OpenAPI 3.1 (checked by an OpenAPI validator, run as its
 * CLI), kept in docs/openapi.json as src/server/openapi.ts builds it, served at /api/v1/openapi.json, with
 * the records' schemas of docs/records.schema.json and the client's generated types up to date. The check
 * of every response against it (test/support/openapi-contract.ts) is tested here on answers that do and do
 * not conform.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPENAPI_DOCUMENT } from '../../src/server/openapi';
import { RECORD_SCHEMAS } from '../../src/server/openapi-records';
import { makeTempDir, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt, REPO_ROOT } from '../support/dist';
import { checked, contractProblem, OPENAPI_PATH } from '../support/openapi-contract';
import { makeKey, postToolCall, spawnServer, SpawnedServer } from './spawn-server';

const bin = (name: string) => path.join(REPO_ROOT, 'node_modules', '.bin', name);

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for an OpenAPI validator', () => {
    const run = spawnSync(bin('validate-api'), [OPENAPI_PATH], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ valid: true });
    expect(run.status).toBe(0);
  });

  it('is kept in docs/openapi.json exactly as src/server/openapi.ts builds it (npm run openapi)', () => {
    expect(fs.readFileSync(OPENAPI_PATH, 'utf8')).toBe(`${JSON.stringify(OPENAPI_DOCUMENT, null, 2)}\n`);
    expect(OPENAPI_DOCUMENT.openapi).toBe('3.1.0');
  });

  it("carries the records' schemas of docs/records.schema.json (their $defs under the names scripts/openapi.mjs gives them)", () => {
    const names: Record<string, string> = { isoTime: 'IsoTime', commitId: 'CommitId', virtualPath: 'VirtualPath', commit: 'CommitRecord', call: 'CallRecord', session: 'SessionRecord', fileRevision: 'FileRevisionRecord' };
    const records = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'records.schema.json'), 'utf8')) as { $defs: Record<string, unknown> };
    const rewritten = JSON.parse(JSON.stringify(records.$defs).replace(/#\/\$defs\/(\w+)/g, (_m, name: string) => `#/components/schemas/${names[name]}`)) as Record<string, unknown>;
    expect(RECORD_SCHEMAS).toEqual(Object.fromEntries(Object.entries(rewritten).map(([name, def]) => [names[name], def])));
    for (const name of Object.values(names)) expect(OPENAPI_DOCUMENT.components.schemas[name]).toEqual(RECORD_SCHEMAS[name]);
  });

  it("the client's types are generated from it (src/client/openapi-types.ts is up to date)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-openapi-'));
    try {
      const out = path.join(dir, 'types.ts');
      const run = spawnSync(bin('openapi-typescript'), [OPENAPI_PATH, '--output', out], { encoding: 'utf8' });
      expect(run.status).toBe(0);
      expect(fs.readFileSync(path.join(REPO_ROOT, 'src', 'client', 'openapi-types.ts'), 'utf8')).toBe(fs.readFileSync(out, 'utf8'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the contract check', () => {
  const url = 'http://127.0.0.1:1';
  const json = (method: string, p: string, status: number, body: unknown) => ({ method, url: `${url}${p}`, status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) });

  it('passes conforming answers and names what is wrong in the others', () => {
    expect(contractProblem(json('GET', '/api/v1/stores', 200, { stores: ['a'] }))).toBeNull();
    expect(contractProblem(json('GET', '/api/v1/stores', 200, { stores: [1] }))).toMatch(/\/stores\/0 must be string/);
    expect(contractProblem(json('GET', '/api/v1/stores', 418, { stores: [] }))).toMatch(/status 418 is not documented/);
    expect(contractProblem(json('DELETE', '/api/v1/nothing', 200, {}))).toMatch(/not in the OpenAPI document/);
    expect(contractProblem({ ...json('GET', '/healthz', 503, {}), contentType: 'text/html' })).toMatch(/content type "text\/html" is not documented/);
    // A memory file's path takes slashes.
    expect(contractProblem(json('GET', '/api/v1/stores/a/files/x/y.md', 404, { error: 'no file', status: 404, code: 'path_not_found' }))).toBeNull();
    // The audit UI's pages are not the API.
    expect(contractProblem({ ...json('GET', '/stores/a/commits', 200, null), contentType: 'text/html' })).toBeNull();
  });
});

describe('memgit server serves it', () => {
  let dir: string;
  let server: SpawnedServer;
  beforeAll(async () => {
    ensureBuilt();
    dir = makeTempDir('memgit-openapi-');
    server = await spawnServer(path.join(dir, 'root'));
  });
  afterAll(async () => {
    await server?.stop();
    removeDir(dir);
  });

  it('at GET /api/v1/openapi.json, without a key, and the answers it documents conform to it', async () => {
    const before = checked.length;
    const response = await fetch(`${server.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(fs.readFileSync(OPENAPI_PATH, 'utf8')));
    const { key } = await makeKey(path.join(dir, 'root'), '*', 'write');
    const call = await postToolCall(server.url, 'acme-1', key, { tool_use: toolUse('toolu_01', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), session: 'sess_1' });
    expect(call.status).toBe(200);
    expect((await fetch(`${server.url}/api/v1/stores/acme-1/files/a.md`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    // Each of those answers went through the check (the helper that spawn-server.ts turns on).
    expect(checked.slice(before).map((c) => `${c.method} ${new URL(c.url).pathname} ${c.status}`)).toEqual([
      'GET /api/v1/openapi.json 200',
      'POST /api/v1/stores/acme-1/tool-calls 200',
      'GET /api/v1/stores/acme-1/files/a.md 200',
    ]);
  });
});
