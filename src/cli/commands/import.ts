import { Command } from 'commander';
import { DEFAULT_MAX_FILE_BYTES, importMemoryDir, oneLine } from '../../store';
import { openStore, positiveInteger, repoOption } from '../options';
import { defaultOperator } from '../rollback-output';

export function registerImport(program: Command): void {
  program
    .command('import')
    .summary("adopt a memory directory of the SDK's BetaLocalFilesystemMemoryTool, one commit per file")
    .description(
      "Adopt an existing memory directory of the SDK's BetaLocalFilesystemMemoryTool: DIR is the folder\n" +
        'given to it (holding memories/), or that memories/ folder itself. Each file becomes one commit\n' +
        '(`import /memories/…`, actor operator:NAME), or all of them one commit with --single. Names the\n' +
        'memory tool would refuse (hidden files, control characters, …), links, special, non-UTF-8 and\n' +
        'oversized files are reported and skipped. Everything is read and checked before anything is\n' +
        'written: a file that cannot be read, or that the store holds with other content, refuses the whole\n' +
        'import and nothing is written; a file it holds byte for byte is left as it is. All or nothing: the\n' +
        'commits become durable first and the branch moves once, to the last of them, so an import that\n' +
        'fails or is killed half-way leaves the store as it was.',
    )
    .argument('<dir>', 'the memory directory')
    .addOption(repoOption())
    .option('--single', 'one commit for all the files')
    .option('--operator <name>', 'recorded as Memory-Actor: operator:<name> (default: $USER or "cli")')
    .option('--max-file-bytes <n>', 'largest file to import, in bytes', positiveInteger, DEFAULT_MAX_FILE_BYTES)
    .option('--dry-run', 'check and list what would be imported; write nothing')
    .option('--json', 'print the report as one JSON object')
    .addHelpText('after', '\nExample:\n  memgit import ./agent-memory --repo ./memories-repo\n  memgit import ./agent-memory/memories --repo ./memories-repo --single --dry-run')
    .action(async (dir: string, options: { repo?: string; single?: boolean; operator?: string; maxFileBytes: number; dryRun?: boolean; json?: boolean }) => {
      const store = await openStore(options.repo);
      const report = await importMemoryDir(store, dir, {
        operator: options.operator ?? defaultOperator(),
        single: options.single,
        dryRun: options.dryRun,
        maxFileBytes: options.maxFileBytes,
      }).finally(() => store.close());
      if (options.json) {
        process.stdout.write(JSON.stringify({ ...report, dryRun: options.dryRun === true }) + '\n');
        return;
      }
      const verb = options.dryRun ? 'would import' : 'imported';
      for (const file of report.imported) {
        process.stdout.write(`${verb} ${oneLine(file.path, 1100)} (${file.bytes} bytes)${file.commit ? `  ${file.commit.slice(0, 12)}` : ''}\n`);
      }
      for (const p of report.unchanged) process.stdout.write(`unchanged ${oneLine(p, 1100)} (already in the store)\n`);
      for (const s of report.skipped) process.stderr.write(`memgit: skipped ${oneLine(s.path, 1100)}: ${oneLine(s.reason, 1100)}\n`);
      process.stdout.write(
        `${options.dryRun ? 'dry run: ' : ''}${report.imported.length} file(s) ${verb}${options.dryRun ? '' : ` in ${report.commits.length} commit(s)`}, ` +
          `${report.unchanged.length} unchanged, ${report.skipped.length} skipped\n`,
      );
    });
}
