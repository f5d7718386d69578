import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import * as lockfile from 'proper-lockfile';
import { ChatSession, ContextEvent, DEFAULT_MODEL, MemoryCall } from '../chat-session';
import { lastToolResults, RecordedToolResult, ScriptedReply, ScriptedServer } from '../scripted-server';
import { historyContext } from '../../history/context';
import { historySummary } from '../../history/summary';
import { startDream } from '../../dream';
import { describeHolder, liveHolders, MemoryStore, NotAStoreError, StoreInUseError, type DreamRecord } from '../../store';
import { DEMO_DREAM } from './dream';
import { DEMO_SESSIONS, DEMO_SYSTEM, DemoSession, sessionStart } from './transcript';
import { RECORDED_TOOL_RESULTS } from './tool-results';

import { DEFAULT_DEMO_DIR } from './defaults';

export { DEFAULT_DEMO_DIR };
/** Written into a demo store's .git, so that a rebuild only ever deletes a folder the demo made. */
const DEMO_MARKER = path.join('memgit', 'demo-store');

export interface DemoBuildOptions {
  /** Check every tool_result against the recording (default true; false only to re-record). */
  verify?: boolean;
  /** Called when a session starts. */
  onSession?: (session: DemoSession) => void;
  onText?: (text: string) => void;
  onMemoryCall?: (call: MemoryCall) => void;
  onContextEvent?: (event: ContextEvent) => void;
  /** The caller already holds `lockDemoDir(dir)` (the CLI keeps it until its server is registered). */
  locked?: boolean;
  /** The store's review policy during the replay (docs/review.md); default off, as the recording was made. */
  review?: 'off' | 'flagged' | 'all';
  /**
   * After the sessions, the demo's scripted dream (src/agent/demo/dream.ts): its branch waits as a review.
   * Default: with the review policy off (the dream's edits are written against the recording's main).
   */
  dream?: boolean;
}

export interface DemoBuildResult {
  dir: string;
  sessions: string[];
  /** Commits written by the agent (the store's first commit not counted). */
  commits: number;
  /** Every tool_result memgit sent back, in order: the material of tool-results.json. */
  toolResults: RecordedToolResult[];
  /** The demo's dream, completed (its output is a pending review), or null when none was run. */
  dream: DreamRecord | null;
  millis: number;
}

/**
 * Build a fresh demo store in `dir` by replaying the bundled transcript: a scripted Messages API server
 * plays Claude's side, and each session runs through ChatSession — the SDK's tool runner with memgit's
 * memory tool, exactly as `memgit chat` does. No API key and no network.
 */
export async function buildDemoStore(dir: string, options: DemoBuildOptions = {}): Promise<DemoBuildResult> {
  const started = Date.now();
  const target = path.resolve(dir);
  const release = options.locked ? null : await lockDemoDir(target);
  try {
    return await build(target, options, started);
  } finally {
    await release?.();
  }
}

/**
 * Exclusive right to rebuild the demo store in `dir`: two demos started together must not both delete and
 * rebuild it. The lock lives outside `dir` (which a rebuild deletes). Refused at once when held.
 */
export async function lockDemoDir(dir: string): Promise<() => Promise<void>> {
  const target = path.resolve(dir);
  const lockfilePath = path.join(os.tmpdir(), `memgit-demo-${createHash('sha256').update(target).digest('hex').slice(0, 16)}.lock`);
  try {
    return await lockfile.lock(target, {
      realpath: false,
      lockfilePath,
      retries: 0,
      stale: 10_000,
      onCompromised: () => undefined, // only rebuilds are excluded; a stalled holder must not crash its server
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw new StoreInUseError(`another \`memgit demo\` is building ${target} right now; nothing was changed`, []);
  }
}

async function build(target: string, options: DemoBuildOptions, started: number): Promise<DemoBuildResult> {
  await clearDemoDir(target);
  // The dream's edits are written against main as the recording left it: not with a review policy that held some of it.
  const dreaming = options.dream ?? (options.review === undefined || options.review === 'off');
  const script = [...DEMO_SESSIONS.flatMap((s) => withRecordedResults(s.replies, options.verify ?? true)), ...(dreaming ? DEMO_DREAM.replies : [])];
  // The recording's clock: each memory call is committed (and each read logged) at the recorded time of
  // the reply that made it, and the store's first commit at the start of the first session. A build today
  // then reads as the three conversations of late November did, and dated points (`ls --at 2026-11-26`) work.
  const recordedTimes = new Map<ScriptedReply, number>(script.map((reply) => [reply, Date.parse(reply.at)]));
  let now = sessionStart(DEMO_SESSIONS[0].id);
  const server = await ScriptedServer.start(script, { onReply: (reply) => (now = recordedTimes.get(reply) ?? now) });
  let store: MemoryStore | undefined;
  try {
    store = await MemoryStore.open(target, { clock: () => now });
    await fs.promises.writeFile(path.join(store.gitdir, DEMO_MARKER), 'built by `memgit demo`; rebuilt on every run\n', { mode: 0o600 });
    if (options.review && options.review !== 'off') await store.setReviewPolicy({ review: options.review, operator: 'demo', reason: 'memgit demo --review' });
    const client = new Anthropic({ apiKey: 'demo-needs-no-key', baseURL: server.url, maxRetries: 0 });
    const commitCount = (s: MemoryStore) => historySummary(historyContext(s)).commits;
    const base = commitCount(store);
    for (const session of DEMO_SESSIONS) {
      options.onSession?.(session);
      const chat = new ChatSession({
        client,
        store,
        session: session.id,
        model: DEFAULT_MODEL,
        system: DEMO_SYSTEM,
        contextEditing: session.contextEditing,
        compaction: session.compaction,
        onText: options.onText,
        onMemoryCall: options.onMemoryCall,
        onContextEvent: options.onContextEvent,
      });
      await chat.send(session.prompt);
    }
    // The sessions' tool results (the recording's material), before the dream's requests.
    const toolResults = server.messageRequests.flatMap((r) => (r.body ? lastToolResults(r.body) : [])) as unknown as RecordedToolResult[];
    let dream: DreamRecord | null = null;
    if (dreaming) {
      // The dream begins at its recorded start; each of its calls is committed (on its branch) at its reply's time.
      now = Date.parse(DEMO_DREAM.start);
      const started = await startDream(store, client, { sessions: DEMO_SESSIONS.map((s) => s.id), instructions: DEMO_DREAM.instructions, model: DEFAULT_MODEL });
      dream = await started.done;
      if (dream.status !== 'completed') throw new Error(`the demo's dream ended ${dream.status}: ${dream.error?.message ?? ''}`);
      if (dream.outputs[0]?.files_touched.length !== 2) throw new Error(`the demo's dream should have changed 2 files: ${JSON.stringify(dream.outputs)}`);
    }
    if (server.remaining !== 0) throw new Error(`the demo transcript has ${server.remaining} unplayed replies`);
    return {
      dir: target,
      sessions: DEMO_SESSIONS.map((s) => s.id),
      commits: commitCount(store) - base,
      toolResults,
      dream,
      millis: Date.now() - started,
    };
  } finally {
    await store?.close();
    await server.close();
  }
}

/** Every reply after the first of a session expects the results of the previous reply's memory calls. */
function withRecordedResults<R extends ScriptedReply>(replies: R[], verify: boolean): R[] {
  if (!verify) return replies;
  const recorded = RECORDED_TOOL_RESULTS;
  return replies.map((reply, i) => {
    if (i === 0) return reply;
    const expectToolResults = replies[i - 1].content.flatMap((block) => {
      if (block.type !== 'tool_use') return [];
      const result = recorded[block.id];
      if (!result) throw new Error(`tool-results.json has no recording for ${block.id}`);
      return [{ type: 'tool_result' as const, tool_use_id: block.id, ...result }];
    });
    return { ...reply, expectToolResults };
  });
}

/** Empty `dir` if it is a demo store built earlier; refuse to touch anything else. */
async function clearDemoDir(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await fs.promises.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (entries.length === 0) return;
  if (!fs.existsSync(path.join(dir, '.git', DEMO_MARKER))) {
    throw new NotAStoreError(
      `${dir} exists and was not built by \`memgit demo\`; choose another --dir or remove it yourself`,
    );
  }
  // A demo (or `memgit serve`) still serving this store: rebuilding would pull it from under that server.
  const holders = await liveHolders(path.join(dir, '.git'));
  if (holders.length > 0) {
    throw new StoreInUseError(
      `the demo store ${dir} is in use by ${holders.map(describeHolder).join(', ')}; nothing was rebuilt. ` +
        'Stop it first, or build another demo store with --dir DIR',
      holders,
    );
  }
  await fs.promises.rm(dir, { recursive: true, force: true });
}
