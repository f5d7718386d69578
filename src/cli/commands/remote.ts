import * as fs from 'node:fs';
import { Command } from 'commander';
import { addRemote, displayUrl, errorDetail, forgetRemoteState, inspectRemoteHead, listRemotes, removeRemote } from '../../store';
import { openStore, repoOption } from '../options';

export function registerRemote(program: Command): void {
  const remote = program
    .command('remote')
    .summary('the git servers a store is replicated to')
    .description(
      'Manage the remotes a store is mirrored to (any smart-HTTP git server: GitHub, GitLab, Gitea, a bare\n' +
        'repository behind git http-backend). Credentials are never stored: --token-env names the environment\n' +
        'variable that holds the token, read at push time.\n\n' +
        'Example:\n' +
        '  export MEMGIT_BACKUP_TOKEN=...\n' +
        '  memgit remote add backup https://git.example.com/acme/memory.git --token-env MEMGIT_BACKUP_TOKEN --auto',
    );
  remote
    .command('add <name> <url>')
    .description('add a remote (with --auto, every commit is pushed to it in the background)')
    .addOption(repoOption())
    .option('--token-env <var>', 'environment variable that holds the token (sent as the basic-auth password)')
    .option('--user <name>', 'basic-auth user name sent with the token', 'memgit')
    .option('--auto', 'push after every commit, in the background (continuous replication)')
    .action(async (name: string, url: string, options: { repo?: string; tokenEnv?: string; user: string; auto?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        const added = await addRemote({ fs, gitdir: store.gitdir }, { name, url, tokenEnv: options.tokenEnv, user: options.user, auto: options.auto });
        process.stdout.write(
          `added remote ${added.name} ${displayUrl(added.url)}${added.tokenEnv ? ` (token from $${added.tokenEnv})` : ''}` +
            `${added.auto ? '; every commit is pushed to it' : '; push with `memgit push`'}\n`,
        );
        // The remote is asked once now, so that a replica nobody could clone with git is known at once.
        try {
          const problem = await inspectRemoteHead(store.gitdir, added, 10_000);
          if (problem) process.stderr.write(`memgit: warning: ${problem}\n`);
        } catch (error) {
          process.stderr.write(`memgit: note: ${errorDetail(error)} (the remote is kept; a push checks again)\n`);
        }
      } finally {
        await store.close();
      }
    });
  remote
    .command('list')
    .description('list the remotes and how they are pushed to')
    .addOption(repoOption())
    .option('--json', 'one JSON object per line')
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        for (const r of await listRemotes({ fs, gitdir: store.gitdir })) {
          const row = { name: r.name, url: displayUrl(r.url), tokenEnv: r.tokenEnv, user: r.user, auto: r.auto };
          process.stdout.write(
            options.json ? `${JSON.stringify(row)}\n` : `${r.name}\t${row.url}\t${r.auto ? 'auto' : 'manual'}${r.tokenEnv ? `\ttoken from $${r.tokenEnv}` : ''}\n`,
          );
        }
      } finally {
        await store.close();
      }
    });
  remote
    .command('remove <name>')
    .description('stop replicating to a remote and forget it (nothing on the server is touched)')
    .addOption(repoOption())
    .action(async (name: string, options: { repo?: string }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        await removeRemote({ fs, gitdir: store.gitdir }, name);
        forgetRemoteState(store.gitdir, name);
        process.stdout.write(`removed remote ${name}\n`);
      } finally {
        await store.close();
      }
    });
}
