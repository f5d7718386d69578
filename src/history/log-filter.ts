import { MEMORY_ROOT, resolvePath } from '../contract/paths';
import { type ErrorCode, impossibleDate, InvalidPointError, isIsoTime, MemgitError, parseIsoTime } from '../store';
import { toVirtualPrefix } from './paths';

/**
 * The one log filter: what `memgit log`, the UI's commit list (`/commits`), its JSON twin and the server's
 * read API (`GET /api/v1/stores/{id}/commits`) may ask of history, parsed and validated here once, so that
 * the same words mean the same thing everywhere:
 *
 * - `since` / `until`: an ISO date or date-time (no zone = UTC; a bare `until` date runs to the end of
 *   that day, a time without seconds to the end of that minute). A date that does not exist
 *   (`2026-02-30`) is refused, never rolled over into the next month.
 * - `text`: the calls that changed how often the text occurs in the memory — that **introduced or
 *   removed** it — **case-insensitively**, counted over the memory files in scope (those below `path`, or
 *   the file `follow` follows). This is the default because an auditor asking "which call wrote this" also
 *   needs "which call took it out" (a prompt-injected call that deletes a safeguard), and because a text
 *   remembered from a page rarely has its exact case; every row says which way it went. `case=sensitive`
 *   matches the exact case (git's `log -S`), and `change=introduced` or `change=removed` keeps one
 *   direction (the UI's filter once meant "introduced" only).
 * - `session`, `path` (a path prefix: the commits that touched it or anything below it), `follow` (with a
 *   file path: follow it back through its renames), `command` (an agent command, or `operator` for
 *   rollbacks), `flagged` (calls flagged for a likely secret or personal data).
 *
 * Anything malformed is an InvalidFilterError naming the field (the UI answers 400, the CLI exits 64),
 * never a silent "no match".
 */

export const LOG_COMMANDS = ['create', 'str_replace', 'insert', 'delete', 'rename'] as const;
export const TEXT_CASES = ['insensitive', 'sensitive'] as const;
export const TEXT_CHANGES = ['either', 'introduced', 'removed'] as const;

/** A validated filter. Absent fields do not filter; `case` and `change` are set only when not the default. */
export interface LogFilter {
  session?: string;
  /** A virtual path (`/memories/...`): the commits that touched it or anything below it. */
  path?: string;
  /** With `path` naming a file: follow it back through renames instead of matching the path literally. */
  follow?: true;
  /** An agent command, or `operator` for rollbacks. */
  command?: string;
  /** Seconds since the epoch, inclusive. */
  since?: number;
  until?: number;
  /** The calls that changed how often this text occurs (see the module comment). */
  text?: string;
  /** With `text`: match the exact case (default: case-insensitive). */
  case?: 'sensitive';
  /** With `text`: only calls that added occurrences, or only those that removed some (default: either). */
  change?: 'introduced' | 'removed';
  /** Only calls flagged for a likely secret or personal data. */
  flagged?: true;
}

/** A filter as typed: query parameters or command-line options (strings; flags may be booleans). */
export interface LogFilterInput {
  session?: string;
  path?: string;
  follow?: string | boolean;
  command?: string;
  since?: string;
  until?: string;
  text?: string;
  case?: string;
  change?: string;
  flagged?: string | boolean;
}

export interface ParseOptions {
  /**
   * How a path is given: `virtual` takes only `/memories/...` paths the memory tool accepts (the CLI, as
   * for every other command), `relative` also a path relative to /memories (the UI's path box).
   */
  paths: 'virtual' | 'relative';
  /** Longest value of a text field (a request bound of the UI); none by default. */
  maxChars?: number;
  /** How the fields are named in messages (`--since`, `-S`); by default their own names. */
  names?: Partial<Record<keyof LogFilterInput, string>>;
}

/** A filter field that is malformed: `field` names it, the message says what is wrong and what would do. */
export class InvalidFilterError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_filter';

  constructor(
    readonly field: keyof LogFilterInput,
    message: string,
  ) {
    super(message);
  }
}

const TRUE = ['1', 'true', 'on'];
const FALSE = ['0', 'false', 'off'];

export function parseLogFilter(input: LogFilterInput, options: ParseOptions): LogFilter {
  const name = (field: keyof LogFilterInput) => options.names?.[field] ?? field;
  const refuse = (field: keyof LogFilterInput, problem: string): never => {
    throw new InvalidFilterError(field, `${name(field)} ${problem}`);
  };
  const text = (field: keyof LogFilterInput): string | undefined => {
    const value = input[field];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return refuse(field, 'must be a text');
    if (options.maxChars !== undefined && value.length > options.maxChars) refuse(field, `is longer than ${options.maxChars} characters`);
    return value;
  };
  const flag = (field: 'follow' | 'flagged', meaning: string): boolean => {
    const value = input[field];
    if (value === undefined || typeof value === 'boolean') return value === true;
    if (TRUE.includes(value)) return true;
    if (FALSE.includes(value)) return false;
    return refuse(field, `must be 1 (${meaning}) or 0`);
  };
  const filter: LogFilter = {};

  const session = text('session');
  if (session !== undefined) filter.session = session;

  const path = text('path');
  if (path !== undefined) {
    if (options.paths === 'relative') filter.path = toVirtualPrefix(path);
    else {
      const resolved = resolvePath(path);
      if (!resolved.ok) refuse('path', `must be a ${MEMORY_ROOT} path: ${resolved.error.replace(/^Error: /, '')}`);
      else filter.path = resolved.virtual;
    }
  }
  if (flag('follow', 'follow the file through its renames')) {
    if (filter.path === undefined) refuse('follow', `needs ${name('path')} naming a file`);
    if (filter.path === MEMORY_ROOT) refuse('follow', `follows one file; ${name('path')} ${MEMORY_ROOT} is the whole memory`);
    filter.follow = true;
  }

  const command = text('command');
  if (command !== undefined) {
    if (!(LOG_COMMANDS as readonly string[]).includes(command) && command !== 'operator') {
      refuse('command', `must be one of ${[...LOG_COMMANDS, 'operator'].join(', ')}`);
    }
    filter.command = command;
  }

  const since = text('since');
  if (since !== undefined) filter.since = time('since', since, false);
  const until = text('until');
  if (until !== undefined) filter.until = time('until', until, true);

  const needle = text('text');
  if (needle !== undefined) {
    if (needle === '') refuse('text', 'needs a non-empty text');
    filter.text = needle;
    // `case` and `change` qualify the text filter; without one they say nothing (a form sends them anyway).
    const textCase = text('case');
    if (textCase !== undefined && textCase !== '') {
      if (!(TEXT_CASES as readonly string[]).includes(textCase)) refuse('case', `must be one of ${TEXT_CASES.join(', ')}`);
      if (textCase === 'sensitive') filter.case = 'sensitive';
    }
    const change = text('change');
    if (change !== undefined && change !== '') {
      if (!(TEXT_CHANGES as readonly string[]).includes(change)) refuse('change', `must be one of ${TEXT_CHANGES.join(', ')}`);
      if (change !== 'either') filter.change = change as LogFilter['change'];
    }
  }

  if (flag('flagged', 'flagged calls only')) filter.flagged = true;
  return filter;

  function time(field: 'since' | 'until', value: string, endOfDay: boolean): number {
    const example = 'an ISO date or date-time such as 2026-12-02 or 2026-12-02T15:30 (no zone = UTC)';
    if (!isIsoTime(value)) return refuse(field, `must be ${example}, not ${JSON.stringify(value)}`);
    const impossible = impossibleDate(value);
    if (impossible !== null) return refuse(field, `must be a date that exists: ${JSON.stringify(value)} is not one, ${impossible}`);
    try {
      return parseIsoTime(value, { endOfDay });
    } catch (error) {
      if (!(error instanceof InvalidPointError)) throw error;
      return refuse(field, `must be ${example}: ${JSON.stringify(value)} is not a valid time`);
    }
  }
}

/** Whether a filter asks anything at all. */
export function isFiltered(filter: LogFilter): boolean {
  return Object.keys(filter).length > 0;
}
