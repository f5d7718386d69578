import { Command, Option } from 'commander';
import type { RedactionOutcome } from '../../store';
import { fail, openStore, repoOption } from '../options';

interface RedactCliOptions {
  repo?: string;
  text?: string;
  textEnv?: string;
  regex?: string;
  path?: string;
  call?: string;
  from?: string;
  to?: string;
  reason?: string;
  operator?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** The secret itself is best not typed on a command line (shell history, `ps`): --text-env reads it from a variable. */
function targetOf(options: RedactCliOptions) {
  const text = options.textEnv !== undefined ? process.env[options.textEnv] : options.text;
  if (options.textEnv !== undefined && !text) fail(`the environment variable ${options.textEnv} is not set`, 2);
  return { text, regex: options.regex, path: options.path, call: options.call };
}

export function registerRedact(program: Command): void {
  program
    .command('redact')
    .summary('erase a secret or personal data from all of history, with an audit record')
    .description(
      'Erase what matches from every version of every memory file: the text (or each regex match) is\n' +
        'replaced by a marker such as "[redacted 2026-12-02 #r7]"; --path replaces a whole file; --call\n' +
        'erases the lines one call added. History is rewritten from the first affected commit (tool_use ids,\n' +
        'sessions, times and authors stay; each rewritten commit gets a Memory-Redacted trailer), the old\n' +
        'objects are pruned from disk, the record goes to refs/memgit/audit (the match only as a hash), and\n' +
        'replicas are force-pushed on their next push (logged). Always preview first with --dry-run.\n\n' +
        'Rotate a leaked credential first: a clone or replica made before the redaction still holds it.\n\n' +
        'Examples:\n' +
        '  SECRET=sk-ant-... memgit redact --text-env SECRET --reason "leaked key" --operator dana --dry-run\n' +
        '  memgit redact --path /memories/customers/jo.md --reason "GDPR erasure #118" --operator dana\n' +
        '  memgit verify-redaction r1 --text-env SECRET',
    )
    .addOption(repoOption())
    .option('--text <text>', 'the exact text to erase (prefer --text-env)')
    .option('--text-env <var>', 'read the text to erase from this environment variable')
    .option('--regex <re>', 'erase every match of this regular expression')
    .option('--path <path>', 'replace every version of this /memories file by the marker')
    .option('--call <tool_use_id>', 'erase the lines this call added, wherever they still stand')
    .option('--from <ref>', 'only commits from this commit or tool_use id on')
    .option('--to <ref>', 'only commits up to this commit or tool_use id')
    .option('--reason <text>', 'why (recorded)')
    .option('--operator <name>', 'who (recorded)', process.env.USER ?? 'operator')
    .option('--dry-run', 'show every commit and line it would change; write nothing')
    .option('--json', 'print the outcome as JSON')
    .action(async (options: RedactCliOptions) => {
      const store = await openStore(options.repo, { create: false });
      try {
        const outcome = await store.redact({
          ...targetOf(options),
          at: options.from || options.to ? { from: options.from, to: options.to } : undefined,
          reason: options.reason ?? '',
          operator: options.operator ?? 'operator',
          dryRun: options.dryRun,
          onProgress: process.stderr.isTTY && !options.json ? (m) => process.stderr.write(`\r${m}   `) : undefined,
        });
        if (process.stderr.isTTY && !options.json) process.stderr.write('\n');
        process.stdout.write(options.json ? `${JSON.stringify(toJson(outcome))}\n` : describe(outcome));
        if (outcome.blobsRedacted === 0) process.exitCode = 3;
      } finally {
        await store.close();
      }
    });

  program
    .command('redactions')
    .summary('list the redactions recorded in the store\'s audit log')
    .addOption(repoOption())
    .option('--json', 'one JSON object per line (the full records, with the old → new commit map)')
    .action(async (options: { repo?: string; json?: boolean }) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        for (const r of await store.redactionLog().records()) {
          process.stdout.write(
            options.json
              ? `${JSON.stringify(r)}\n`
              : `${r.id}  ${r.time}  ${r.operator}  ${r.kind}  ${r.commitsChanged} changed / ${r.commitsRewritten} rewritten  ${r.reason}\n`,
          );
        }
      } finally {
        await store.close();
      }
    });

  program
    .command('verify-redaction <id>')
    .summary('prove that erased text is in no object or file of the store')
    .description(
      'Search every git object (loose and packed, reachable or not) and every other file of the store for the\n' +
        'text or regex a redaction erased (given again; its hash must match the record). Exit 0 when there is\n' +
        'no trace, 1 when something still holds it. The record keeps a hash keyed with a secret of the store that\n' +
        'redacted (.git/memgit/redaction-key, never replicated): on a clone the value cannot be checked against\n' +
        'it (said on stderr), and is searched for all the same.\n\nExample:\n  SECRET=sk-ant-... memgit verify-redaction r1 --text-env SECRET',
    )
    .addOption(repoOption())
    .addOption(new Option('--text <text>', 'the erased text (prefer --text-env)'))
    .option('--text-env <var>', 'read the erased text from this environment variable')
    .option('--regex <re>', 'the erased regex')
    .option('--json', 'print the report as JSON')
    .action(async (id: string, options: RedactCliOptions) => {
      const store = await openStore(options.repo, { create: false, replicate: false });
      try {
        const { text, regex } = targetOf(options);
        const report = await store.redactionLog().verify(id, { text, regex });
        const clean = report.objectsWithText.length === 0 && report.filesWithText.length === 0;
        if (options.json) process.stdout.write(`${JSON.stringify({ ...report, clean })}\n`);
        else {
          if (report.matchNote) process.stderr.write(`memgit: note: ${report.matchNote}\n`);
          process.stdout.write(
            `${id}: ${report.objectsScanned} objects and ${report.filesScanned} files searched; ` +
              (clean ? 'no trace found\n' : `still found in ${report.objectsWithText.length} object(s) and ${report.filesWithText.length} file(s): ${[...report.objectsWithText, ...report.filesWithText].slice(0, 10).join(', ')}\n`),
          );
        }
        if (!clean) process.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}

function toJson(o: RedactionOutcome) {
  return {
    id: o.id,
    dryRun: o.dryRun,
    marker: o.marker,
    matched: o.matched,
    commitsChanged: o.commitsChanged,
    commitsRewritten: o.commitsRewritten,
    blobsRedacted: o.blobsRedacted,
    firstRewritten: o.firstRewritten,
    oldHead: o.oldHead,
    newHead: o.newHead,
    preview: o.preview,
  };
}

function describe(o: RedactionOutcome): string {
  if (o.blobsRedacted === 0) return 'nothing matched; nothing was changed\n';
  const lines: string[] = [];
  for (const item of o.preview) {
    lines.push(`${item.commit.slice(0, 12)}  ${item.toolUseId ?? '(operator)'}  ${item.session ?? '-'}  ${item.path}`);
    for (const l of item.lines) lines.push(`    ${l.line}: ${l.after}`);
    if (item.moreLines) lines.push(`    … ${item.moreLines} more line(s)`);
  }
  lines.push(
    o.dryRun
      ? `would redact ${o.blobsRedacted} version(s) of memory files in ${o.commitsChanged} commit(s), rewriting ${o.commitsRewritten} commit(s) from ${o.firstRewritten?.slice(0, 12)}; nothing was written (drop --dry-run to apply)`
      : `redaction ${o.id}: ${o.blobsRedacted} version(s) in ${o.commitsChanged} commit(s) now read ${o.marker}; ${o.commitsRewritten} commit(s) rewritten, HEAD ${o.oldHead.slice(0, 12)} -> ${o.newHead.slice(0, 12)}; old objects pruned`,
  );
  return lines.join('\n') + '\n';
}
