/**
 * The OpenAPI contract check: every response a server test receives through `fetch` is validated against
 * docs/openapi.json (its path and method, its status, its content type and its JSON body, with ajv), so
 * the document cannot drift from the code. A test file turns it on by calling `checkResponsesAgainstOpenApi()`
 * at its top level (test/server/spawn-server.ts does, for every test that spawns `memgit server`); a response
 * that does not conform fails the fetch that received it, with what was wrong.
 *
 * In scope: `/healthz`, `/api/...` and `/stores/{store}/mcp` on any host (the audit UI's HTML pages are not
 * part of the API). Event streams are checked for their status and content type only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const DOCUMENT_ID = 'openapi.json';

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, Json>;
}
interface Route {
  template: string;
  pattern: RegExp;
  params: number;
  item: Record<string, Operation | unknown>;
}

export const OPENAPI_PATH = path.join(REPO_ROOT, 'docs', 'openapi.json');

let loaded: { document: Json; routes: Route[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | null = null;

function contract() {
  if (loaded) return loaded;
  const document = JSON.parse(fs.readFileSync(OPENAPI_PATH, 'utf8')) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, DOCUMENT_ID);
  const routes = Object.entries(document.paths as Record<string, Route['item']>).map(([template, item]) => {
    let params = 0;
    // A parameter named `path` takes slashes (a memory file's path); the others one segment.
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
      params++;
      return name === 'path' ? '(.+)' : '([^/]+)';
    });
    return { template, pattern: new RegExp(`^${source}$`), params, item };
  });
  // The most literal template first: /stores/{store}/commits before /stores/{store}/{anything}.
  routes.sort((a, b) => a.params - b.params);
  loaded = { document, routes, ajv, validators: new Map() };
  return loaded;
}

const pointer = (...parts: string[]) => parts.map((p) => `/${p.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

function validatorAt(jsonPointer: string): ValidateFunction {
  const { ajv, validators } = contract();
  let validate = validators.get(jsonPointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${jsonPointer}` });
    validators.set(jsonPointer, validate);
  }
  return validate;
}

function resolve(document: Json, value: Json): { value: Json; at: string | null } {
  const target = value.$ref;
  if (typeof target !== 'string') return { value, at: null };
  const parts = target.replace(/^#\//, '').split('/');
  let node: unknown = document;
  for (const part of parts) node = (node as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return { value: node as Json, at: target.slice(1) };
}

/** Whether the contract covers this path: the API, not the audit UI's pages. */
export function inContract(pathname: string): boolean {
  return pathname === '/healthz' || pathname === '/api' || pathname.startsWith('/api/') || /^\/stores\/[^/]+\/mcp$/.test(pathname);
}

export interface CheckedResponse {
  method: string;
  url: string;
  status: number;
  contentType: string | null;
  /** The body's text, or null when it was not read (an event stream, a HEAD request). */
  body: string | null;
}

/** What is wrong with this response under the document, or null when it conforms (or is out of scope). */
export function contractProblem(response: CheckedResponse): string | null {
  const { document, routes } = contract();
  const url = new URL(response.url);
  const pathname = url.pathname;
  if (!inContract(pathname)) return null;
  const method = response.method.toLowerCase();
  const where = `${response.method} ${pathname} -> ${response.status}`;
  const route = routes.find((r) => r.pattern.test(pathname) && (r.item as Json)[method] !== undefined);
  const mediaType = (response.contentType ?? '').split(';')[0].trim().toLowerCase();
  if (!route) {
    // A path or method the API does not have: only a refusal in one of the documented error forms.
    if (response.status < 400) return `${where}: not in the OpenAPI document (${method.toUpperCase()} ${pathname})`;
    if (response.body === null || method === 'head') return null;
    if (mediaType !== 'application/json') return `${where}: an error answered as ${mediaType || 'no content type'}, not JSON`;
    return schemaProblem(where, response.body, pointer('components', 'responses', 'ReadRefusal', 'content', 'application/json', 'schema'));
  }
  const operation = (route.item as Record<string, Operation>)[method];
  const key = operation.responses[String(response.status)] ? String(response.status) : operation.responses.default ? 'default' : null;
  if (key === null) return `${where}: status ${response.status} is not documented for ${method.toUpperCase()} ${route.template}`;
  const { value: answer, at } = resolve(document, operation.responses[key]);
  const base = at ?? pointer('paths', route.template, method, 'responses', key);
  const content = answer.content as Record<string, Json> | undefined;
  if (!content) return null;
  if (method === 'head' || (response.body === null && mediaType === 'text/event-stream' && content[mediaType])) return null;
  if (!content[mediaType]) return `${where}: content type ${JSON.stringify(mediaType)} is not documented (${Object.keys(content).join(', ')})`;
  if (mediaType !== 'application/json' || response.body === null) return null;
  return schemaProblem(where, response.body, `${base}${pointer('content', mediaType, 'schema')}`);
}

function schemaProblem(where: string, body: string, schemaPointer: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `${where}: the body is not JSON: ${body.slice(0, 200)}`;
  }
  const validate = validatorAt(schemaPointer);
  if (validate(parsed)) return null;
  const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}`).join('; ');
  return `${where}: the body does not conform to ${schemaPointer}: ${errors}\n${body.slice(0, 500)}`;
}

/** Responses checked in this test file so far (the tests of the check itself look at it). */
export const checked: CheckedResponse[] = [];

/**
 * Check every response this test file receives through the global fetch against the document: a
 * non-conforming response makes that fetch throw. Call it at the top level of a test file (or of a helper
 * every such file imports); the original fetch comes back after the file's tests.
 */
export function checkResponsesAgainstOpenApi(): void {
  let original: typeof fetch | null = null;
  beforeAll(() => {
    original = globalThis.fetch;
    const inner = original;
    globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const response = await inner(input, init);
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      if (!inContract(new URL(response.url || String(input instanceof Request ? input.url : input)).pathname)) return response;
      const contentType = response.headers.get('content-type');
      const streaming = (contentType ?? '').startsWith('text/event-stream');
      const body = method === 'HEAD' || streaming ? null : await response.clone().text();
      const seen = { method, url: response.url || String(input), status: response.status, contentType, body };
      checked.push(seen);
      const problem = contractProblem(seen);
      if (problem) throw new Error(`OpenAPI contract (docs/openapi.json): ${problem}`);
      return response;
    };
  });
  afterAll(() => {
    if (original) globalThis.fetch = original;
  });
}
