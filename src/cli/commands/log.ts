import { Command } from 'commander';
import type { HistoryEntry } from '../../store/history-index';
import { touchesPath } from '../../store/history/touches-path';
import { commitRecord, CallRecord } from '../../history/records';
import { listCalls } from '../../history/calls';
import { oneLine } from '../../store/commit-message';
import type { MemoryStore } from '../../store/memory-store';
import { openStore, positiveInteger, repoOption } from '../options';

export function registerLog(program: Command): void {
  program
    .command('log')
    .summary('list the commits of a store, newest first')
    .description(
      'List the store\'s commits, newest first: commit id, time, session, command,\n' +
        'path(s) and the tool_use id (or the operator action). --json prints one commit\n' +
        'record (schema memgit.commit/1, see docs/records.md) per line.',
    )
    .addOption(repoOption())
    .option('--session <id>', 'only commits of this session')
    .option('--path <path>', 'only commits that touched this /memories path or anything below it')
    .option('-n, --max-count <n>', 'at most this many commits', positiveInteger)
    .option('--json', 'one JSON object per line')
    .option('--all-calls', 'every call, reads and failed calls too (from the call log), marked read / write / FAILED')
    .action(async (options: { repo?: string; session?: string; path?: string; maxCount?: number; json?: boolean; allCalls?: boolean }) => {
      const store = await openStore(options.repo, { create: false });
      if (options.allCalls) {
        await printCalls(store, options);
        await store.close();
        return;
      }
      let entries = options.session ? store.history.bySession(options.session) : [...store.history.all()];
      if (options.path !== undefined) entries = entries.filter((e) => touchesPath(e, options.path!));
      entries = entries.reverse();
      if (options.maxCount) entries = entries.slice(0, options.maxCount);
      const out: string[] = [];
      for (const entry of entries) out.push(options.json ? JSON.stringify(commitRecord(entry)) : toLine(entry));
      if (out.length) process.stdout.write(out.join('\n') + '\n');
      else if (!options.json) process.stderr.write('memgit: no commits match\n');
      await store.close();
    });
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
  const outcome = call.kind === 'write' ? call.commit!.slice(0, 12) : call.kind === 'failed' ? `error: ${oneLine(call.error ?? '', 120)}` : '';
  return [call.time.replace(/\.\d+Z$/, 'Z'), oneLine(call.session), kind.padEnd(6), what, oneLine(call.id), outcome].join('  ').trimEnd();
}

export function toLine(entry: HistoryEntry): string {
  const time = new Date(entry.time * 1000).toISOString().replace('.000Z', 'Z');
  const what = entry.command
    ? `${entry.command} ${entry.path ?? ''}${entry.newPath ? ` -> ${entry.newPath}` : ''}`
    : entry.actor ? `${entry.actor}` : '(store)';
  return [entry.commit.slice(0, 12), time, entry.session ?? '-', what, entry.toolUseId ?? entry.title].join('  ');
}
