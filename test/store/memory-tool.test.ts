/**
 * The library surface: store.memoryTool() as the SDK's tool runner uses it, MemoryStore.open's option
 * checks, typed errors, idempotent retries, and the package entry point loaded from ESM.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { runRunnableTool, type BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import { InvalidToolUseError, MemgitError, MemoryStore, StoreClosedError } from '../../src';
import { lastToolResults, ScriptedServer } from '../../src/agent/scripted-server';
import { DIST_ENTRY, ensureBuilt, REPO_ROOT } from '../support/dist';
import { ExpectedCommit, expectRepository, gitReport, makeTempDir, removeDir, storeFingerprint } from './git-helpers';

const SESSION = 'sess_tool';

function toolUseBlock(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use' as const, id, name: 'memory' as const, input };
}

describe('store.memoryTool()', () => {
  let dir: string;
  let store: MemoryStore;
  const commits: ExpectedCommit[] = [];

  beforeAll(async () => {
    dir = makeTempDir('memgit-tool-');
    store = await MemoryStore.open(dir, { log: () => undefined });
  });

  afterAll(async () => {
    await store.close();
    removeDir(dir);
  });

  it('is a runnable memory_20250818 tool the SDK accepts', () => {
    // The assignment is the type check: tsc refuses it if the shape drifts from the SDK's.
    const tool: BetaRunnableTool = store.memoryTool({ session: SESSION });
    expect(tool.type).toBe('memory_20250818');
    expect(tool.name).toBe('memory');
    expect(typeof tool.run).toBe('function');
    expect(typeof tool.parse).toBe('function');
  });

  it('commits with the id from context.toolUse', async () => {
    const tool = store.memoryTool({ session: SESSION });
    const input = { command: 'create', path: '/memories/tool.md', file_text: 'one\ntwo' };
    const block = toolUseBlock('toolu_01RunnerId', input);
    const text = await tool.run(input, { toolUse: block });
    expect(text).toBe('File created successfully at: /memories/tool.md');
    commits.push({ id: 'toolu_01RunnerId', command: 'create', path: '/memories/tool.md', session: SESSION });
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });

  it('answers a view with the exact text', async () => {
    const tool = store.memoryTool({ session: SESSION });
    const input = { command: 'view', path: '/memories/tool.md' };
    const block = toolUseBlock('toolu_02View', input);
    await expect(tool.run(input, { toolUse: block })).resolves.toBe(
      "Here's the content of /memories/tool.md with line numbers:\n     1\tone\n     2\ttwo",
    );
  });

  it("throws the SDK's ToolError with the exact text on failure, and writes nothing", async () => {
    const tool = store.memoryTool({ session: SESSION });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ command: 'view', path: '/memories/nope.md' }, 'The path /memories/nope.md does not exist. Please provide a valid path.'],
      [{ command: 'create', path: '/etc/passwd', file_text: 'x' }, 'Error: Path must start with /memories, got: /etc/passwd'],
      [{ command: 'str_replace', path: '/memories/tool.md', old_str: 'zzz' }, 'No replacement was performed, old_str `zzz` did not appear verbatim in /memories/tool.md.'],
      [{ command: 'valueOf' }, 'Error: unknown command valueOf'],
    ];
    for (const [index, [input, text]] of cases.entries()) {
      const before = storeFingerprint(dir);
      const block = toolUseBlock(`toolu_fail_${index}`, input);
      const error = await tool.run(input, { toolUse: block }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ToolError);
      expect((error as ToolError).content).toBe(text);
      // What the runner sends back: the ToolError's content verbatim, flagged as an error.
      await expect(runRunnableTool(tool, input, { toolUse: block, toolUseBlock: block })).resolves.toEqual({ content: text, isError: true });
      expect(storeFingerprint(dir)).toBe(before);
    }
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });

  it('refuses a call without a tool_use id in the context', async () => {
    const tool = store.memoryTool({ session: SESSION });
    const error = await tool.run({ command: 'delete', path: '/memories/tool.md' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).content).toBe('Error: Invalid tool_use id undefined');
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });
});

describe('library API', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = makeTempDir('memgit-api-');
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach(removeDir));

  it.each([
    [{ createMode: 'strict' }, `createMode must be 'overwrite' or 'error', got "strict"`],
    [{ createMode: null }, `createMode must be 'overwrite' or 'error', got null`],
    [{ maxFileBytes: 0 }, 'maxFileBytes must be a positive integer, got 0'],
    [{ maxFileBytes: -5 }, 'maxFileBytes must be a positive integer, got -5'],
    [{ maxFileBytes: 1.5 }, 'maxFileBytes must be a positive integer, got 1.5'],
    [{ maxFileBytes: '1024' }, 'maxFileBytes must be a positive integer, got "1024"'],
    [{ maxFileBytes: Number.NaN }, 'maxFileBytes must be a positive integer, got null'],
  ])('MemoryStore.open rejects %j with a TypeError and creates nothing', async (options, message) => {
    const dir = path.join(tempDir(), 'store');
    const error = await MemoryStore.open(dir, options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(message);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('applies createMode, maxFileBytes and author', async () => {
    const dir = tempDir();
    const store = await MemoryStore.open(dir, {
      createMode: 'error',
      maxFileBytes: 10,
      author: { name: 'Audit Bot', email: 'audit@example.test' },
      log: () => undefined,
    });
    const run = (id: string, input: Record<string, unknown>) => store.execute(toolUseBlock(id, input), { session: SESSION });
    expect((await run('t1', { command: 'create', path: '/memories/a.md', file_text: '0123456789' })).is_error).toBeUndefined();
    expect(await run('t2', { command: 'create', path: '/memories/a.md', file_text: 'x' })).toMatchObject({
      content: 'Error: File /memories/a.md already exists',
      is_error: true,
    });
    expect(await run('t3', { command: 'create', path: '/memories/b.md', file_text: '01234567890' })).toMatchObject({
      content: 'Error: File /memories/b.md would be 11 bytes; the limit for one memory file is 10 bytes',
      is_error: true,
    });
    await store.close();
    const authors = spawnSync('git', ['-C', dir, 'log', '--format=%an <%ae>|%cn <%ce>'], { encoding: 'utf8' }).stdout.trim().split('\n');
    expect(authors).toEqual(['Audit Bot <audit@example.test>|Audit Bot <audit@example.test>', 'Audit Bot <audit@example.test>|Audit Bot <audit@example.test>']);
  });

  it('refuses blocks that are not memory tool_use blocks with InvalidToolUseError', async () => {
    const dir = tempDir();
    const store = await MemoryStore.open(dir, { log: () => undefined });
    const before = storeFingerprint(dir);
    const notBlocks: Array<[unknown, string]> = [
      [null, 'expected a tool_use block (an object)'],
      ['{"type":"tool_use"}', 'expected a tool_use block (an object)'],
      [[toolUseBlock('t', {})], 'expected a tool_use block (an object)'],
      [{ type: 'text', text: 'hi' }, 'expected type "tool_use", got "text"'],
      [{ type: 'tool_result', tool_use_id: 't', content: '' }, 'expected type "tool_use", got "tool_result"'],
      [{ type: 'tool_use', id: 't', name: 'bash', input: {} }, 'expected the memory tool (name "memory"), got "bash"'],
      [{ type: 'tool_use', id: 't', input: {} }, 'expected the memory tool (name "memory"), got undefined'],
    ];
    for (const [block, message] of notBlocks) {
      const error = await store.execute(block, { session: SESSION }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidToolUseError);
      expect(error).toBeInstanceOf(MemgitError);
      expect((error as Error).message).toBe(message);
    }
    expect(storeFingerprint(dir)).toBe(before);
    await store.close();
  });

  it('throws StoreClosedError after close (which may be called twice)', async () => {
    const dir = tempDir();
    const store = await MemoryStore.open(dir, { log: () => undefined });
    const tool = store.memoryTool({ session: SESSION });
    await store.close();
    await store.close();
    await expect(store.execute(toolUseBlock('t1', { command: 'view', path: '/memories' }), { session: SESSION })).rejects.toBeInstanceOf(StoreClosedError);
    const block = toolUseBlock('t2', { command: 'view', path: '/memories' });
    await expect(tool.run(block.input, { toolUse: block })).rejects.toBeInstanceOf(StoreClosedError);
    await expect(store.execute(toolUseBlock('t3', { command: 'view', path: '/memories' }), { session: SESSION })).rejects.toThrow('the store is closed');
  });

  it('answers a retried tool_use id from its first commit without committing again', async () => {
    const dir = tempDir();
    const store = await MemoryStore.open(dir, { log: () => undefined });
    const session = SESSION;
    const run = (id: string, input: Record<string, unknown>) => store.execute(toolUseBlock(id, input), { session });
    const commits: ExpectedCommit[] = [];
    const create = { command: 'create', path: '/memories/r.md', file_text: 'alpha\nbeta\n' };
    const first = await run('toolu_retry_1', create);
    commits.push({ id: 'toolu_retry_1', command: 'create', path: '/memories/r.md', session });
    const edit = { command: 'str_replace', path: '/memories/r.md', old_str: 'beta', new_str: 'gamma' };
    const edited = await run('toolu_retry_2', edit);
    commits.push({ id: 'toolu_retry_2', command: 'str_replace', path: '/memories/r.md', session });
    expect(edited.is_error).toBeUndefined();

    // The retries come after later changes and still get the first answers.
    expect(await run('toolu_retry_1', create)).toEqual(first);
    expect(await run('toolu_retry_2', edit)).toEqual(edited);
    // Also from a fresh process's view of the store (the history index is persisted).
    await store.close();
    const reopened = await MemoryStore.open(dir, { log: () => undefined });
    expect(await reopened.execute(toolUseBlock('toolu_retry_2', edit), { session })).toEqual(edited);
    const view = await reopened.execute(toolUseBlock('toolu_retry_view', { command: 'view', path: '/memories/r.md' }), { session });
    expect(view.content).toBe("Here's the content of /memories/r.md with line numbers:\n     1\talpha\n     2\tgamma\n     3\t");
    await reopened.close();
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });

  it('refuses to acknowledge a retried id whose input differs from the committed call', async () => {
    const dir = tempDir();
    const store = await MemoryStore.open(dir, { log: () => undefined });
    const run = (id: string, input: Record<string, unknown>) => store.execute(toolUseBlock(id, input), { session: SESSION });
    await run('toolu_same', { command: 'create', path: '/memories/a.md', file_text: 'a' });
    const commits: ExpectedCommit[] = [{ id: 'toolu_same', command: 'create', path: '/memories/a.md', session: SESSION }];
    const reused = [
      { command: 'create', path: '/memories/other.md', file_text: 'a' },
      { command: 'create', path: '/memories/a.md', file_text: 'different content' },
      { command: 'delete', path: '/memories/a.md' },
    ];
    for (const input of reused) {
      const result = await run('toolu_same', input);
      expect(result).toEqual({
        type: 'tool_result',
        tool_use_id: 'toolu_same',
        content: 'Error: tool_use id toolu_same was already used by an earlier create call with different input',
        is_error: true,
      });
    }
    const view = await run('toolu_view', { command: 'view', path: '/memories' });
    expect(view.content).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n1B\t/memories/a.md",
    );
    await store.close();
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });
});

describe('the package entry point', () => {
  beforeAll(async () => {
    await ensureBuilt();
  });

  /** Runs an ES module snippet with the repository root as working directory; returns its stdout as JSON. */
  function runEsm(source: string): unknown {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    return JSON.parse(run.stdout);
  }

  it.each([
    ['the built file', JSON.stringify(DIST_ENTRY)],
    ['the package name', JSON.stringify('memgit')],
  ])('works as a named ESM import of %s', (_label, specifier) => {
    const dir = makeTempDir('memgit-esm-');
    try {
      const result = runEsm(`
        import { MemoryStore, InvalidToolUseError, newSessionId } from ${specifier};
        const store = await MemoryStore.open(${JSON.stringify(dir)}, { log: () => {} });
        const result = await store.execute(
          { type: 'tool_use', id: 'toolu_esm', name: 'memory', input: { command: 'create', path: '/memories/esm.md', file_text: 'hi' } },
          { session: newSessionId() },
        );
        await store.close();
        console.log(JSON.stringify({ open: typeof MemoryStore.open, error: typeof InvalidToolUseError, result }));
      `);
      expect(result).toEqual({
        open: 'function',
        error: 'function',
        result: { type: 'tool_result', tool_use_id: 'toolu_esm', content: 'File created successfully at: /memories/esm.md' },
      });
      expect(fs.readFileSync(path.join(dir, 'memories/esm.md'), 'utf8')).toBe('hi');
    } finally {
      removeDir(dir);
    }
  });
});

describe('store.memoryTool(context, options)', () => {
  let dir: string;
  let store: MemoryStore;
  let server: ScriptedServer;

  beforeAll(async () => {
    dir = makeTempDir('memgit-tool-options-');
    store = await MemoryStore.open(dir, { log: () => undefined });
  });

  afterAll(async () => {
    await server?.close();
    await store.close();
    removeDir(dir);
  });

  it('sends extra tool properties as the SDK’s betaMemoryTool does, and calls onCall', async () => {
    const calls: Array<[string | undefined, unknown]> = [];
    const tool = store.memoryTool(
      { session: SESSION },
      { cache_control: { type: 'ephemeral' }, defer_loading: false, onCall: (report, input) => calls.push([report.commit, input]) },
    );
    const input = { command: 'create', path: '/memories/cached.md', file_text: 'x' };
    server = await ScriptedServer.start([
      { content: [{ type: 'tool_use', id: 'toolu_cached', name: 'memory', input }] },
      { content: [{ type: 'text', text: 'ok' }] },
    ]);
    const client = new Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test-not-a-real-key', maxRetries: 0 });
    await client.beta.messages.toolRunner({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], tools: [tool] });
    const [first, second] = server.messageRequests;
    expect(first.raw).toContain('"tools":[{"cache_control":{"type":"ephemeral"},"defer_loading":false,"type":"memory_20250818","name":"memory"}]');
    expect(lastToolResults(second.body!)).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_cached', content: 'File created successfully at: /memories/cached.md' }]);
    expect(calls).toEqual([[expect.stringMatching(/^[0-9a-f]{40}$/), input]]);
  });

  it('keeps its own type, name, parse and run whatever the options say', async () => {
    const tool = store.memoryTool({ session: SESSION }, { name: 'bash', type: 'x', run: () => 'hijacked' } as never);
    expect(tool.type).toBe('memory_20250818');
    expect(tool.name).toBe('memory');
    expect(Object.keys(tool).sort()).toEqual(['name', 'parse', 'run', 'type']);
    const block = toolUseBlock('toolu_own_run', { command: 'view', path: '/memories/cached.md' });
    await expect(tool.run(block.input, { toolUse: block })).resolves.toContain('     1\tx');
  });

  it('still takes onCall as a function, and refuses options that are neither', () => {
    const seen: string[] = [];
    const tool = store.memoryTool({ session: SESSION }, (report) => seen.push(report.result.content));
    expect(Object.keys(tool).sort()).toEqual(['name', 'parse', 'run', 'type']);
    expect(() => store.memoryTool({ session: SESSION }, 'x' as never)).toThrow(new TypeError('memoryTool options must be an object or an onCall function, got "x"'));
    expect(() => store.memoryTool({ session: SESSION }, { onCall: 5 } as never)).toThrow(new TypeError("memoryTool's onCall must be a function, got 5"));
  });
});
