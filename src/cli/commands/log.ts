import { Command, Option } from 'commander';
import { errorMessage } from '../../contract/format';
import { isValidId } from '../../contract/paths';
import { commitPatches, commitStat } from '../../history/commit';
import { historyContext, HistoryContext } from '../../history/context';
import { DIFF_MAX_EDIT_LENGTH } from '../../history/diffs';
import type { HistoryEntry } from '../../history/entry';
import { queryLog, LogRow } from '../../history/log';
import { InvalidFilterError, LOG_COMMANDS, LogFilter, LogFilterInput, parseLogFilter, TEXT_CASES, TEXT_CHANGES } from '../../history/log-filter';
import { commitRecord, CallRecord } from '../../history/records';
import { listCalls } from '../../history/calls';
import { everWritten } from '../../history/revisions';
import { sessionCommits } from '../../history/sessions';
import { type MemoryStore, oneLine } from '../../store';
import { fail, openStore, positiveInteger, repoOption, usage } from '../options';

export function registerLog(program: Command): void {
  program
    .command('log')
    .summary('list the commits of a store, newest first')
    .description(
      'List the store\'s commits, newest first: commit id, time, session, command,\n' +
        'path(s) and the tool_use id (or the operator action). A call that was undone later\n' +
        'is marked "reverted by <commit>". --json prints one commit record (schema\n' +
        'memgit.commit/1, see docs/records.md) per line, with revertedBy.',
    )
    .addOption(repoOption())
    .option('--session <id>', 'only commits of this session (an unknown session is an error)')
    .option('--path <path>', 'only commits that touched this /memories path or anything below it')
    .option('--follow', 'with --path naming a file: follow it back through renames')
    .addOption(new Option('--command <command>', 'only calls of this command (operator = rollbacks)').choices([...LOG_COMMANDS, 'operator']))
    .option('--since <time>', 'only commits at or after this ISO time (no zone = UTC)')
    .option('--until <time>', 'only commits at or before this ISO time (a bare date: to its end)')
    .option('-S <text>', 'only calls that introduced or removed this text (changed how often it occurs), case-insensitively')
    .addOption(new Option('--case <case>', 'with -S: sensitive matches the exact case').choices([...TEXT_CASES]))
    .addOption(new Option('--change <change>', 'with -S: only calls that introduced the text, or only those that removed it').choices([...TEXT_CHANGES]))
    .option('-i, --ignore-case', 'with -S: match the text case-insensitively (the default; kept for scripts)')
    .option('--flagged', 'only calls flagged for a likely secret or personal data')
    .option('-n, --max-count <n>', 'at most this many commits', positiveInteger)
    .option('--oneline', 'one short line per commit: commit, tool_use id or title, command and path')
    .option('-p, --patch', 'with each commit, the unified diff of the memory files it changed')
    .option('--stat', 'with each commit, lines added and removed per file')
    .option('--json', 'one JSON object per line')
    .option('--all-calls', 'every call, reads and failed calls too (from the call log), marked read / write / FAILED')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  memgit log --session sess_20261202T140312_k3f9 --oneline\n' +
        '  memgit log --path /memories/playbooks/webhooks.md --follow -p\n' +
        '  memgit log -S "pre-approved" --since 2026-11-30      # which call wrote (or removed) this text\n' +
        '  memgit log -S "API_KEY" --case sensitive --change introduced\n' +
        '  memgit log --command operator --json                 # every rollback, for scripts',
    )
    .action(async (options: LogCliOptions) => {
      const filter = parseLogOptions(options);
      const store = await openStore(options.repo, { create: false });
      if (options.allCalls) {
        try {
          await printCalls(store, { session: filter.session, path: filter.path, maxCount: options.maxCount, json: options.json });
        } finally {
          await store.close();
        }
        return;
      }
      try {
        await store.refreshHead();
        const ctx = historyContext(store);
        if (filter.session !== undefined && sessionCommits(ctx, filter.session).length === 0) {
          const session = filter.session;
          if ((await listCalls(store, { session })).length === 0) {
            fail(`no session ${JSON.stringify(session)} in this store (memgit sessions lists them)`);
          }
          // A session that only read (or whose calls all failed) is in the call log, not in the history.
          process.stderr.write(`memgit: session ${session} made no commits; its reads and failed calls: memgit log --all-calls --session ${session}\n`);
          return;
        }
        if (filter.follow && filter.path !== undefined && !everWritten(ctx, filter.path)) {
          fail(`--follow needs a file that has history: nothing was ever written at ${filter.path}`);
        }
        const rows = await queryLog(ctx, filter, options.maxCount);
        const out: string[] = [];
        for (const row of rows) out.push(await formatRow(ctx, row, options));
        if (out.length) process.stdout.write(out.join(options.patch || options.stat ? '\n' : '') );
        else if (!options.json) process.stderr.write('memgit: no commits match\n');
      } finally {
        await store.close();
      }
    });
}

interface LogCliOptions {
  repo?: string;
  session?: string;
  path?: string;
  follow?: boolean;
  command?: string;
  since?: string;
  until?: string;
  S?: string;
  case?: string;
  change?: string;
  ignoreCase?: boolean;
  flagged?: boolean;
  maxCount?: number;
  oneline?: boolean;
  patch?: boolean;
  stat?: boolean;
  json?: boolean;
  allCalls?: boolean;
}

/** The options as the read model's one log filter; anything malformed is a usage error (exit 64), never "no commits match". */
function parseLogOptions(options: LogCliOptions): LogFilter {
  if (options.session !== undefined && !isValidId(options.session)) usage(`invalid --session ${JSON.stringify(options.session)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
  if (options.S === undefined && (options.case !== undefined || options.change !== undefined)) usage(`--${options.case !== undefined ? 'case' : 'change'} qualifies -S: give -S <text>`);
  if (options.ignoreCase && options.case === 'sensitive') usage('-i and --case sensitive contradict each other (case-insensitive is the default)');
  const input: LogFilterInput = {
    session: options.session,
    path: options.path,
    follow: options.follow,
    command: options.command,
    since: options.since,
    until: options.until,
    text: options.S,
    case: options.case,
    change: options.change,
    flagged: options.flagged,
  };
  try {
    return parseLogFilter(input, { paths: 'virtual', names: CLI_NAMES });
  } catch (error) {
    if (error instanceof InvalidFilterError) usage(error.message);
    throw error;
  }
}

/** How the log filter's fields are spelled on the command line. */
const CLI_NAMES: Record<keyof LogFilterInput, string> = {
  session: '--session',
  path: '--path',
  follow: '--follow',
  command: '--command',
  since: '--since',
  until: '--until',
  text: '-S',
  case: '--case',
  change: '--change',
  flagged: '--flagged',
};

async function formatRow(ctx: HistoryContext, row: LogRow, options: LogCliOptions): Promise<string> {
  const { entry } = row;
  if (options.json) {
    const json: Record<string, unknown> = { ...commitRecord(entry), revertedBy: row.revertedBy.map((e) => e.commit) };
    if (row.pickaxe) json.pickaxe = row.pickaxe;
    if (options.stat) json.stat = await commitStat(ctx, entry);
    if (options.patch) json.patches = await commitPatches(ctx, entry);
    return JSON.stringify(json) + '\n';
  }
  const mark = row.revertedBy.length ? `  (reverted by ${row.revertedBy.map((e) => e.commit.slice(0, 12)).join(', ')})` : '';
  const pickaxe = row.pickaxe ? `  [${row.pickaxe} the text]` : '';
  const head = options.oneline ? toOneline(entry) : toLine(entry);
  let text = `${head}${mark}${pickaxe}\n`;
  if (options.stat) {
    const stats = await commitStat(ctx, entry);
    for (const s of stats) {
      const counts = s.tooLarge ? `too different to count (over ${DIFF_MAX_EDIT_LENGTH} changed lines)` : `+${s.added} -${s.removed}`;
      text += ` ${s.oldPath ? `${s.oldPath} -> ` : ''}${s.path} | ${counts}\n`;
    }
    if (!stats.length) text += ' (no change to memory files)\n';
  }
  if (options.patch) {
    const patches = await commitPatches(ctx, entry);
    text += patches.length ? `\n${patches.join('\n')}` : '';
  }
  return text;
}

export function toOneline(entry: HistoryEntry): string {
  const what = entry.command ? ` ${entry.command} ${entry.path ?? ''}${entry.newPath ? ` -> ${entry.newPath}` : ''}` : '';
  return `${entry.commit.slice(0, 12)} ${entry.toolUseId ?? entry.title}${what}`;
}

async function printCalls(store: MemoryStore, options: { session?: string; path?: string; maxCount?: number; json?: boolean }): Promise<void> {
  let calls = (await listCalls(store, { session: options.session, path: options.path })).reverse();
  if (options.maxCount) calls = calls.slice(0, options.maxCount);
  const out = calls.map((call) => (options.json ? JSON.stringify(call) : callLine(call)));
  if (out.length) process.stdout.write(out.join('\n') + '\n');
  else if (!options.json) process.stderr.write('memgit: no calls match\n');
}

/** time, session, kind, command and paths, tool_use id, then the commit or the error. */
export function callLine(call: CallRecord): string {
  const kind = call.kind === 'failed' ? 'FAILED' : call.kind;
  const what = `${oneLine(call.command ?? '(no command)')} ${call.paths.map((p) => oneLine(p)).join(' -> ')}`.trimEnd();
  const outcome = call.kind === 'write' ? call.commit!.slice(0, 12) : call.kind === 'failed' ? `error: ${oneLine(errorMessage(call.error ?? ''), 120)}` : '';
  return [call.time.replace(/\.\d+Z$/, 'Z'), oneLine(call.session), kind.padEnd(6), what, oneLine(call.id), outcome].join('  ').trimEnd();
}

export function toLine(entry: HistoryEntry): string {
  const time = new Date(entry.time * 1000).toISOString().replace('.000Z', 'Z');
  const what = entry.command
    ? `${entry.command} ${entry.path ?? ''}${entry.newPath ? ` -> ${entry.newPath}` : ''}`
    : entry.actor ? `${entry.actor}` : '(store)';
  return [entry.commit.slice(0, 12), time, entry.session ?? '-', what, entry.toolUseId ?? entry.title].join('  ');
}
