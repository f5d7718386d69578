/**
 * Dreams through the library (issue 28): the official SDK's tool runner talking HTTP to the scripted
 * Messages API on 127.0.0.1, a real store checked with the git CLI. A dream that merges two contradicting
 * notes on its branch, reviewed and approved onto main with a write made meanwhile kept; an API error
 * fails it; a cancel stops it at the next turn; a second dream while one is live is refused.
 */
import { spawnSync } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import { lastToolResults, ScriptedServer, type ScriptStep } from '../../src/agent/scripted-server';
import { startDream, DREAM_SYSTEM_PROMPT } from '../../src/dream';
import { DreamRunningError, InvalidDreamError } from '../../src/store/errors';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';

function git(dir: string, ...args: string[]): string {
  const run = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

function call(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use', id, name: 'memory', input };
}

function toolUse(id: string, name: string, input: Record<string, unknown>) {
  return { type: 'tool_use' as const, id, name, input };
}

const servers: ScriptedServer[] = [];
async function scripted(steps: ScriptStep[]): Promise<ScriptedServer> {
  const server = await ScriptedServer.start(steps);
  servers.push(server);
  return server;
}
function clientOf(server: ScriptedServer): Anthropic {
  return new Anthropic({ apiKey: 'sk-ant-test-not-a-real-key', baseURL: server.url, maxRetries: 0 });
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('dreams (library)', () => {
  let dir: string;
  let store: MemoryStore;

  beforeEach(async () => {
    dir = makeTempDir('memgit-dream-');
    store = await MemoryStore.open(dir, { log: () => undefined });
    await store.execute(call('toolu_s1_a', { command: 'create', path: '/memories/prefs.md', file_text: '# Preferences\n\n- Editor: vim\n- Shell: zsh\n' }), { session: 'sess_one' });
    await store.execute(call('toolu_s2_a', { command: 'create', path: '/memories/prefs-2.md', file_text: '- Editor: switched to emacs last week\n' }), { session: 'sess_two' });
    await store.execute(call('toolu_s2_b', { command: 'view', path: '/memories' }), { session: 'sess_two' });
  });

  afterEach(async () => {
    await store.close();
    removeDir(dir);
  });

  it('merges two contradicting notes on its branch; main is untouched until approval, and a write made meanwhile survives it', async () => {
    const server = await scripted([
      { content: [{ type: 'text', text: 'Looking.' }, toolUse('toolu_d1', 'session_list', {}), toolUse('toolu_d2', 'memory', { command: 'view', path: '/memories' })] },
      { content: [toolUse('toolu_d3', 'session_read', { session_id: 'sess_one' }), toolUse('toolu_d4', 'session_read', { session_id: 'sess_two' }), toolUse('toolu_d5', 'session_read', { session_id: 'sess_other' })] },
      {
        content: [
          toolUse('toolu_d6', 'memory', { command: 'str_replace', path: '/memories/prefs.md', old_str: '- Editor: vim', new_str: '- Editor: emacs (per session sess_two)' }),
          toolUse('toolu_d7', 'memory', { command: 'delete', path: '/memories/prefs-2.md' }),
        ],
      },
      { content: [{ type: 'text', text: 'Merged the two editor notes.' }] },
    ]);
    const mainBefore = git(dir, 'rev-parse', 'refs/heads/main').trim();
    let meanwhile: Promise<unknown> | null = null;
    const { dream, done } = await startDream(store, clientOf(server), {
      sessions: ['sess_one', 'sess_two'],
      instructions: 'Prefer the newest editor.',
      model: 'claude-test-model',
      // A write on main while the dream runs (after its first turn, before its writes).
      onTurn: (now) => {
        if (now.memgit.turns === 1) meanwhile = store.execute(call('toolu_main_1', { command: 'create', path: '/memories/team.md', file_text: '- Lead: Dana\n' }), { session: 'sess_three' });
      },
    });
    expect(dream.id).toMatch(/^drm_[0-9a-f]{24}$/);
    expect(['pending', 'running']).toContain(dream.status);
    const ended = await done;
    await meanwhile;
    expect(ended.error).toBeNull();
    expect(ended.status).toBe('completed');

    // Exactly three tools offered, the system prompt and the operator's instructions sent.
    const requests = server.messageRequests.map((r) => r.body!);
    expect(requests).toHaveLength(4);
    for (const body of requests) {
      expect((body.tools as Array<{ name: string; type?: string }>).map((t) => t.name)).toEqual(['memory', 'session_list', 'session_read']);
      expect((body.tools as Array<{ name: string; type?: string }>)[0].type).toBe('memory_20250818');
      expect(body.model).toBe('claude-test-model');
      expect(JSON.stringify(body.system)).toContain('Never invent');
    }
    expect(DREAM_SYSTEM_PROMPT).toContain('most recent evidence');
    expect(JSON.stringify(requests[0].messages)).toContain('Prefer the newest editor.');

    // What session_list and session_read answered.
    const first = lastToolResults(requests[1]);
    expect(String(first[0].content)).toContain('2 session(s) to consolidate');
    expect(String(first[0].content)).toMatch(/- sess_one: first .*1 write\(s\)/);
    const reads = lastToolResults(requests[2]).map((r) => String(r.content));
    expect(reads[0]).toContain('Session sess_one: 1 call(s); page 1 of 1');
    expect(reads[0]).toContain('+- Editor: vim');
    expect(reads[1]).toContain('Session sess_two: 2 call(s)');
    expect(reads[1]).toContain('+- Editor: switched to emacs last week');
    expect(reads[1]).toMatch(/read view \/memories \(toolu_s2_b\)/);
    expect(reads[2]).toContain("is not one of this dream's sessions");

    // The branch: one commit per write, named by the tool_use id, with the trailer; main has not moved but for the meanwhile write.
    const branch = `refs/heads/dream/${dream.id}`;
    const log = git(dir, 'log', '--format=%s%n%b%n--', `${mainBefore}..${branch}`);
    expect(log).toContain('toolu_d7\n');
    expect(log).toContain('toolu_d6\n');
    expect(log.match(new RegExp(`Memory-Dream: ${dream.id}`, 'g'))).toHaveLength(2);
    expect(git(dir, 'rev-parse', `${branch}~2`).trim()).toBe(mainBefore);
    expect(git(dir, 'show', 'refs/heads/main:memories/prefs.md')).toContain('- Editor: vim');
    expect(git(dir, 'show', 'refs/heads/main:memories/prefs-2.md')).toContain('emacs');
    expect(git(dir, 'log', '--format=%s', 'refs/heads/main', '-1').trim()).toBe('toolu_main_1');

    // The resource.
    expect(ended.outputs).toEqual([{ type: 'review', review_id: expect.stringMatching(/^rv_[0-9a-f]{16}$/), branch, files_touched: ['/memories/prefs-2.md', '/memories/prefs.md'] }]);
    expect(ended.inputs).toEqual([{ type: 'sessions', session_ids: ['sess_one', 'sess_two'] }]);
    expect(ended.instructions).toBe('Prefer the newest editor.');
    expect(ended.usage.input_tokens).toBeGreaterThan(0);
    expect(ended.usage.output_tokens).toBeGreaterThan(0);
    expect(ended.ended_at).not.toBeNull();
    expect(store.dream(dream.id)).toEqual(ended);
    expect(store.dreams().map((d) => d.id)).toEqual([dream.id]);

    // Its review: pending, the two calls; approved onto main, merging with the write made meanwhile.
    const review = (await store.reviews()).find((r) => r.id === ended.outputs[0].review_id)!;
    expect(review).toMatchObject({ state: 'pending', branch, dream: dream.id });
    expect(review.calls.map((c) => c.toolUseId)).toEqual(['toolu_d6', 'toolu_d7']);
    const detail = await store.review(review.id);
    expect(detail.calls.every((c) => c.applies)).toBe(true);
    const approved = await store.approveReview(review.id, { operator: 'alice' });
    expect(approved.commits).toHaveLength(2);
    expect(git(dir, 'show', 'refs/heads/main:memories/prefs.md')).toBe('# Preferences\n\n- Editor: emacs (per session sess_two)\n- Shell: zsh\n');
    expect(spawnSync('git', ['cat-file', '-e', 'refs/heads/main:memories/prefs-2.md'], { cwd: dir }).status).not.toBe(0);
    expect(git(dir, 'show', 'refs/heads/main:memories/team.md')).toBe('- Lead: Dana\n');
    expect(git(dir, 'log', '-1', '--format=%B', 'refs/heads/main')).toContain(`Memory-Dream: ${dream.id}`);
    expect(git(dir, 'log', '-1', '--format=%B', 'refs/heads/main')).toContain('Memory-Approved-By: alice');
    // The branch is archived with the decision; the review is approved.
    expect(spawnSync('git', ['rev-parse', '--verify', branch], { cwd: dir }).status).not.toBe(0);
    expect((await store.reviews()).find((r) => r.id === review.id)).toMatchObject({ state: 'approved', dream: dream.id });
    expect(spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: dir, encoding: 'utf8' }).status).toBe(0);
  });

  it('a redaction erases text from a dream\'s branch too (the branch is rewritten, not a refusal)', async () => {
    const SECRET = 'sk-ant-api03-DREAMONLYabcdefghijklmnopqrstuvwxyz0123456789';
    const dream = await store.beginDream({ inputs: [{ type: 'sessions', session_ids: ['sess_one'] }], model: 'claude-test-model' });
    const report = await store.executeWithReport(call('toolu_r1', { command: 'create', path: '/memories/key.md', file_text: `key: ${SECRET}\n` }), { session: `dream-${dream.id}`, dream: dream.id });
    expect(report.review?.state).toBe('pending');
    await store.finishDream(dream.id, 'completed');
    const outcome = await store.redact({ text: SECRET, reason: 'leaked key', operator: 'dana' });
    expect(outcome.blobsRedacted).toBe(1);
    expect(git(dir, 'show', `refs/heads/dream/${dream.id}:memories/key.md`)).toContain('[redacted');
    expect(git(dir, 'log', '-1', '--format=%B', `refs/heads/dream/${dream.id}`)).toContain(`Memory-Dream: ${dream.id}`);
    expect(spawnSync('git', ['fsck', '--full', '--no-dangling'], { cwd: dir, encoding: 'utf8' }).status).toBe(0);
  });

  it('a redaction that rewrites a pending dream\'s fork gives its record the new fork and review id', async () => {
    const SECRET = 'sk-ant-api03-FORKSECRETabcdefghijklmnopqrstuvwxyz0123456789';
    await store.execute(call('toolu_fork_secret', { command: 'create', path: '/memories/leak.md', file_text: `key: ${SECRET}\n` }), { session: 'sess_leak' });
    const dream = await store.beginDream({ inputs: [{ type: 'sessions', session_ids: ['sess_leak'] }], model: 'claude-test-model' });
    await store.executeWithReport(call('toolu_fork_note', { command: 'create', path: '/memories/tidy.md', file_text: 'tidied\n' }), { session: `dream-${dream.id}`, dream: dream.id });
    const completed = await store.finishDream(dream.id, 'completed');
    const before = completed.outputs[0];
    expect(before).toMatchObject({ type: 'review', branch: `refs/heads/dream/${dream.id}` });
    await store.redact({ text: SECRET, reason: 'leaked key', operator: 'dana' });
    const after = store.dream(dream.id);
    expect(after.memgit.fork).not.toBe(completed.memgit.fork);
    expect(after.memgit.fork).toBe(git(dir, 'merge-base', 'refs/heads/main', `refs/heads/dream/${dream.id}`).trim());
    const pending = (await store.reviews()).find((r) => r.dream === dream.id && r.state === 'pending');
    expect(pending).toBeDefined();
    expect(after.outputs[0]).toMatchObject({ type: 'review', review_id: pending!.id });
    expect(pending!.id).not.toBe((before as { review_id: string }).review_id);
    expect((await store.review(pending!.id)).calls.map((c) => c.toolUseId)).toEqual(['toolu_fork_note']);
    await store.rejectReview(pending!.id, { operator: 'dana', reason: 'not needed' });
  });

  it('an API error fails the dream with the error; its branch is kept', async () => {
    const server = await scripted([
      { content: [toolUse('toolu_e1', 'memory', { command: 'create', path: '/memories/x.md', file_text: 'x\n' })] },
      { error: { status: 400, type: 'invalid_request_error', message: 'scripted: prompt is too long' } },
    ]);
    const { dream, done } = await startDream(store, clientOf(server), { sessions: ['sess_one'], model: 'claude-test-model' });
    const ended = await done;
    expect(ended.status).toBe('failed');
    expect(ended.error).toEqual({ type: 'invalid_request_error', message: expect.stringContaining('prompt is too long') });
    expect(ended.outputs).toEqual([]);
    expect(git(dir, 'log', '-1', '--format=%s', `refs/heads/dream/${dream.id}`).trim()).toBe('toolu_e1');
    // A failed dream's branch is not a review.
    expect((await store.reviews()).some((r) => r.dream === dream.id)).toBe(false);
  });

  it('a dream over its budget of turns ends failed with a clear error; main is untouched and what it wrote stays on its branch, said so', async () => {
    const server = await scripted([
      { content: [toolUse('toolu_t1', 'memory', { command: 'create', path: '/memories/t1.md', file_text: 'one\n' })] },
      { content: [toolUse('toolu_t2', 'memory', { command: 'create', path: '/memories/t2.md', file_text: 'two\n' })] },
      { content: [{ type: 'text', text: 'never asked for' }] },
    ]);
    const mainBefore = git(dir, 'rev-parse', 'refs/heads/main').trim();
    const { dream, done } = await startDream(store, clientOf(server), { sessions: ['sess_one'], model: 'claude-test-model', maxTurns: 2 });
    const ended = await done;
    expect(ended.status).toBe('failed');
    expect(ended.error?.type).toBe('budget_exceeded');
    expect(ended.error?.message).toContain('still wanted tools after 2 turns (its budget of turns, --max-turns)');
    // The calls of its last turn ran; no third request was sent.
    expect(server.messageRequests).toHaveLength(2);
    expect(ended.error?.message).toContain('the calls of its last turn ran');
    expect(ended.error?.message).toContain(`The 2 call(s) it wrote (2 file(s)) stay on its branch refs/heads/dream/${dream.id}, which is not a review`);
    expect(ended.error?.message).toContain('main is untouched');
    expect(ended.memgit.turns).toBe(2);
    expect(ended.outputs).toEqual([]);
    expect(ended.ended_at).not.toBeNull();
    // Main did not move; the branch holds both calls, one commit each, named by their tool_use ids.
    expect(git(dir, 'rev-parse', 'refs/heads/main').trim()).toBe(mainBefore);
    expect(git(dir, 'log', '--format=%s', `${mainBefore}..refs/heads/dream/${dream.id}`).split('\n').filter(Boolean)).toEqual(['toolu_t2', 'toolu_t1']);
    expect(git(dir, 'show', `refs/heads/dream/${dream.id}:memories/t2.md`)).toBe('two\n');
    // The command the error names works as it says.
    const named = /`(git log -p [0-9a-f]{12}\.\.refs\/heads\/dream\/drm_[0-9a-f]{24})`/.exec(ended.error!.message)![1];
    expect(git(dir, ...named.split(' ').slice(1))).toContain('+one');
    // A failed dream is not a review, and the store takes a new dream.
    expect((await store.reviews()).some((r) => r.dream === dream.id)).toBe(false);
    expect(store.dream(dream.id)).toEqual(ended);
  });

  it('a dream over its budget of tokens ends failed before that reply\'s calls run; main and its branch are untouched', async () => {
    const server = await scripted([
      { content: [toolUse('toolu_k1', 'memory', { command: 'create', path: '/memories/k1.md', file_text: 'one\n' })] },
      { content: [{ type: 'text', text: 'never asked for' }] },
    ]);
    const mainBefore = git(dir, 'rev-parse', 'refs/heads/main').trim();
    const { dream, done } = await startDream(store, clientOf(server), { sessions: ['sess_one'], model: 'claude-test-model', tokenBudget: 1 });
    const ended = await done;
    expect(ended.status).toBe('failed');
    expect(ended.error?.type).toBe('budget_exceeded');
    expect(ended.error?.message).toMatch(/^the dream used \d+ tokens, over its budget of 1; the calls of its last reply did not run\. It wrote nothing; main is untouched\.$/);
    expect(server.messageRequests).toHaveLength(1);
    expect(git(dir, 'rev-parse', 'refs/heads/main').trim()).toBe(mainBefore);
    expect(git(dir, 'rev-parse', `refs/heads/dream/${dream.id}`).trim()).toBe(mainBefore);
  });

  it('cancel stops the dream at its next turn (the turn\'s tool calls do not run)', async () => {
    const server = await scripted([
      { content: [toolUse('toolu_c1', 'memory', { command: 'create', path: '/memories/y.md', file_text: 'y\n' })] },
      { content: [{ type: 'text', text: 'never asked for' }] },
    ]);
    const { dream, done } = await startDream(store, clientOf(server), {
      sessions: ['sess_one'],
      model: 'claude-test-model',
      onTurn: (now) => {
        expect(store.cancelDream(now.id).status).toBe('running');
      },
    });
    const ended = await done;
    expect(ended.status).toBe('canceled');
    expect(server.messageRequests).toHaveLength(1);
    expect(git(dir, 'rev-parse', `refs/heads/dream/${dream.id}`).trim()).toBe(git(dir, 'rev-parse', 'refs/heads/main').trim());
    // Canceling a finished dream changes nothing.
    expect(store.cancelDream(dream.id)).toEqual(ended);
  });

  it('a second dream while one is live is refused, naming the first; bad input starts nothing', async () => {
    const server = await scripted([{ content: [{ type: 'text', text: 'nothing to do' }] }]);
    // The first dream, begun and held by this process (its runner not started yet).
    const first = await store.beginDream({ inputs: [{ type: 'sessions', session_ids: ['sess_one'] }], model: 'claude-test-model' });
    const refused = await startDream(store, clientOf(server), { sessions: ['sess_two'], model: 'claude-test-model' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DreamRunningError);
    expect((refused as DreamRunningError).code).toBe('dream_running');
    expect((refused as DreamRunningError).message).toContain(first.id);
    expect((await store.finishDream(first.id, 'canceled')).status).toBe('canceled');
    const second = await startDream(store, clientOf(server), { sessions: ['sess_two'], model: 'claude-test-model' });
    expect((await second.done).status).toBe('completed');
    expect((await second.done).outputs).toEqual([]);
    await expect(startDream(store, clientOf(server), { sessions: ['sess_nope'] })).rejects.toBeInstanceOf(InvalidDreamError);
    await expect(startDream(store, clientOf(server), { sessions: ['sess_one'], instructions: 'x'.repeat(4097) })).rejects.toBeInstanceOf(InvalidDreamError);
    expect(store.dreams()).toHaveLength(2);
  });
});
