import { AmbiguousPointError, InvalidPointError, PointNotFoundError } from './errors';
import type { HistoryEntry, HistoryIndex } from './history-index';
import { resolveRef } from './resolve-ref';

/**
 * One way to name a point in a store's history, shared by every command and page that takes one
 * (show, cat, ls, diff, blame, revert, restore, reset, the UI's `?at=`):
 *
 * - a tool_use id (`toolu_01…`): the commit that call made;
 * - a commit id, full or abbreviated to at least 4 hex digits;
 * - `HEAD`, `HEAD~N` (N commits before HEAD) or `HEAD^`;
 * - an ISO date or date-time (`2026-12-02`, `2026-12-02T15:30`, `…Z`, `…+01:00`; no zone = UTC): the
 *   memory as it was at that moment, i.e. the newest commit made at or before it.
 *
 * Every id in a store is hostile, so a ref that two readings send to different commits (an agent naming
 * its call `HEAD`, or after another commit's abbreviation) is refused as ambiguous rather than guessed;
 * a full 40-digit commit id is ambiguous only with a call whose id spells it.
 */

const MAX_REF_LENGTH = 256;
const HEAD_FORM = /^HEAD(?:~(\d{1,9})|(\^+))?$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const COMMIT_PREFIX = /^[0-9a-f]{4,40}$/i;

export function isIsoTime(value: string): boolean {
  return ISO_TIME.test(value);
}

/**
 * Why an ISO date or date-time names no moment (its calendar date does not exist: `2026-02-30`), or
 * null when it does. Date.parse would roll such a date over into the next month.
 */
export function impossibleDate(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12) return `there is no month ${match[2]}`;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > days) return `${match[1]}-${match[2]} has no day ${match[3]} (it has ${days} days)`;
  return null;
}

/**
 * Seconds since the epoch of an ISO date or date-time; no zone means UTC, a bare date its first second
 * (or, with `endOfDay`, its last). Throws InvalidPointError for text that is not one, or whose date does
 * not exist.
 */
export function parseIsoTime(value: string, options: { endOfDay?: boolean } = {}): number {
  if (!isIsoTime(value)) {
    throw new InvalidPointError(`${JSON.stringify(value)} is not an ISO date or date-time (e.g. 2026-12-02 or 2026-12-02T15:30:00Z)`);
  }
  const normalised = value.replace(' ', 'T');
  const dateOnly = !normalised.includes('T');
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(normalised);
  const iso = dateOnly ? `${normalised}T00:00:00Z` : hasZone ? normalised : `${normalised}Z`;
  const millis = Date.parse(iso);
  // Date.parse rolls 2026-02-30 over to March, with or without a time of day: check the calendar date.
  if (Number.isNaN(millis) || impossibleDate(normalised) !== null) {
    throw new InvalidPointError(`${JSON.stringify(value)} is not a valid time`);
  }
  const seconds = Math.floor(millis / 1000);
  if (!options.endOfDay) return seconds;
  if (dateOnly) return seconds + 86_399;
  return /T\d{2}:\d{2}(?:Z|[+-]\d{2}:?\d{2})?$/i.test(normalised) ? seconds + 59 : seconds; // a minute without seconds: all of it
}

interface Reading {
  how: string;
  entry: HistoryEntry;
}

/** The commit a point names; see the module comment for the forms. */
export function resolvePoint(history: HistoryIndex, ref: string): HistoryEntry {
  if (typeof ref !== 'string' || ref === '' || ref.length > MAX_REF_LENGTH || (/[\s\0-\x1f\x7f]/.test(ref) && !isIsoTime(ref))) {
    throw new InvalidPointError(`${JSON.stringify(ref)} is not a point in history: name a tool_use id, a commit, HEAD, HEAD~N or an ISO time`);
  }
  // `commit:<id>` and `call:<tool_use id>` name their kind (links and forms use them): resolve-ref.ts answers.
  if (/^(commit|call):/.test(ref) && !history.byToolUseId(ref)) return resolveRef(history, ref);
  const readings: Reading[] = [];
  // A reading that names nothing (HEAD~N too far back, a time before the store) gives way to another
  // reading of the same text (a call an agent named so); its error is the answer only when none is left.
  let notFound: PointNotFoundError | null = null;
  const tryReading = (how: string, read: () => HistoryEntry) => {
    try {
      readings.push({ how, entry: read() });
    } catch (error) {
      if (!(error instanceof PointNotFoundError)) throw error;
      notFound = error;
    }
  };
  const head = HEAD_FORM.exec(ref);
  if (head) tryReading(ref, () => headRelative(history, ref, head[1] !== undefined ? Number(head[1]) : head[2]?.length ?? 0));
  if (isIsoTime(ref)) tryReading(`the memory at ${ref}`, () => atTime(history, ref));
  const call = history.byToolUseId(ref);
  if (call) readings.push({ how: `tool_use id ${ref}`, entry: call });
  if (COMMIT_PREFIX.test(ref)) {
    const lower = ref.toLowerCase();
    const exact = history.get(lower);
    if (exact) {
      // A full commit id wins over every other reading but one: a call whose id spells it (a store written
      // before such ids were refused), which resolve-ref.ts refuses, listing both candidates.
      if (call && call.commit !== exact.commit) return resolveRef(history, ref);
      return exact;
    }
    const matches = history.all().filter((e) => e.commit.startsWith(lower));
    if (matches.length > 1) {
      throw new AmbiguousPointError(`the abbreviation ${ref} matches ${matches.length} commits (${matches.slice(0, 4).map((e) => e.commit.slice(0, 12)).join(', ')}${matches.length > 4 ? ', …' : ''}); give more digits`);
    }
    if (matches.length === 1) readings.push({ how: `commit ${matches[0].commit.slice(0, 12)}`, entry: matches[0] });
  }
  const distinct = new Set(readings.map((r) => r.entry.commit));
  if (distinct.size > 1) {
    throw new AmbiguousPointError(
      `${JSON.stringify(ref)} names more than one point: ${readings.map((r) => `${r.how} (commit ${r.entry.commit.slice(0, 12)})`).join('; ')}; use the full commit id`,
    );
  }
  if (readings.length === 0 && notFound) throw notFound;
  if (readings.length === 0) throw new PointNotFoundError(ref, `no commit or tool_use id ${JSON.stringify(ref)} in this store`);
  return readings[0].entry;
}

function headRelative(history: HistoryIndex, ref: string, back: number): HistoryEntry {
  const position = history.size - 1 - back;
  const entry = position >= 0 ? history.at(position) : undefined;
  if (!entry) throw new PointNotFoundError(ref, `${ref} goes back further than the first commit (the store has ${history.size} commits)`);
  return entry;
}

/** The newest commit made at or before an ISO time: the memory as it was then. */
function atTime(history: HistoryIndex, ref: string): HistoryEntry {
  const seconds = parseIsoTime(ref);
  const entries = history.all();
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].time <= seconds) return entries[i];
  const first = entries[0];
  throw new PointNotFoundError(
    ref,
    `the store did not exist yet at ${ref}${first ? ` (its first commit is at ${new Date(first.time * 1000).toISOString()})` : ''}`,
  );
}
