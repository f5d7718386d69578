import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DREAM_ID_PATTERN } from '../review/names';

/**
 * A dream as memgit keeps it (issue 28, docs/dreams.md): one JSON file per dream,
 * `.git/memgit/dreams/<id>.json` (owner-only, written to a temp file, fsynced and renamed into place), and
 * beside it `<id>.cancel` while a cancel is asked for (a file of its own, so a cancel from another process
 * never races the runner's updates). The public shape is Anthropic's dream resource; `memgit` holds what
 * only memgit needs (the fork, the process that runs it).
 */

export type DreamStatus = 'pending' | 'running' | 'completed' | 'failed' | 'canceled';
export const DREAM_STATUSES: readonly DreamStatus[] = ['pending', 'running', 'completed', 'failed', 'canceled'];
export const MAX_DREAM_INSTRUCTIONS = 4096;

export interface DreamUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface DreamInput {
  type: 'sessions';
  session_ids: string[];
}

export interface DreamOutput {
  type: 'review';
  review_id: string;
  branch: string;
  files_touched: string[];
}

export interface DreamRecord {
  type: 'dream';
  id: string;
  status: DreamStatus;
  inputs: DreamInput[];
  outputs: DreamOutput[];
  model: string;
  instructions: string | null;
  usage: DreamUsage;
  error: { type: string; message: string } | null;
  created_at: string;
  ended_at: string | null;
  /** memgit's: the dream's branch, the commit of main it forked from, and the process running it. */
  memgit: { branch: string; fork: string; turns: number; pid: number; host: string };
}

export function emptyUsage(): DreamUsage {
  return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

export function newDreamId(): string {
  return `drm_${randomBytes(12).toString('hex')}`;
}

export function dreamsDir(gitdir: string): string {
  return path.join(gitdir, 'memgit', 'dreams');
}

function fileOf(gitdir: string, id: string): string {
  if (!DREAM_ID_PATTERN.test(id)) throw new Error(`not a dream id: ${JSON.stringify(id).slice(0, 40)}`);
  return path.join(dreamsDir(gitdir), `${id}.json`);
}

export function cancelFile(gitdir: string, id: string): string {
  return fileOf(gitdir, id).replace(/\.json$/, '.cancel');
}

function isDream(value: unknown): value is DreamRecord {
  const v = value as DreamRecord;
  return typeof v === 'object' && v !== null && v.type === 'dream' && typeof v.id === 'string' && DREAM_ID_PATTERN.test(v.id) &&
    DREAM_STATUSES.includes(v.status) && typeof v.memgit === 'object' && v.memgit !== null;
}

/** One dream's record, or null (no such dream, or a file that does not parse). */
export function readDream(gitdir: string, id: string): DreamRecord | null {
  if (!DREAM_ID_PATTERN.test(id)) return null;
  try {
    const value: unknown = JSON.parse(fs.readFileSync(fileOf(gitdir, id), 'utf8'));
    return isDream(value) && value.id === id ? value : null;
  } catch {
    return null;
  }
}

/** Every dream of the store, newest first. */
export function readDreams(gitdir: string): DreamRecord[] {
  let names: string[];
  try {
    names = fs.readdirSync(dreamsDir(gitdir));
  } catch {
    return [];
  }
  const out: DreamRecord[] = [];
  for (const name of names) {
    const m = /^(drm_[0-9a-f]{24})\.json$/.exec(name);
    const dream = m ? readDream(gitdir, m[1]) : null;
    if (dream) out.push(dream);
  }
  return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
}

/** Write a dream's record durably: a temp file fsynced, renamed into place, the directory fsynced. */
export function writeDream(gitdir: string, dream: DreamRecord, fsync = true): void {
  const file = fileOf(gitdir, dream.id);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temp, 'w', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(dream, null, 2)}\n`);
    if (fsync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, file);
  if (fsync) {
    const dir = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }
}

/** Whether the dream `id` completed (its branch is then a review). */
export function dreamCompleted(gitdir: string, id: string): boolean {
  return readDream(gitdir, id)?.status === 'completed';
}

export function thisHost(): string {
  return os.hostname();
}
