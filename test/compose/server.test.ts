/**
 * One composition of the multi-store server (src/compose/server.ts): `memgit server` (the built CLI,
 * spawned) and `startMemgitServer` (the package root, in this process) serve the same routes with the same
 * answers. One table of requests — the tool API, the read API, the rollback API, the audit UI, MCP, the
 * refusals of each — runs against both, each on its own copy of one seeded root (same keys, same commits),
 * and every answer is compared: status, content type, the limit headers and the body (JSON whole, with the
 * commits and times a request itself wrote normalised; an HTML page by its title).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { startMemgitServer } from '../../src';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { basicAuth, expectNoUnexpected, makeKey, spawnServer, SpawnedServer } from '../server/spawn-server';

const TOKEN = 'table-operator-token-Zq8vN2xK5mW1rT7y';
const base = makeTempDir('memgit-compose-');
const seeded = path.join(base, 'seeded');
const keys: Record<'writer' | 'reader' | 'operator', { key: string; id: string }> = {} as never;
const seedCommits = new Set<string>();

interface TableRequest {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  auth?: 'writer' | 'reader' | 'operator' | 'basic-reader';
  body?: unknown;
  contentType?: string;
  accept?: string;
}

const view = (id: string) => ({ tool_use: toolUse(id, { command: 'view', path: '/memories' }), session: 'sess_table' });
const create = (id: string, file: string) => ({ tool_use: toolUse(id, { command: 'create', path: file, file_text: 'made by the table\n' }), session: 'sess_table' });
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'table', version: '1' } } };

const TABLE: TableRequest[] = [
  { name: 'health', method: 'GET', path: '/healthz' },
  { name: 'store list (API)', method: 'GET', path: '/api/v1/stores', auth: 'writer' },
  { name: 'read API: commits', method: 'GET', path: '/api/v1/stores/acme-1/commits', auth: 'reader' },
  { name: 'read API: sessions', method: 'GET', path: '/api/v1/stores/acme-1/sessions', auth: 'reader' },
  { name: 'read API: a file', method: 'GET', path: '/api/v1/stores/acme-1/files/notes.md', auth: 'reader' },
  { name: 'read API: a call', method: 'GET', path: '/api/v1/stores/acme-1/calls/toolu_s2', auth: 'reader' },
  { name: 'read API: a missing commit', method: 'GET', path: '/api/v1/stores/acme-1/commits/deadbeef', auth: 'reader' },
  { name: 'read API: a store the key does not match', method: 'GET', path: '/api/v1/stores/beta-1/commits', auth: 'reader' },
  { name: 'read API: no key', method: 'GET', path: '/api/v1/stores/acme-1/commits' },
  { name: 'tool API: a view', method: 'POST', path: '/api/v1/stores/acme-1/tool-calls', auth: 'writer', body: view('toolu_t1') },
  { name: 'tool API: a read key may not write', method: 'POST', path: '/api/v1/stores/acme-1/tool-calls', auth: 'reader', body: create('toolu_t2', '/memories/r.md') },
  { name: 'tool API: a write that creates a store', method: 'POST', path: '/api/v1/stores/acme-2/tool-calls', auth: 'writer', body: create('toolu_t3', '/memories/new.md') },
  { name: 'tool API: not JSON', method: 'POST', path: '/api/v1/stores/acme-1/tool-calls', auth: 'writer', body: 'x', contentType: 'text/plain' },
  { name: 'rollback API: a preview', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: { ref: 'toolu_s2', dryRun: true } },
  { name: 'rollback API: a revert', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: { ref: 'toolu_s2', reason: 'the table' } },
  { name: 'rollback API: nothing left to revert', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: { ref: 'toolu_s2' } },
  { name: 'rollback API: a session', method: 'POST', path: '/api/v1/stores/acme-1/rollback/session', auth: 'operator', body: { session: 'sess_seed', dryRun: true } },
  { name: 'rollback API: an unknown action', method: 'POST', path: '/api/v1/stores/acme-1/rollback/explode', auth: 'operator', body: {} },
  { name: 'rollback API: a missing field', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: {} },
  { name: 'rollback API: an unknown call', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: { ref: 'toolu_nope' } },
  { name: 'rollback API: a bad reason', method: 'POST', path: '/api/v1/stores/acme-1/rollback/restore', auth: 'operator', body: { path: '/memories/notes.md', at: 'toolu_s1', reason: 7 } },
  { name: 'rollback API: a write key may not', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'writer', body: { ref: 'toolu_s1' } },
  { name: 'rollback API: a store that does not exist', method: 'POST', path: '/api/v1/stores/acme-9/rollback/revert', auth: 'operator', body: { ref: 'toolu_s1' } },
  { name: 'rollback API: a body that is no object', method: 'POST', path: '/api/v1/stores/acme-1/rollback/revert', auth: 'operator', body: [1] },
  { name: 'UI: the list of stores', method: 'GET', path: '/', auth: 'basic-reader', accept: 'text/html' },
  { name: 'UI: a store', method: 'GET', path: '/stores/acme-1/', auth: 'basic-reader', accept: 'text/html' },
  { name: 'UI: commits', method: 'GET', path: '/stores/acme-1/commits', auth: 'basic-reader', accept: 'text/html' },
  { name: 'UI: the operator login', method: 'GET', path: '/stores/acme-1/login', auth: 'basic-reader', accept: 'text/html' },
  { name: 'UI: a page as JSON', method: 'GET', path: '/stores/acme-1/api/sessions', auth: 'basic-reader' },
  { name: 'UI: no key', method: 'GET', path: '/stores/acme-1/commits', accept: 'text/html' },
  { name: 'MCP: initialize', method: 'POST', path: '/stores/acme-1/mcp', auth: 'writer', body: initialize, accept: 'application/json, text/event-stream' },
  { name: 'MCP: a read key', method: 'POST', path: '/stores/acme-1/mcp', auth: 'reader', body: initialize, accept: 'application/json, text/event-stream' },
  { name: 'nothing there', method: 'GET', path: '/nope', auth: 'writer' },
];

interface Answer {
  name: string;
  status: number;
  type: string | null;
  headers: Record<string, string | null>;
  body: unknown;
}

/** What the request wrote itself differs between two runs (its commits, its times): normalised; the seed's stays. */
function normalise(text: string): string {
  return text
    .replace(/\b[0-9a-f]{40}\b/g, (oid) => (seedCommits.has(oid) ? oid : '<new commit>'))
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, '<time>')
    .replace(/"(ms|millis|elapsedMs)":\d+(\.\d+)?/g, '"$1":0')
    .replace(/\b(mcp|sess)_\d{8}T\d{6}_[a-z0-9]+\b/g, '<$1 id>');
}

async function runTable(url: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const request of TABLE) {
    const headers: Record<string, string> = {};
    if (request.auth === 'basic-reader') Object.assign(headers, basicAuth(keys.reader.key));
    else if (request.auth) headers.authorization = `Bearer ${keys[request.auth].key}`;
    if (request.accept) headers.accept = request.accept;
    if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'application/json';
    const response = await fetch(`${url}${request.path}`, {
      method: request.method,
      headers,
      redirect: 'manual',
      body: request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body),
    });
    const type = response.headers.get('content-type');
    const text = normalise(await response.text());
    let body: unknown;
    if (type?.startsWith('application/json')) body = JSON.parse(text);
    else if (type?.startsWith('text/html')) body = { title: /<title>([^<]*)<\/title>/.exec(text)?.[1] ?? null, h1: /<h1[^>]*>([^<]*)<\/h1>/.exec(text)?.[1] ?? null };
    else if (type?.startsWith('text/event-stream')) body = text.split('\n').filter((line) => line.startsWith('data:'));
    else body = text;
    const kept = ['retry-after', 'www-authenticate', 'ratelimit-policy', 'cache-control', 'x-content-type-options', 'location'];
    answers.push({ name: request.name, status: response.status, type, headers: Object.fromEntries(kept.map((h) => [h, response.headers.get(h)])), body });
  }
  return answers;
}

let cliAnswers: Answer[];
let libraryAnswers: Answer[];

beforeAll(async () => {
  await ensureBuilt();
  fs.mkdirSync(seeded, { mode: 0o700 });
  keys.writer = await makeKey(seeded, 'acme-*', 'write');
  keys.reader = await makeKey(seeded, 'acme-*', 'read');
  keys.operator = await makeKey(seeded, 'acme-*', 'operator');
  const store = await MemoryStore.open(path.join(seeded, 'acme-1'), QUIET);
  await store.execute(toolUse('toolu_s1', { command: 'create', path: '/memories/notes.md', file_text: 'one\ntwo\n' }), { session: 'sess_seed' });
  await store.execute(toolUse('toolu_s2', { command: 'str_replace', path: '/memories/notes.md', old_str: 'two', new_str: 'TWO' }), { session: 'sess_seed' });
  await store.execute(toolUse('toolu_s3', { command: 'create', path: '/memories/other.md', file_text: 'x\n' }), { session: 'sess_other' });
  for (const entry of store.history.all()) seedCommits.add(entry.commit);
  await store.close();
  // Two copies of one root: same keys, same commits.
  fs.cpSync(seeded, path.join(base, 'cli'), { recursive: true });
  fs.cpSync(seeded, path.join(base, 'library'), { recursive: true });

  let cli: SpawnedServer | undefined;
  try {
    cli = await spawnServer(path.join(base, 'cli'), [], { ...process.env, MEMGIT_TOKEN: TOKEN });
    cliAnswers = await runTable(cli.url);
    expectNoUnexpected(cli);
  } finally {
    await cli?.stop();
  }
  const library = await startMemgitServer({ root: path.join(base, 'library'), port: 0, operatorToken: TOKEN, logger: pino({ level: 'silent' }) });
  try {
    libraryAnswers = await runTable(library.url);
  } finally {
    await library.close();
  }
}, 240_000);

afterAll(() => removeDir(base));

it('startMemgitServer answers every request of the table as memgit server does', () => {
  expect(libraryAnswers.map((a) => a.name)).toEqual(TABLE.map((r) => r.name));
  for (let i = 0; i < TABLE.length; i++) expect(libraryAnswers[i]).toEqual(cliAnswers[i]);
});

it('the table covers the read API, the rollback API, the UI and MCP, and they answer (no 404 where there used to be one)', () => {
  const status = (name: string) => libraryAnswers.find((a) => a.name === name)!.status;
  expect(status('read API: commits')).toBe(200);
  expect(status('read API: a file')).toBe(200);
  expect(status('rollback API: a preview')).toBe(200);
  expect(status('rollback API: a revert')).toBe(201);
  expect(status('UI: commits')).toBe(200);
  expect(status('MCP: initialize')).toBe(200);
  const revert = libraryAnswers.find((a) => a.name === 'rollback API: a revert')!.body as { actor: string; commit: string };
  expect(revert.actor).toBe(`operator:key:${keys.operator.id}`);
  // The refusals of the rollback API keep the shape the UI's rollback API has always answered with.
  expect(libraryAnswers.find((a) => a.name === 'rollback API: an unknown action')!.body).toEqual({ error: 'no rollback action "explode"', status: 404, code: 'unknown_action' });
  expect(libraryAnswers.find((a) => a.name === 'rollback API: a missing field')!.body).toEqual({ error: 'ref is required', status: 400, code: 'invalid_request' });
  expect(libraryAnswers.find((a) => a.name === 'rollback API: a bad reason')!.body).toEqual({ error: 'reason must be text', status: 400, code: 'invalid_request' });
});
