/**
 * MCP's Streamable HTTP spoken by hand over loopback, for tests that must do what the SDK's client never
 * does (batches, a session id of another key, no event stream) or must see every status and header; and
 * requests whose body never finishes arriving, over a raw HTTP request left open.
 */
import * as http from 'node:http';

export const PROTOCOL_VERSION = '2025-06-18';

export interface RawAnswer {
  status: number;
  headers: Headers;
  /** The JSON-RPC messages of the answer (from its JSON body or its event stream). */
  messages: Array<Record<string, unknown>>;
  text: string;
}

export function mcpUrl(base: string, store: string): string {
  return `${base}/stores/${store}/mcp`;
}

function parseMessages(type: string, text: string): Array<Record<string, unknown>> {
  if (type.startsWith('text/event-stream')) {
    return text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  }
  if (!type.startsWith('application/json') || text === '') return [];
  const parsed = JSON.parse(text) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
}

/** POST one JSON-RPC message (or a batch) and read the whole answer. */
export async function rawPost(url: string, key: string, body: unknown, session?: string): Promise<RawAnswer> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${key}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  };
  if (session) {
    headers['Mcp-Session-Id'] = session;
    headers['Mcp-Protocol-Version'] = PROTOCOL_VERSION;
  }
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, messages: parseMessages(response.headers.get('content-type') ?? '', text), text };
}

export const initializeMessage = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw-test', version: '0.0.1' } },
});

export const toolCallMessage = (id: number | string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'memory', arguments: args },
});

/** initialize + notifications/initialized: the session id, or the failed answer. */
export async function rawInitialize(url: string, key: string): Promise<{ session: string | null; answer: RawAnswer }> {
  const answer = await rawPost(url, key, initializeMessage());
  const session = answer.headers.get('mcp-session-id');
  if (answer.status !== 200 || !session) return { session: null, answer };
  const initialized = await rawPost(url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}: ${initialized.text}`);
  return { session, answer };
}

/** The text of a tools/call result message, and whether it is an error. */
export function toolText(message: Record<string, unknown> | undefined): { text: string; isError: boolean } {
  const result = message?.result as { content?: Array<{ text: string }>; isError?: boolean } | undefined;
  if (!result) return { text: `no result: ${JSON.stringify(message)}`, isError: true };
  return { text: (result.content ?? []).map((c) => c.text).join(''), isError: result.isError === true };
}

export interface UnfinishedRequest {
  /** Resolves with the status and body once the server answers (it may answer before the body is done). */
  answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  /** Send the rest of the body and end the request. */
  finish: (rest?: string) => void;
  abort: () => void;
}

/**
 * A POST whose headers declare `declaredBytes` of body (null: sent chunked, with no length), of which only
 * `sent` is sent: the request stays open until `finish` or `abort`, as a slow or hostile client leaves it.
 */
export function unfinishedPost(url: string, headers: Record<string, string>, declaredBytes: number | null, sent: string): UnfinishedRequest {
  const target = new URL(url);
  const request = http.request({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: 'POST',
    agent: false,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
      ...(declaredBytes === null ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(declaredBytes) }),
    },
  });
  let closedResolve!: () => void;
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    request.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
      response.once('error', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }));
    });
    request.once('error', reject);
  });
  answer.catch(() => undefined);
  request.once('close', () => closedResolve());
  request.on('socket', (socket) => socket.once('close', () => closedResolve()));
  request.flushHeaders();
  if (sent) request.write(sent);
  return {
    answer,
    closed,
    finish: (rest = '') => request.end(rest),
    abort: () => request.destroy(),
  };
}

/** Whether `promise` settles within `ms` (for "not answered yet" checks; never a timing threshold on success). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Poll `check` every 100 ms until it holds or `ms` pass; returns whether it held. */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 30_000): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; ) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}
