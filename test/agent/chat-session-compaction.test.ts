/**
 * Compaction in process, through the official SDK talking HTTP to the scripted server: the SDK's stream
 * accumulator keeps a `compaction` block exactly as the API sent it (the fields it knows and any it does
 * not), and the library's ChatSession carries it into later turns and onto the session's timeline.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ChatSession, COMPACTION_BETA, ContextEvent } from '../../src/agent/chat-session';
import { ScriptedCompactionBlock, ScriptedServer } from '../../src/agent/scripted-server';
import { MemoryStore } from '../../src/store/memory-store';
import { QUIET, useTempDir } from '../store/git-helpers';

const tempDir = useTempDir();
let server: ScriptedServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const BLOCK: ScriptedCompactionBlock = {
  type: 'compaction',
  content: 'The user is Dana; deploys happen on Fridays.',
  encrypted_content: 'opaque/+=',
  signature: 'sig_abc',
  tool_changes: [{ type: 'tool_removal', name: 'web_search' }],
  not_yet_in_any_sdk: { a: [1, { b: null }] },
};
const APPLIED = [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 4, cleared_input_tokens: 40_000 }];

test.each([true, false])('the SDK keeps the block verbatim (stream: %s), and the applied edits', async (stream) => {
  server = await ScriptedServer.start([{ content: [BLOCK, { type: 'text', text: 'ok' }], appliedEdits: APPLIED }], { chunkSize: 3 });
  const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 });
  const params = { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }], betas: [COMPACTION_BETA] };
  const message = stream ? await client.beta.messages.stream(params).finalMessage() : await client.beta.messages.create(params);
  // As sent on the wire (JSON): exactly the block the API returned, unknown fields included.
  expect(JSON.parse(JSON.stringify(message.content))).toEqual([BLOCK, { type: 'text', text: 'ok' }]);
  expect(message.context_management).toEqual({ applied_edits: APPLIED });
  expect(server.messageRequests[0].headers['anthropic-beta']).toBe(COMPACTION_BETA);
});

test('ChatSession({ compaction }): the edit, the block in every later request, the events on the timeline', async () => {
  const session = 'sess_20261203T100000_libr';
  server = await ScriptedServer.start([
    { content: [{ type: 'tool_use', id: 'toolu_01LibCreate', name: 'memory', input: { command: 'create', path: '/memories/deploys.md', file_text: 'Fridays\n' } }] },
    { content: [BLOCK, { type: 'text', text: 'Noted.' }], appliedEdits: APPLIED },
    { content: [{ type: 'text', text: 'On Fridays.' }] },
  ]);
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    const events: ContextEvent[] = [];
    const chat = new ChatSession({
      client: new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 }),
      store,
      session,
      model: 'claude-test',
      compaction: { trigger: 80_000 },
      onContextEvent: (event) => events.push(event),
    });
    await chat.send('We deploy on Fridays.');
    await chat.send('When do we deploy?');

    const requests = server.messageRequests;
    expect(requests.map((r) => r.body!.context_management)).toEqual(
      Array(3).fill({ edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 80_000 } }] }),
    );
    // The next turn (a new user message) sends the whole conversation, the block as it was returned.
    const assistantTurns = requests[2].body!.messages!.filter((m) => m.role === 'assistant');
    expect(assistantTurns.at(-1)!.content).toEqual([BLOCK, { type: 'text', text: 'Noted.' }]);
    expect(chat.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'On Fridays.' }]);

    const commit = store.history.byToolUseId('toolu_01LibCreate')!.commit;
    expect(events.map((e) => [e.kind, e.afterCommit, e.afterToolUseId])).toEqual([
      ['context_cleared', commit, 'toolu_01LibCreate'],
      ['compaction', commit, 'toolu_01LibCreate'],
    ]);
    expect(await store.timeline.forSession(session)).toEqual(events);
  } finally {
    await store.close();
  }
});

test('a continued session (a new ChatSession, same id): the first event comes after the calls made before', async () => {
  const session = 'sess_20261203T101500_cont';
  server = await ScriptedServer.start([
    { content: [{ type: 'tool_use', id: 'toolu_01ContEarlier', name: 'memory', input: { command: 'create', path: '/memories/e.md', file_text: 'e\n' } }] },
    { content: [{ type: 'text', text: 'Saved.' }] },
    { content: [{ type: 'compaction', content: null }, { type: 'text', text: 'Hello again.' }] },
  ]);
  const store = await MemoryStore.open(tempDir(), { ...QUIET, fsync: false });
  try {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 });
    const options = { client, store, session, model: 'claude-test', compaction: true, stream: false };
    await new ChatSession(options).send('save e');
    await new ChatSession(options).send('hello');
    const commit = store.history.byToolUseId('toolu_01ContEarlier')!.commit;
    expect(await store.timeline.forSession(session)).toEqual([
      expect.objectContaining({ kind: 'compaction', summary: null, afterCommit: commit, afterToolUseId: 'toolu_01ContEarlier' }),
    ]);
    // A new ChatSession starts a new conversation: its request holds only the new message.
    expect(server.messageRequests[2].body!.messages).toEqual([{ role: 'user', content: 'hello' }]);
  } finally {
    await store.close();
  }
});
