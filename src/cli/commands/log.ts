import { Command, Option } from 'commander';
import { errorMessage } from '../../contract/format';
import { resolvePath, isValidId } from '../../contract/paths';
import { AGENT_COMMANDS, commitPatches, commitStat, LogFilter, LogRow, queryLog } from '../../history/log-query';
import type { HistoryEntry } from '../../store/history-index';
import { InvalidPointError } from '../../store/errors';
import { commitRecord, CallRecord } from '../../history/records';
import { listCalls } from '../../history/calls';
import { oneLine } from '../../store/commit-message';
import type { MemoryStore } from '../../store/memory-store';
import { parseIsoTime } from '../../store/points';
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
    .addOption(new Option('--command <command>', 'only calls of this command (operator = rollbacks)').choices([...AGENT_COMMANDS, 'operator']))
    .option('--since <time>', 'only commits at or after this ISO time (no zone = UTC)')
    .option('--until <time>', 'only commits at or before this ISO time (a bare date: to its end)')
    .option('-S <text>', 'only calls that introduced or removed this text (changed how often it occurs)')
    .option('-i, --ignore-case', 'with -S: match the text case-insensitively')
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
        if (filter.session !== undefined && store.history.bySession(filter.session).length === 0) {
          const session = filter.session;
          if (!(await store.callLog.read()).some((c) => c.session === session)) {
            fail(`no session ${JSON.stringify(session)} in this store (memgit sessions lists them)`);
          }
          // A session that only read (or whose calls all failed) is in the call log, not in the history.
          process.stderr.write(`memgit: session ${session} made no commits; its reads and failed calls: memgit log --all-calls --session ${session}\n`);
          return;
        }
        if (filter.follow && filter.path !== undefined && store.history.byPath(filter.path.slice(1)).length === 0) {
          fail(`--follow needs a file that has history: nothing was ever written at ${filter.path}`);
        }
        const rows = await queryLog(store, filter);
        const out: string[] = [];
        for (const row of rows) out.push(await formatRow(store, row, options));
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
  ignoreCase?: boolean;
  maxCount?: number;
  oneline?: boolean;
  patch?: boolean;
  stat?: boolean;
  json?: boolean;
  allCalls?: boolean;
}

/** Validate the options: anything malformed is a usage error (exit 64), never "no commits match". */
function parseLogOptions(options: LogCliOptions): LogFilter {
  const filter: LogFilter = { limit: options.maxCount, command: options.command, follow: options.follow };
  if (options.session !== undefined) {
    if (!isValidId(options.session)) usage(`invalid --session ${JSON.stringify(options.session)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
    filter.session = options.session;
  }
  if (options.path !== undefined) {
    const resolved = resolvePath(options.path);
    if (!resolved.ok) usage(`--path: ${resolved.error.replace(/^Error: /, '')}`);
    filter.path = resolved.virtual;
  }
  if (options.follow && filter.path === undefined) usage('--follow needs --path naming a file');
  if (options.follow && filter.path === '/memories') usage('--follow follows one file; --path /memories is the whole memory');
  try {
    if (options.since !== undefined) filter.since = parseIsoTime(options.since);
    if (options.until !== undefined) filter.until = parseIsoTime(options.until, { endOfDay: true });
  } catch (error) {
    if (error instanceof InvalidPointError) usage(error.message.replace(/^memgit: /, ''));
    throw error;
  }
  if (options.S !== undefined) {
    if (options.S === '') usage('-S needs a non-empty text');
    filter.pickaxe = options.S;
    filter.ignoreCase = options.ignoreCase;
  }
  return filter;
}

async function formatRow(store: MemoryStore, row: LogRow, options: LogCliOptions): Promise<string> {
  const { entry } = row;
  if (options.json) {
    const json: Record<string, unknown> = { ...commitRecord(entry), revertedBy: row.revertedBy.map((e) => e.commit) };
    if (row.pickaxe) json.pickaxe = row.pickaxe;
    if (options.stat) json.stat = await commitStat(store.objects, entry);
    if (options.patch) json.patches = await commitPatches(store.objects, entry);
    return JSON.stringify(json) + '\n';
  }
  const mark = row.revertedBy.length ? `  (reverted by ${row.revertedBy.map((e) => e.commit.slice(0, 12)).join(', ')})` : '';
  const pickaxe = row.pickaxe ? `  [${row.pickaxe} the text]` : '';
  const head = options.oneline ? toOneline(entry) : toLine(entry);
  let text = `${head}${mark}${pickaxe}\n`;
  if (options.stat) {
    const stats = await commitStat(store.objects, entry);
    for (const s of stats) text += ` ${s.oldPath ? `${s.oldPath} -> ` : ''}${s.path} | +${s.added} -${s.removed}\n`;
    if (!stats.length) text += ' (no change to memory files)\n';
  }
  if (options.patch) {
    const patches = await commitPatches(store.objects, entry);
    text += patches.length ? `\n${patches.join('\n')}` : '';
  }
  return text;
}

export function toOneline(entry: HistoryEntry): string {
  const what = entry.command ? ` ${entry.command} ${entry.path ?? ''}${entry.newPath ? ` -> ${entry.newPath}` : ''}` : '';
  return `${entry.commit.slice(0, 12)} ${entry.toolUseId ?? entry.title}${what}`;
}

async function printCalls(store: MemoryStore, options: { session?: string; path?: string; maxCount?: number; json?: boolean }): Promise<void> {
  let calls = (await listCalls(store, { session: options.session })).reverse();
  if (options.path !== undefined) {
    const prefix = options.path.replace(/\/+$/, '');
    calls = calls.filter((c) => c.paths.some((p) => p === prefix || p.startsWith(`${prefix}/`)));
  }
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
