import * as fs from 'node:fs';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import { isValidId } from '../../contract/paths';
import { parseCommitMessage } from '../commit-message';
import { DreamNotFoundError, DreamRunningError, InvalidDreamError, ReadOnlyStoreError } from '../errors';
import { repoPathToVirtual } from '../git-reader';
import { isKeep } from '../rollback/memory-state';
import { diffTrees } from '../objects';
import { isProcessAlive } from '../process-alive';
import { dreamReviewId, dreamRef, DREAM_ID_PATTERN } from '../review/names';
import type { ReviewPort } from '../review/port';
import { readRef } from '../review/refs';
import {
  cancelFile,
  emptyUsage,
  MAX_DREAM_INSTRUCTIONS,
  newDreamId,
  readDream,
  readDreams,
  thisHost,
  writeDream,
  type DreamInput,
  type DreamRecord,
  type DreamStatus,
  type DreamUsage,
} from './records';

/**
 * Dreams, the store's side (issue 28, docs/dreams.md): the dream resource and its lifecycle. A dream is
 * started under the write lock (at most one pending or running per store: a second is refused naming the
 * first), its branch `refs/heads/dream/<id>` forked from main then; the runner (src/dream) writes through
 * the store's memory tool bound to that branch, reports usage per turn, checks for a cancel between turns
 * and finishes the dream. A dream left pending or running by a process that is gone is failed
 * ("interrupted") the next time the store's dreams are read. In every case the branch is kept; a
 * completed dream's branch is a pending review (src/store/review).
 */

export * from './records';

/** The dreams this process runs (a record naming this pid but not here was left by a crash or a reused pid). */
const ACTIVE = new Set<string>();

export interface DreamRequest {
  inputs: DreamInput[];
  model: string;
  instructions?: string | null;
}

const MODEL = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,99}$/;

/** Check a request (bad input starts nothing). Session ids must be ids; the runner checks that the store knows them. */
export function checkDreamRequest(request: DreamRequest): DreamRequest {
  if (typeof request !== 'object' || request === null) throw new InvalidDreamError('a dream request must be an object');
  if (typeof request.model !== 'string' || !MODEL.test(request.model)) throw new InvalidDreamError(`invalid model ${JSON.stringify(request.model).slice(0, 120)}`);
  const instructions = request.instructions ?? null;
  if (instructions !== null && typeof instructions !== 'string') throw new InvalidDreamError('instructions must be a string');
  if (instructions !== null && instructions.length > MAX_DREAM_INSTRUCTIONS) {
    throw new InvalidDreamError(`instructions are ${instructions.length} characters; at most ${MAX_DREAM_INSTRUCTIONS}`);
  }
  if (!Array.isArray(request.inputs) || request.inputs.length > 10) throw new InvalidDreamError('inputs must be a list (at most 10)');
  const inputs: DreamInput[] = [];
  for (const input of request.inputs) {
    if (typeof input !== 'object' || input === null || input.type !== 'sessions' || !Array.isArray(input.session_ids)) {
      throw new InvalidDreamError('each input must be {"type": "sessions", "session_ids": [...]}');
    }
    if (input.session_ids.length > 100) throw new InvalidDreamError('at most 100 sessions per dream');
    for (const id of input.session_ids) if (!isValidId(id)) throw new InvalidDreamError(`invalid session id ${JSON.stringify(id).slice(0, 140)}`);
    inputs.push({ type: 'sessions', session_ids: [...new Set(input.session_ids as string[])] });
  }
  if (inputs.reduce((n, i) => n + i.session_ids.length, 0) > 100) throw new InvalidDreamError('at most 100 sessions per dream');
  return { inputs, model: request.model, instructions: instructions === '' ? null : instructions };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isLive(dream: DreamRecord): boolean {
  return dream.status === 'pending' || dream.status === 'running';
}

/** A live dream whose process is gone (this host only: another host's process cannot be asked). */
function orphaned(dream: DreamRecord): boolean {
  if (!isLive(dream) || dream.memgit.host !== thisHost()) return false;
  if (dream.memgit.pid === process.pid) return !ACTIVE.has(dream.id);
  return !isProcessAlive(dream.memgit.pid);
}

/** Fail the dreams a killed process left pending or running ("interrupted"); their branches stay. */
function sweep(port: Pick<ReviewPort, 'gitdir' | 'now' | 'readOnly'>, dreams: DreamRecord[]): DreamRecord[] {
  return dreams.map((dream) => {
    if (!orphaned(dream) || port.readOnly) return dream;
    const failed: DreamRecord = {
      ...dream,
      status: 'failed',
      error: { type: 'interrupted', message: `interrupted: the process running it (pid ${dream.memgit.pid}) ended before the dream did; its branch ${dream.memgit.branch} is kept` },
      ended_at: iso(port.now()),
    };
    writeDream(port.gitdir, failed);
    fs.rmSync(cancelFile(port.gitdir, dream.id), { force: true });
    return failed;
  });
}

/** Every dream of the store, newest first (interrupted ones failed first). */
export function listDreams(port: Pick<ReviewPort, 'gitdir' | 'now' | 'readOnly'>): DreamRecord[] {
  return sweep(port, readDreams(port.gitdir));
}

export function getDream(port: Pick<ReviewPort, 'gitdir' | 'now' | 'readOnly'>, id: string): DreamRecord {
  if (typeof id !== 'string' || !DREAM_ID_PATTERN.test(id)) throw new DreamNotFoundError(String(id).slice(0, 40));
  const dream = readDream(port.gitdir, id);
  if (!dream) throw new DreamNotFoundError(id);
  return sweep(port, [dream])[0];
}

/**
 * Start a dream: checked, then under the write lock the store's dreams are swept, a live one refuses
 * (DreamRunningError), the branch is forked from main and the record written `pending`. The caller (the
 * runner) must finish it; until then this process holds it.
 */
export async function beginDream(port: ReviewPort, request: DreamRequest): Promise<DreamRecord> {
  if (port.readOnly) throw new ReadOnlyStoreError();
  const checked = checkDreamRequest(request);
  return port.exclusive(async () => {
    const live = listDreams(port).filter(isLive);
    if (live.length) throw new DreamRunningError(live[0].id);
    const head = await port.refreshHead();
    const id = newDreamId();
    const branch = dreamRef(id);
    const dream: DreamRecord = {
      type: 'dream',
      id,
      status: 'pending',
      inputs: checked.inputs,
      outputs: [],
      model: checked.model,
      instructions: checked.instructions ?? null,
      usage: emptyUsage(),
      error: null,
      created_at: iso(port.now()),
      ended_at: null,
      memgit: { branch, fork: head, turns: 0, pid: process.pid, host: thisHost() },
    };
    ACTIVE.add(id);
    try {
      await port.createRef(branch, head);
      writeDream(port.gitdir, dream);
    } catch (error) {
      ACTIVE.delete(id);
      throw error;
    }
    return dream;
  });
}

/** The runner's progress: running, one more turn, its usage added. */
export function recordTurn(port: Pick<ReviewPort, 'gitdir'>, id: string, usage: Partial<DreamUsage> | null | undefined): DreamRecord {
  const dream = held(port, id);
  const sum = { ...dream.usage };
  for (const key of Object.keys(sum) as Array<keyof DreamUsage>) {
    const n = usage?.[key];
    if (typeof n === 'number' && Number.isFinite(n) && n > 0) sum[key] += n;
  }
  const next: DreamRecord = { ...dream, status: 'running', usage: sum, memgit: { ...dream.memgit, turns: dream.memgit.turns + 1 } };
  writeDream(port.gitdir, next);
  return next;
}

/** Mark a dream running (its first request is on its way). */
export function markRunning(port: Pick<ReviewPort, 'gitdir'>, id: string): DreamRecord {
  const dream = held(port, id);
  const next: DreamRecord = { ...dream, status: 'running' };
  writeDream(port.gitdir, next);
  return next;
}

function held(port: Pick<ReviewPort, 'gitdir'>, id: string): DreamRecord {
  const dream = readDream(port.gitdir, id);
  if (!dream) throw new DreamNotFoundError(id);
  if (!ACTIVE.has(id) || !isLive(dream)) throw new InvalidDreamError(`dream ${id} is not running in this process`);
  return dream;
}

/** Ask a pending or running dream to stop at its next turn (from any process). A finished dream is returned as it is. */
export function requestCancel(port: Pick<ReviewPort, 'gitdir' | 'now' | 'readOnly'>, id: string): DreamRecord {
  const dream = getDream(port, id);
  if (!isLive(dream)) return dream;
  fs.writeFileSync(cancelFile(port.gitdir, id), `${iso(port.now())}\n`, { mode: 0o600 });
  return dream;
}

export function cancelRequested(port: Pick<ReviewPort, 'gitdir'>, id: string): boolean {
  return fs.existsSync(cancelFile(port.gitdir, id));
}

/**
 * End a dream: `completed` (its branch's calls become the output review: id, branch, files touched),
 * `failed` with its error, or `canceled`. The branch is kept whatever the end.
 */
export async function finishDream(
  port: ReviewPort,
  id: string,
  status: Extract<DreamStatus, 'completed' | 'failed' | 'canceled'>,
  error: { type: string; message: string } | null = null,
): Promise<DreamRecord> {
  const dream = held(port, id);
  try {
    let outputs = dream.outputs;
    const tip = readRef(port.gitdir, dream.memgit.branch);
    const written = tip ? await branchWrites(port, dream.memgit.fork, tip) : { calls: 0, files: [] };
    if (status === 'completed') {
      outputs = tip && tip !== dream.memgit.fork
        ? [{ type: 'review', review_id: dreamReviewId(id, dream.memgit.fork), branch: dream.memgit.branch, files_touched: written.files }]
        : [];
    }
    let failure: DreamRecord['error'] = null;
    if (status === 'failed') {
      const base = error ?? { type: 'error', message: 'failed' };
      // Said plainly: a failed dream is not a review, but what it wrote is kept on its branch.
      const kept = written.calls
        ? ` The ${written.calls} call(s) it wrote (${written.files.length} file(s)) stay on its branch ${dream.memgit.branch}, which is not a review: inspect them with \`git log -p ${dream.memgit.fork.slice(0, 12)}..${dream.memgit.branch}\`; main is untouched.`
        : ' It wrote nothing; main is untouched.';
      failure = { type: base.type, message: `${base.message.replace(/[.\s]+$/, '')}.${kept}` };
    }
    const next: DreamRecord = { ...dream, status, outputs, error: failure, ended_at: iso(port.now()) };
    writeDream(port.gitdir, next);
    fs.rmSync(cancelFile(port.gitdir, id), { force: true });
    return next;
  } finally {
    ACTIVE.delete(id);
  }
}

/** The dream's calls on its branch (commits from the fork to the tip) and the memory files they changed (virtual paths, sorted). */
async function branchWrites(port: ReviewPort, fork: string, tip: string): Promise<{ calls: number; files: string[] }> {
  const files = new Set<string>();
  let calls = 0;
  let cursor = tip;
  for (let guard = 0; cursor !== fork && guard < 100_000; guard++) {
    const { commit } = await port.objects.readCommit(cursor);
    const parent = commit.parent[0];
    if (!parent) break;
    const meta = parseCommitMessage(commit.message);
    if (meta.dream === undefined) break;
    calls += 1;
    for (const c of await diffTrees(port.objects, await port.commitTree(parent), commit.tree)) {
      if (c.path.startsWith(`${MEMORY_REPO_ROOT}/`) && !isKeep(c.path)) files.add(repoPathToVirtual(c.path));
    }
    cursor = parent;
  }
  return { calls, files: [...files].sort() };
}
