import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import type { GcEngine } from '../../store';
import { openStore, repoOption } from '../options';

export function registerGc(program: Command): void {
  program
    .command('gc')
    .summary('pack the store\'s git objects and remove the loose copies')
    .description(
      'Pack every object of the store into one git pack, then remove the loose objects and old packs it replaces — only once ' +
        'the new pack and its index are on disk. When git is installed, git pack-objects compresses with deltas (memgit chooses ' +
        'what stays, makes the pack durable and removes what it replaces itself); otherwise isomorphic-git writes whole ' +
        'objects. Runs under the store\'s write ' +
        'lock, so it is safe while an agent writes. The store also packs new objects automatically every few ' +
        'thousand calls; --incremental does only that (packs loose objects, keeps the existing packs).',
    )
    .addOption(repoOption())
    .option('--incremental', 'pack only loose objects into a new pack (always isomorphic-git)')
    .addOption(new Option('--engine <engine>', 'who writes a full gc\'s pack: git (deltas), isomorphic-git (no deltas), or auto (git when installed)').choices(['auto', 'git', 'isomorphic-git']).default('auto'))
    .option('--quiet', 'print nothing on success')
    .option('--json', 'print the report as one JSON object')
    .addHelpText(
      'after',
      '\nOn a terminal, progress goes to stderr. A gc with nothing new to pack (one pack, no loose object)\n' +
        'does no work and says so.\n\nExamples:\n' +
        '  memgit gc\n' +
        '  memgit gc --incremental --json\n' +
        '  memgit gc --engine isomorphic-git',
    )
    .action(async (options: { repo?: string; incremental?: boolean; quiet?: boolean; json?: boolean; engine: GcEngine }) => {
      const store = await openStore(options.repo, { create: false });
      const objectsDir = path.join(store.gitdir, 'objects');
      const before = await diskBytes(objectsDir);
      const showProgress = process.stderr.isTTY === true && !options.quiet && !options.json;
      let shown = false;
      const onProgress = (message: string) => {
        if (!showProgress) return;
        process.stderr.write(`\r\x1b[K${message}`);
        shown = true;
      };
      const report = await store.gc({ full: !options.incremental, engine: options.engine, onProgress }).finally(() => store.close());
      if (shown) process.stderr.write('\r\x1b[K');
      const after = report.upToDate ? before : await diskBytes(objectsDir);
      if (options.json) {
        process.stdout.write(JSON.stringify({ ...report, bytesBefore: before, bytesAfter: after }) + '\n');
        return;
      }
      if (options.quiet) return;
      if (report.upToDate) {
        process.stdout.write(`nothing to pack: every object is in one pack already, no loose objects; objects: ${formatBytes(after)}\n`);
        return;
      }
      if (report.engineNote) process.stderr.write(`memgit: ${report.engineNote}\n`);
      process.stdout.write(
        `packed ${report.packedObjects} objects (${report.full ? `full repack by ${report.engine}` : 'incremental'}); ` +
          `removed ${report.looseRemoved} loose object(s) and ${report.packsRemoved} old pack(s); ` +
          `objects: ${formatBytes(before)} -> ${formatBytes(after)}\n`,
      );
    });
}

/** Disk usage (allocated blocks) of everything below `dir`. */
export async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  const walk = async (current: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else total += (await fs.promises.lstat(full)).blocks * 512;
    }
  };
  await walk(dir);
  return total;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(0)} KB`;
}
