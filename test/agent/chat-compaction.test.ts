/**
 * `memgit chat --compaction` (and with `--context-editing`) as a user runs it: the built CLI spawned against
 * the scripted Messages API server, which returns compaction blocks (streamed and as plain JSON) and an
 * `applied_edits` report. Asserted: what the server received (the edits, the betas, every compaction block
 * sent back exactly as it was returned), the commits (real git CLI), and the session's timeline as the
 * audit UI and its JSON twin show it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { CONTEXT_EDITING } from '../../src/agent/chat-session';
import { RecordedRequest, ScriptedCompactionBlock, ScriptedServer, ScriptStep } from '../../src/agent/scripted-server';
import { MemoryStore } from '../../src/store/memory-store';
import { createApp } from '../../src/web/app';
import { expectRepository, gitReport, makeTempDir, removeDir } from '../store/git-helpers';
import { ensureBuilt } from '../support/dist';
import { cliEnv, runCli } from './run-cli';

const dirs: string[] = [];
const servers: ScriptedServer[] = [];

function tempRepo(): string {
  const dir = makeTempDir('memgit-compaction-');
  dirs.push(dir);
  return path.join(dir, 'store');
}

async function scripted(steps: ScriptStep[]): Promise<ScriptedServer> {
  const server = await ScriptedServer.start(steps, { chunkSize: 7 });
  servers.push(server);
  return server;
}

const toolUse = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'memory', input });
const apiEnv = (server: ScriptedServer) => cliEnv({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key' });
const betasOf = (r: RecordedRequest) => String(r.headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim()).filter(Boolean).sort();

/** Every compaction block of the assistant turns a request carries, in order. */
function compactionBlocksSent(r: RecordedRequest): Array<Record<string, unknown>> {
  return (r.body!.messages ?? [])
    .filter((m) => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m) => (m.content as Array<Record<string, unknown>>).filter((b) => b.type === 'compaction'));
}

/** A compaction block with every field a client must keep, including one this SDK has never heard of. */
const SUMMARY =
  'Summary of the conversation so far: Dana Whitfield (Acme) prefers TypeScript; the webhook fix is filed.\n' +
  '<script>alert(1)</script> \u202Egnp.exe';
const COMPACTION: ScriptedCompactionBlock = {
  type: 'compaction',
  content: SUMMARY,
  encrypted_content: 'EqQBCkYIARgCKkDv1opaque+/=',
  signature: 'sig_Zm9yIHRlc3RzIG9ubHk',
  tool_changes: [],
  future_field: { nested: [1, 'two', null] },
};
const FAILED_COMPACTION: ScriptedCompactionBlock = { type: 'compaction', content: null, encrypted_content: 'EqRmFpbGVk' };
const CLEARED = { type: 'clear_tool_uses_20250919', cleared_tool_uses: 3, cleared_input_tokens: 12_345 };

beforeAll(async () => {
  await ensureBuilt();
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  dirs.forEach(removeDir);
});

describe('streamed, with context editing: edits, betas, the block sent back verbatim, the timeline', () => {
  const repo = tempRepo();
  const session = 'sess_20261203T140200_cmpt';
  let server: ScriptedServer;

  beforeAll(async () => {
    server = await scripted([
      { content: [{ type: 'text', text: 'Checking memory.' }, toolUse('toolu_01CmpView', { command: 'view', path: '/memories' })] },
      {
        content: [toolUse('toolu_01CmpFirst', { command: 'create', path: '/memories/acme.md', file_text: 'Acme: prefers TypeScript.\n' })],
      },
      {
        // The API cleared old tool results and compacted before answering; then the agent writes again.
        content: [
          COMPACTION,
          { type: 'text', text: 'Filing the fix.' },
          toolUse('toolu_01CmpAfter', { command: 'create', path: '/memories/x.md', file_text: 'webhook fix filed\n' }),
        ],
        appliedEdits: [CLEARED],
      },
      { content: [{ type: 'text', text: 'Done.' }] },
    ]);
  });

  test('the CLI run: stdout, stderr, requests, commits', async () => {
    const run = await runCli(
      [
        'chat', '--repo', repo, '--session', session, '--compaction', '--compaction-trigger', '60000',
        '--compaction-instructions', 'Keep customer names.', '--context-editing', 'remember the fix',
      ],
      { env: apiEnv(server) },
    );
    expect(run.stdout).toBe('Checking memory.\nFiling the fix.\nDone.\n');
    const lines = run.stderr.split('\n');
    expect(lines.slice(1, 3)).toEqual([
      'memory view /memories: ok (toolu_01CmpView)',
      expect.stringMatching(/^memory create \/memories\/acme\.md: ok, commit [0-9a-f]{12} \(toolu_01CmpFirst\)$/),
    ]);
    // A stream starts each tool call as its block arrives, and the clears are reported at the end of the
    // reply: so the last write's line may come before or after the two context lines (the timeline's order
    // does not depend on it, see the next test).
    const rest = lines.slice(3);
    const clearLine = 'context: clear_tool_uses_20250919 cleared 3 tool uses, 12345 input tokens';
    expect(rest).toHaveLength(4);
    expect(rest.at(-1)).toBe('');
    expect(rest).toContain(clearLine);
    // One short line: the summary is cut (the whole of it is on the timeline).
    const summaryLine = rest.find((l) => l.startsWith('context: compacted'));
    expect(summaryLine).toBe(`context: compacted into a ${SUMMARY.length}-character summary: ${SUMMARY.replace('\n', ' ').slice(0, 79)}…`);
    expect(rest.indexOf(clearLine)).toBeLessThan(rest.indexOf(summaryLine!));
    expect(rest).toContainEqual(expect.stringMatching(/^memory create \/memories\/x\.md: ok, commit [0-9a-f]{12} \(toolu_01CmpAfter\)$/));
    expect(run.code).toBe(0);

    const requests = server.messageRequests;
    expect(requests).toHaveLength(4);
    for (const r of requests) {
      expect(r.body!.stream).toBe(true);
      expect(r.body!.context_management).toEqual({
        edits: [
          ...CONTEXT_EDITING.edits!,
          { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 60_000 }, instructions: 'Keep customer names.' },
        ],
      });
      expect(betasOf(r)).toEqual(['compact-2026-01-12', 'context-management-2025-06-27']);
    }
    // The block came back on the next request exactly as the API returned it, before the reply's other blocks.
    expect(compactionBlocksSent(requests[2])).toEqual([]);
    expect(compactionBlocksSent(requests[3])).toEqual([COMPACTION]);
    const assistant = requests[3].body!.messages!.at(-2)!;
    expect(assistant.role).toBe('assistant');
    expect((assistant.content as Array<{ type: string }>).map((b) => b.type)).toEqual(['compaction', 'text', 'tool_use']);

    expectRepository(gitReport(repo), [
      { id: 'toolu_01CmpFirst', command: 'create', path: '/memories/acme.md', session },
      { id: 'toolu_01CmpAfter', command: 'create', path: '/memories/x.md', session },
    ]);
  });

  test('the session page and /api/sessions/{id}: the clear and the summary between the two writes', async () => {
    const store = await MemoryStore.open(repo, { create: false });
    try {
      const app = createApp({ store, log: () => undefined });
      const get = (url: string) => request(app).get(url).set('Host', '127.0.0.1:3000');
      const api = await get(`/api/sessions/${session}`);
      expect(api.status).toBe(200);
      const steps = api.body.page as Array<{ toolUseId: string; eventsAfter: Array<Record<string, unknown>> }>;
      expect(api.body.eventsBefore).toEqual([]);
      expect(api.body).toMatchObject({ calls: 2, compactions: 1, clears: 1, eventsOmitted: 0 });
      expect(steps.map((s) => [s.toolUseId, s.eventsAfter.map((e) => e.kind)])).toEqual([
        ['toolu_01CmpFirst', ['context_cleared', 'compaction']],
        ['toolu_01CmpAfter', []],
      ]);
      const [cleared, summary] = steps[0].eventsAfter;
      expect(cleared).toMatchObject({ edit: 'clear_tool_uses_20250919', clearedToolUses: 3, clearedInputTokens: 12_345, afterToolUseId: 'toolu_01CmpFirst' });
      expect(summary).toMatchObject({ summary: SUMMARY, summaryChars: SUMMARY.length, truncated: false, encryptedContent: true, failed: false });
      expect(summary).not.toHaveProperty('encrypted_content');

      const page = await get(`/sessions/${session}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('The API cleared old context 1 time and summarised it 1 time (shown between the calls).');
      const order = ['toolu_01CmpFirst', 'Context cleared', '3 tool uses, 12345 input tokens', 'Context summary', 'Summary of the conversation so far', 'toolu_01CmpAfter'];
      const at = order.map((text) => page.text.indexOf(text));
      expect(at.every((i) => i > 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      // Stored text is escaped, and the bidi override is shown as a marked code point.
      expect(page.text).not.toContain('<script>alert(1)</script>');
      expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(page.text).not.toContain('\u202E');
      expect(page.text).toContain('U+202E');
    } finally {
      await store.close();
    }
  });
});

describe('not streamed, compaction alone: the API defaults, a failed compaction passed back too', () => {
  test('requests, verbatim blocks, commits, timeline', async () => {
    const repo = tempRepo();
    const session = 'sess_20261203T140500_plain';
    const server = await scripted([
      { content: [FAILED_COMPACTION, toolUse('toolu_01PlainFirst', { command: 'create', path: '/memories/a.md', file_text: 'a\n' })] },
      { content: [COMPACTION, toolUse('toolu_01PlainSecond', { command: 'create', path: '/memories/b.md', file_text: 'b\n' })] },
      { content: [{ type: 'text', text: 'Both noted.' }] },
    ]);
    const run = await runCli(['chat', '--repo', repo, '--session', session, '--no-stream', '--compaction', 'note a and b'], { env: apiEnv(server) });
    expect(run.stderr.split('\n').slice(1, 3)).toEqual([
      'context: compaction failed (no summary; the block is passed back as received)',
      expect.stringMatching(/^memory create \/memories\/a\.md: ok/),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Both noted.\n');

    const requests = server.messageRequests;
    expect(requests).toHaveLength(3);
    for (const r of requests) {
      expect(r.body!.stream).not.toBe(true);
      expect(r.body!.context_management).toEqual({ edits: [{ type: 'compact_20260112' }] });
      expect(r.headers['anthropic-beta']).toBe('compact-2026-01-12');
    }
    expect(compactionBlocksSent(requests[1])).toEqual([FAILED_COMPACTION]);
    expect(compactionBlocksSent(requests[2])).toEqual([FAILED_COMPACTION, COMPACTION]);

    expectRepository(gitReport(repo), [
      { id: 'toolu_01PlainFirst', command: 'create', path: '/memories/a.md', session },
      { id: 'toolu_01PlainSecond', command: 'create', path: '/memories/b.md', session },
    ]);
    const store = await MemoryStore.open(repo, { create: false });
    try {
      const api = await request(createApp({ store, log: () => undefined })).get(`/api/sessions/${session}`).set('Host', '127.0.0.1:3000');
      expect(api.body.eventsBefore).toEqual([expect.objectContaining({ kind: 'compaction', summary: null, failed: true, afterCommit: null })]);
      expect(api.body.page.map((s: { eventsAfter: Array<{ kind: string; summary: string }> }) => s.eventsAfter.map((e) => e.summary))).toEqual([[SUMMARY], []]);
    } finally {
      await store.close();
    }
    // The timeline is its own file, not a commit: the working tree and the history are as without it.
    expect(fs.existsSync(path.join(repo, '.git', 'memgit', 'timeline-v1.jsonl'))).toBe(true);
  });

  test('bad --compaction settings are refused before anything is sent or created', async () => {
    const server = await scripted([]);
    const cases: Array<[string[], string]> = [
      [['--compaction-trigger', '60000'], 'memgit: --compaction-trigger needs --compaction\n'],
      [['--compaction-instructions', 'x'], 'memgit: --compaction-instructions needs --compaction\n'],
      [['--compaction', '--compaction-trigger', '1000'], 'memgit: --compaction-trigger must be at least 50000 input tokens (the API\'s minimum), got 1000\n'],
      [['--compaction', '--compaction-instructions', '  '], 'memgit: --compaction-instructions is empty\n'],
    ];
    for (const [flags, message] of cases) {
      const repo = tempRepo();
      const run = await runCli(['chat', '--repo', repo, ...flags, 'hello'], { env: apiEnv(server) });
      expect([flags, run.code, run.stderr]).toEqual([flags, 1, message]);
      expect(fs.existsSync(repo)).toBe(false);
    }
    expect(server.messageRequests).toHaveLength(0);
  });
});
