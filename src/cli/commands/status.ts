import * as fs from 'node:fs';
import { Command } from 'commander';
import { listRemotes, replicationStatus, type ReplicationStatus } from '../../store';
import { openStore, repoOption } from '../options';
import { historyContext } from '../../history/context';
import { historySummary } from '../../history/summary';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .summary('the store at a glance: head, size, and how far each replica is behind')
    .description(
      'Show the store\'s HEAD, its number of commits (all of them, the store\'s first commit included: what\n' +
        '`memgit log` lists and the UI\'s overview counts) and sessions, whether it is a read-only clone, and for\n' +
        'each remote the replication lag: commits not yet pushed and the age of the oldest (what a lost disk\n' +
        'would cost now), the last push, and whether replication stopped and why.\n\nExample:\n  memgit status --json',
    )
    .addOption(repoOption())
    .option('--json', 'print one JSON object')
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        const head = await store.refreshHead();
        const history = historySummary(historyContext(store));
        const port = store.replication();
        const replicas: ReplicationStatus[] = [];
        for (const remote of await listRemotes({ fs, gitdir: store.gitdir })) replicas.push(replicationStatus(port, remote));
        const summary = {
          repo: store.dir,
          head,
          commits: history.commits,
          sessions: history.sessions,
          readOnly: store.readOnly,
          replicas,
        };
        if (options.json) {
          process.stdout.write(`${JSON.stringify(summary)}\n`);
          return;
        }
        const lines = [
          `store    ${store.dir}${store.readOnly ? ' (read-only clone)' : ''}`,
          `head     ${head.slice(0, 12)}  ${summary.commits} commit(s), ${summary.sessions} session(s)`,
        ];
        if (replicas.length === 0) lines.push('replicas none (memgit remote add NAME URL --auto)');
        for (const r of replicas) {
          const lag = r.lagCommits === 0 ? 'up to date' : `${r.lagCommits} commit(s) behind, oldest ${formatAge(r.oldestUnpushedAgeSeconds ?? 0)} old`;
          lines.push(`replica  ${r.remote} ${r.url} (${r.auto ? 'auto' : 'manual'}): ${r.stopped ? 'STOPPED' : lag}`);
          if (r.stopped) lines.push(`         stopped ${r.stopped.at}: ${r.stopped.reason}`);
          if (r.headProblem) lines.push(`         warning: ${r.headProblem}`);
          if (r.lastError) lines.push(`         last error ${r.lastError.at} (attempt ${r.lastError.attempts}): ${r.lastError.message}`);
          if (r.pushedAt) lines.push(`         last push ${r.pushedAt}`);
        }
        process.stdout.write(lines.join('\n') + '\n');
      } finally {
        await store.close();
      }
    });
}

function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}
