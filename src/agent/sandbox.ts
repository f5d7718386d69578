import { randomBytes } from 'node:crypto';
import { lastToolResults, MessagesRequestBody, Responder, ScriptedReply, ScriptedServer } from './scripted-server';

/**
 * The sandbox: the scripted Messages API with a conversation that answers any conversation, so that
 * `memgit chat`, the TypeScript SDK's tool runner and the Python package run end to end without an API key.
 * Each user message gets the same small, real use of the memory tool, decided from the request alone (the
 * server keeps no state between requests):
 *
 *   1. view /memories;
 *   2. note the user's message in /memories/notes.md: `create` it, or, when the listing shows it, `insert`
 *      the note under its first line (newest first);
 *   3. answer in text, naming the file.
 *
 * A failed memory call is answered in text with its error. A request that offers no memory tool is answered
 * in text. Tool_use ids are fresh random ids shaped like the API's, so every write is a new commit.
 *
 * Message threads (`thread: {type: 'create'}`, then `{type: 'continue', previous_message_id}` with only the
 * new messages, as the TypeScript SDK's tool runner sends by default) are held as the API holds them: the
 * conversation up to each reply, under the reply's id, for the latest MAX_THREADS replies.
 */

export const SANDBOX_NOTES = '/memories/notes.md';
export const SANDBOX_HEADING = '# Notes';
const NOTE_CHARS = 200;
const SIGNATURE = "(memgit sandbox: a scripted stand-in for Claude; nothing left this machine.)";

/** Replies whose conversation the sandbox keeps for a thread to continue from (the oldest is dropped first). */
export const MAX_THREADS = 256;

/** A fresh id shaped like the API's: `toolu_01` and 22 base62 characters. */
export function newToolUseId(): string {
  return `toolu_01${randomBase62(22)}`;
}

function randomBase62(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
}

interface HeldConversation {
  system: unknown;
  tools: unknown[] | undefined;
  messages: NonNullable<MessagesRequestBody['messages']>;
}

/** The sandbox's responder: `sandboxReply` for each request, with the message threads it holds. */
export function sandboxResponder(maxThreads = MAX_THREADS): Responder {
  const threads = new Map<string, HeldConversation>();
  return (body) => {
    const thread = typeof body.thread === 'object' && body.thread !== null ? (body.thread as { type?: unknown; previous_message_id?: unknown }) : null;
    let conversation: MessagesRequestBody = body;
    if (thread?.type === 'continue') {
      const previous = String(thread.previous_message_id);
      const held = threads.get(previous);
      if (!held) {
        return {
          error: {
            status: 404,
            type: 'not_found_error',
            message: `the sandbox holds no thread with message ${JSON.stringify(previous.slice(0, 100))} (it keeps the latest ${maxThreads} replies, none across restarts)`,
          },
        };
      }
      threads.delete(previous); // and set again below, as the most recently used
      threads.set(previous, held);
      conversation = { ...body, system: body.system ?? held.system, tools: body.tools ?? held.tools, messages: [...held.messages, ...(body.messages ?? [])] };
    }
    const reply: ScriptedReply = { ...sandboxReply(conversation), id: `msg_01${randomBase62(22)}` };
    if (thread) {
      const messages = [...(conversation.messages ?? []), { role: 'assistant', content: reply.content as unknown as Array<Record<string, unknown>> }];
      threads.set(reply.id!, { system: conversation.system, tools: conversation.tools, messages });
      while (threads.size > maxThreads) threads.delete(threads.keys().next().value!);
    }
    return reply;
  };
}

type Block = Record<string, unknown>;

/** The sandbox's reply to one Messages API request. */
export function sandboxReply(body: MessagesRequestBody, newId: () => string = newToolUseId): ScriptedReply {
  if (!offersMemoryTool(body)) {
    return text("This is memgit's sandbox: it only plays conversations that use the memory tool, and this request offers none. " + SIGNATURE);
  }
  const results = lastToolResults(body);
  if (results.length === 0) {
    return { content: [{ type: 'text', text: 'Let me check my memory first.' }, memoryCall(newId(), { command: 'view', path: '/memories' })] };
  }
  const result = results[results.length - 1];
  const asked = toolUseAnswered(body, String(result.tool_use_id));
  const content = resultText(result.content);
  if (result.is_error === true) return text(`The memory call failed: ${oneLine(content, NOTE_CHARS)} ${SIGNATURE}`);
  const note = noteOf(body);
  if (asked?.command === 'view' && asked.path === '/memories') {
    if (listsNotes(content)) {
      return { content: [memoryCall(newId(), { command: 'insert', path: SANDBOX_NOTES, insert_line: 1, insert_text: `- ${note}\n` })] };
    }
    return { content: [memoryCall(newId(), { command: 'create', path: SANDBOX_NOTES, file_text: `${SANDBOX_HEADING}\n- ${note}\n` })] };
  }
  if (asked?.command === 'create' || asked?.command === 'insert') {
    return text(`Noted in ${SANDBOX_NOTES}: “${note}” ${SIGNATURE}`);
  }
  return text(`Done. ${SIGNATURE}`);
}

/** Serve the sandbox on `host:port` (loopback only), keeping no request in memory. */
export async function startSandbox(address: { host: string; port: number }, options: { eventDelayMs?: number } = {}): Promise<ScriptedServer> {
  const server = await ScriptedServer.start([], { eventDelayMs: options.eventDelayMs ?? 0 }, address);
  server.stopRecording();
  server.respondWith(sandboxResponder());
  return server;
}

function text(value: string): ScriptedReply {
  return { content: [{ type: 'text', text: value }] };
}

function memoryCall(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use' as const, id, name: 'memory', input };
}

function offersMemoryTool(body: MessagesRequestBody): boolean {
  return Array.isArray(body.tools) && body.tools.some((tool) => typeof tool === 'object' && tool !== null && (tool as Block).name === 'memory');
}

/** The input of the tool_use (in the assistant turn before the last message) that a tool_result answers. */
function toolUseAnswered(body: MessagesRequestBody, id: string): Record<string, unknown> | null {
  const messages = body.messages ?? [];
  const assistant = messages[messages.length - 2];
  if (!assistant || assistant.role !== 'assistant' || !Array.isArray(assistant.content)) return null;
  const block = assistant.content.find((b) => b.type === 'tool_use' && b.id === id);
  const input = block?.input;
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : null;
}

/** A tool_result's content as text (a string, or text blocks). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (typeof b === 'object' && b !== null && typeof (b as Block).text === 'string' ? (b as Block).text : '')).join('');
  return '';
}

/** Whether a view of /memories lists the notes file (a line `{size}\t/memories/notes.md`). */
function listsNotes(listing: string): boolean {
  return listing.split('\n').some((line) => line.split('\t')[1] === SANDBOX_NOTES);
}

/** The last thing the user said (a text turn, not tool results), on one line and cut. */
function noteOf(body: MessagesRequestBody): string {
  const messages = body.messages ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message.role !== 'user') continue;
    const said = typeof message.content === 'string' ? message.content : message.content.filter((b) => b.type === 'text').map((b) => String(b.text)).join(' ');
    if (said.trim()) return oneLine(said, NOTE_CHARS);
  }
  return '(an empty message)';
}

function oneLine(value: string, max: number): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  const points = [...flat];
  return points.length > max ? `${points.slice(0, max - 1).join('')}…` : flat;
}
