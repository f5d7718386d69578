import { Command } from 'commander';
import { cloneStore, MemoryStore, pullStore } from '../../store';
import { openStore, repoOption } from '../options';
import { historyContext } from '../../history/context';
import { historySummary } from '../../history/summary';

interface CloneCliOptions {
  tokenEnv?: string;
  user: string;
  json?: boolean;
}

async function cloneAndOpen(url: string, dir: string, readOnly: boolean, options: CloneCliOptions): Promise<void> {
  const started = Date.now();
  const tty = process.stderr.isTTY && !options.json;
  const { head } = await cloneStore(url, dir, {
    readOnly,
    tokenEnv: options.tokenEnv,
    user: options.user,
    onProgress: tty ? (phase, loaded, total) => process.stderr.write(`\r${phase}: ${loaded}${total ? `/${total}` : ''}   `) : undefined,
  });
  if (tty) process.stderr.write('\rbuilding the working tree and the history index…          \n');
  const store = await MemoryStore.open(dir, { create: false, replicate: false });
  const commits = historySummary(historyContext(store)).commits;
  await store.close();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ dir, head, commits, readOnly, seconds: Number(seconds) })}\n`);
  } else {
    process.stdout.write(
      `${readOnly ? 'cloned' : 'restored'} ${commits} commit(s) into ${dir} in ${seconds} s (HEAD ${head.slice(0, 12)})\n` +
        (readOnly
          ? `a read-only copy: \`memgit serve --repo ${dir}\` to audit it, \`memgit pull --repo ${dir}\` to bring it up to date\n`
          : `a writable store that goes on replicating to its origin; agents may use it now\n`),
    );
  }
}

export function registerClone(program: Command): void {
  program
    .command('clone <url> <dir>')
    .summary('copy a replicated store here, read-only, for auditing')
    .description(
      'Clone a store from its replica into a new folder as a read-only copy: `memgit serve --repo DIR` audits\n' +
        'it, `memgit pull` brings it up to date, and it never writes to the remote or takes memory writes.\n\n' +
        'Example:\n  MEMGIT_TOKEN_RO=... memgit clone https://git.example.com/acme/memory.git ./acme-audit --token-env MEMGIT_TOKEN_RO',
    )
    .option('--token-env <var>', 'environment variable that holds the token')
    .option('--user <name>', 'basic-auth user name sent with the token', 'memgit')
    .option('--json', 'print the result as JSON')
    .action((url: string, dir: string, options: CloneCliOptions) => cloneAndOpen(url, dir, true, options));

  program
    .command('restore-from <url> <dir>')
    .summary('rebuild a writable store from its replica (after a lost disk)')
    .description(
      'Disaster recovery: clone a store from its replica into a new folder as a writable store that goes on\n' +
        'replicating to the same remote. What it holds is what the replica held: commits made after the last\n' +
        'successful push (the replication lag shown by `memgit status`) are lost with the old disk.\n\n' +
        'Example:\n  memgit restore-from https://git.example.com/acme/memory.git ./memories-repo --token-env MEMGIT_BACKUP_TOKEN',
    )
    .option('--token-env <var>', 'environment variable that holds the token')
    .option('--user <name>', 'basic-auth user name sent with the token', 'memgit')
    .option('--json', 'print the result as JSON')
    .action((url: string, dir: string, options: CloneCliOptions) => cloneAndOpen(url, dir, false, options));

  program
    .command('pull [remote]')
    .summary('bring a cloned store up to date with its replica')
    .description('Fetch the replica\'s new commits and move this copy forward to them (fast-forward only).\n\nExample:\n  memgit pull --repo ./acme-audit')
    .addOption(repoOption())
    .option('--json', 'print the result as JSON')
    .action(async (remote: string | undefined, options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        const report = await pullStore(store.replication(), remote ?? 'origin');
        process.stdout.write(
          options.json
            ? `${JSON.stringify({ from: report.from, to: report.to, commits: report.commits })}\n`
            : report.commits === 0
              ? `already up to date at ${report.to.slice(0, 12)}\n`
              : `pulled ${report.commits} commit(s): ${report.from.slice(0, 12)}..${report.to.slice(0, 12)}\n`,
        );
      } finally {
        await store.close();
      }
    });
}
