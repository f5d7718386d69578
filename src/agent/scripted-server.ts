import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small stand-in for the Messages API: it answers `POST /v1/messages` with assistant turns given in
 * advance, as plain JSON or as a server-sent event stream (`"stream": true`) in the wire format of the real
 * API, so the official SDK parses it exactly as it parses Claude. It records every request, so tests can
 * assert what the SDK really sent. The demo replays its bundled transcript through it, which is why it
 * lives in src/ rather than test/.
 *
 * It listens on 127.0.0.1 only and never calls out.
 */

/** A content block of a scripted assistant turn. */
export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | ScriptedCompactionBlock;

/**
 * A `compaction` block (server-side compaction, beta `compact-2026-01-12`): the summary that replaced older
 * context (`content`, null when the compaction failed), opaque `encrypted_content`, a `signature`, and any
 * other field, which a client must send back unchanged. Streamed as `content_block_start` with every field
 * but `content` and `encrypted_content`, then one `compaction_delta` that carries those two.
 */
export interface ScriptedCompactionBlock {
  type: 'compaction';
  content: string | null;
  encrypted_content?: string | null;
  signature?: string | null;
  [field: string]: unknown;
}

/** One entry of `context_management.applied_edits`, e.g. `{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: 12000 }`. */
export interface ScriptedAppliedEdit {
  type: string;
  [field: string]: unknown;
}

/** The tool_result a request is expected to carry, as recorded (compared field by field, content byte for byte). */
export interface RecordedToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

/** One assistant turn. `stop_reason` defaults to `tool_use` when a tool_use block is present, else `end_turn`. */
export interface ScriptedReply {
  content: ScriptedBlock[];
  stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens';
  /**
   * The tool_results the request answering the previous turn must end with. A request that differs gets a
   * 400 naming the first difference, so a replay that drifts from its recording fails loudly.
   */
  expectToolResults?: RecordedToolResult[];
  /**
   * The context edits the API reports having applied to this request: `context_management.applied_edits`
   * of the message (in a stream, of the `message_delta` event).
   */
  appliedEdits?: ScriptedAppliedEdit[];
  /** The message's `id` (default `msg_scripted_NNNN`): a responder that holds threads names the replies it keeps. */
  id?: string;
}

/**
 * An API error answer. A `sticky` error answers this request and every later one (an outage, a revoked key).
 * `midStream` sends it, to a streaming request, as an `error` event after the stream has begun (status 200),
 * as the real API does when it is overloaded mid-reply; the SDK does not retry those.
 */
export interface ScriptedError {
  error: { status: number; type: string; message: string };
  sticky?: boolean;
  midStream?: boolean;
}

export type ScriptStep = ScriptedReply | ScriptedError;

/** Computes the reply to a request from the request itself (see `respondWith`). */
export type Responder = (request: MessagesRequestBody) => ScriptStep;

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: string;
  /** The parsed body (null when it was not JSON). */
  body: MessagesRequestBody | null;
}

/** The parts of a Messages request the server looks at; everything else is kept in `raw`. */
export interface MessagesRequestBody {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
  tools?: unknown[];
  context_management?: unknown;
  [key: string]: unknown;
}

export interface ScriptedServerOptions {
  /** Milliseconds between streamed events (default 0), to make a replay look like live typing. */
  eventDelayMs?: number;
  /** Characters per text_delta / input_json_delta chunk (default 24). */
  chunkSize?: number;
  /** Called with each scripted reply as it is served, before it is sent (the demo dates its calls by it). */
  onReply?: (reply: ScriptedReply) => void;
}

export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  private readonly steps: ScriptStep[];
  private readonly options: Required<Omit<ScriptedServerOptions, 'onReply'>>;
  private readonly onReply: ((reply: ScriptedReply) => void) | undefined;
  private server: http.Server | null = null;
  private stickyError: ScriptedError | null = null;
  private messageCount = 0;
  private port = 0;
  private host = '127.0.0.1';
  private responder: Responder | null = null;
  private recording = true;

  private constructor(steps: ScriptStep[], options: ScriptedServerOptions) {
    this.steps = [...steps];
    this.options = { eventDelayMs: options.eventDelayMs ?? 0, chunkSize: options.chunkSize ?? 24 };
    this.onReply = options.onReply;
  }

  /** Start a server on 127.0.0.1 (or another loopback `address.host`) at a free port (or `address.port`). */
  static async start(steps: ScriptStep[] = [], options: ScriptedServerOptions = {}, address: { host?: string; port?: number } = {}): Promise<ScriptedServer> {
    const scripted = new ScriptedServer(steps, options);
    scripted.host = address.host ?? '127.0.0.1';
    const server = http.createServer((req, res) => {
      scripted.handle(req, res).catch((error: Error) => {
        if (!res.headersSent) sendJson(res, 500, apiError('api_error', `scripted server: ${error.message}`));
        else res.destroy(error);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.port ?? 0, scripted.host, () => resolve());
    });
    scripted.server = server;
    scripted.port = (server.address() as AddressInfo).port;
    return scripted;
  }

  /** The base URL to give the SDK (`ANTHROPIC_BASE_URL` / `baseURL`). */
  get url(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  /**
   * Answer every request the script has no step left for with `responder(request)`: a conversation computed
   * from what the client sent (the sandbox's), instead of a 500.
   */
  respondWith(responder: Responder): void {
    this.responder = responder;
  }

  /** Stop keeping requests (`requests` stays empty): a long-running server must not grow with its traffic. */
  stopRecording(): void {
    this.recording = false;
    this.requests.length = 0;
  }

  /** Append steps to the script. */
  push(...steps: ScriptStep[]): void {
    this.steps.push(...steps);
  }

  /** How many scripted steps have not been used yet. */
  get remaining(): number {
    return this.steps.length;
  }

  /** The recorded requests to /v1/messages (retries included), in arrival order. */
  get messageRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.url.split('?')[0] === '/v1/messages');
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: MessagesRequestBody | null = null;
    try {
      body = JSON.parse(raw) as MessagesRequestBody;
    } catch {
      body = null;
    }
    if (this.recording) this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body });

    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/messages') {
      sendJson(res, 404, apiError('not_found_error', `scripted server: no route for ${req.method} ${req.url}`));
      return;
    }
    if (!body || typeof body !== 'object') {
      sendJson(res, 400, apiError('invalid_request_error', 'scripted server: the body is not a JSON object'));
      return;
    }
    const step = this.stickyError ?? this.steps.shift() ?? this.responder?.(body);
    if (!step) {
      sendJson(res, 500, apiError('api_error', 'scripted server: the script has no reply left for this request'));
      return;
    }
    if ('error' in step) {
      if (step.sticky) this.stickyError = step;
      if (step.midStream && body.stream === true) {
        this.sendStreamError(res, body, step);
        return;
      }
      // A short retry-after-ms makes the SDK's retries of 429/5xx quick (it ignores 0), so error tests stay fast.
      sendJson(res, step.error.status, apiError(step.error.type, step.error.message), { 'retry-after-ms': '1' });
      return;
    }
    const mismatch = step.expectToolResults ? toolResultMismatch(body, step.expectToolResults) : null;
    if (mismatch) {
      sendJson(res, 400, apiError('invalid_request_error', `scripted server: ${mismatch}`));
      return;
    }
    this.onReply?.(step);
    const message = this.toMessage(step, body);
    if (body.stream === true) await this.sendStream(res, message);
    else sendJson(res, 200, message);
  }

  private toMessage(step: ScriptedReply, body: MessagesRequestBody): AssistantMessage {
    this.messageCount += 1;
    const hasToolUse = step.content.some((b) => b.type === 'tool_use');
    const outputTokens = Math.max(1, Math.ceil(JSON.stringify(step.content).length / 4));
    return {
      id: step.id ?? `msg_scripted_${String(this.messageCount).padStart(4, '0')}`,
      type: 'message',
      role: 'assistant',
      model: typeof body.model === 'string' ? body.model : 'scripted',
      content: step.content.map((block) => structuredClone(block)),
      stop_reason: step.stop_reason ?? (hasToolUse ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: { input_tokens: Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4)), output_tokens: outputTokens },
      ...(step.appliedEdits ? { context_management: { applied_edits: step.appliedEdits.map((edit) => ({ ...edit })) } } : {}),
    };
  }

  /** A stream that starts a reply and then fails with an `error` event. */
  private sendStreamError(res: http.ServerResponse, body: MessagesRequestBody, step: ScriptedError): void {
    const message = this.toMessage({ content: [] }, body);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { ...message, stop_reason: null } })}\n\n`);
    res.write(`event: error\ndata: ${JSON.stringify(apiError(step.error.type, step.error.message))}\n\n`);
    res.end();
  }

  /** The event sequence of the streaming Messages API. */
  private async sendStream(res: http.ServerResponse, message: AssistantMessage): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': `req_scripted_${message.id.slice(-4)}`,
    });
    const send = async (event: string, data: object) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      if (this.options.eventDelayMs > 0) await sleep(this.options.eventDelayMs);
    };
    await send('message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
    });
    await send('ping', { type: 'ping' });
    for (const [index, block] of message.content.entries()) {
      if (block.type === 'text') {
        await send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        for (const text of chunks(block.text, this.options.chunkSize)) {
          await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
        }
      } else if (block.type === 'compaction') {
        const { content, encrypted_content, ...start } = block;
        await send('content_block_start', { type: 'content_block_start', index, content_block: { ...start, content: null } });
        const delta: Record<string, unknown> = { type: 'compaction_delta', content };
        if (encrypted_content !== undefined) delta.encrypted_content = encrypted_content;
        await send('content_block_delta', { type: 'content_block_delta', index, delta });
      } else {
        await send('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        for (const partial_json of chunks(JSON.stringify(block.input), this.options.chunkSize)) {
          await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
        }
      }
      await send('content_block_stop', { type: 'content_block_stop', index });
    }
    await send('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
      ...(message.context_management ? { context_management: message.context_management } : {}),
    });
    await send('message_stop', { type: 'message_stop' });
    res.end();
  }
}

interface AssistantMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ScriptedBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number };
  context_management?: { applied_edits: ScriptedAppliedEdit[] };
}

/** The tool_result blocks at the end of a request: the content of its last message when that is a user turn. */
export function lastToolResults(body: MessagesRequestBody): Array<Record<string, unknown>> {
  const last = body.messages?.at(-1);
  if (!last || last.role !== 'user' || !Array.isArray(last.content)) return [];
  return last.content.filter((block) => block.type === 'tool_result');
}

function toolResultMismatch(body: MessagesRequestBody, expected: RecordedToolResult[]): string | null {
  const received = lastToolResults(body);
  if (received.length !== expected.length) {
    return `expected ${expected.length} tool_result block(s), received ${received.length}`;
  }
  for (const [i, want] of expected.entries()) {
    const got = received[i];
    const differs = (['tool_use_id', 'content', 'is_error'] as const).find((key) => got[key] !== want[key]);
    if (differs) {
      return `tool_result ${i} (${want.tool_use_id}) differs from the recording in ${differs}: ` +
        `expected ${JSON.stringify(want[differs])}, received ${JSON.stringify(got[differs])}`;
    }
  }
  return null;
}

function apiError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

function sendJson(res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Split text into chunks of code points, never inside a surrogate pair. */
function chunks(text: string, size: number): string[] {
  const points = [...text];
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
