/**
 * Redaction figures for docs/benchmarks.md (a section of `npm run bench`, or alone:
 * `node dist/bench/redaction.js [--commits=10000]`): on a copy of a generated store, erase a line that
 * stands in every one of the 500 revisions of its busiest file since the first call, so that the whole
 * history is rewritten (the worst case): the preview (dry run), the redaction itself (rewrite, audit
 * record, full repack and prune, index rebuild), and `verify-redaction`'s search of every object.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { verifyRedaction } from '../src/store/redaction';
import { ensureStore } from './generate';
import { now } from './stats';

export interface RedactionBench {
  commits: number;
  blobsRedacted: number;
  commitsRewritten: number;
  dryRunSeconds: number;
  redactSeconds: number;
  verifySeconds: number;
  objectsScanned: number;
}

export async function benchRedaction(options: { commits: number; cacheDir: string; log: (m: string) => void }): Promise<RedactionBench> {
  const source = path.join(options.cacheDir, `store-${options.commits}-1000`);
  await ensureStore(source, options.commits, 1000, options.log);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-bench-redact-'));
  try {
    const dir = path.join(work, 'store');
    fs.cpSync(source, dir, { recursive: true });
    const store = await MemoryStore.open(dir, { log: () => undefined, replicate: false, flags: false });
    const text = '# Notes 0';
    let t = now();
    const preview = await store.redact({ text, reason: 'bench', operator: 'bench', dryRun: true });
    const dryRunSeconds = (now() - t) / 1000;
    t = now();
    const outcome = await store.redact({ text, reason: 'bench', operator: 'bench' });
    const redactSeconds = (now() - t) / 1000;
    t = now();
    const report = await verifyRedaction(store.redaction(), outcome.id, { text });
    const verifySeconds = (now() - t) / 1000;
    const commits = store.history.size;
    await store.close();
    if (report.objectsWithText.length || report.filesWithText.length) throw new Error('redaction bench: the text is still there');
    options.log(`  redaction of ${preview.blobsRedacted} versions over ${outcome.commitsRewritten} commits: dry run ${dryRunSeconds.toFixed(1)} s, redact ${redactSeconds.toFixed(1)} s, verify ${verifySeconds.toFixed(1)} s`);
    return {
      commits,
      blobsRedacted: outcome.blobsRedacted,
      commitsRewritten: outcome.commitsRewritten,
      dryRunSeconds,
      redactSeconds,
      verifySeconds,
      objectsScanned: report.objectsScanned,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export function renderRedaction(r: RedactionBench): string {
  return [
    '## Redaction',
    '',
    `A line that stands in all ${r.blobsRedacted} versions of the busiest file of a ${r.commits.toLocaleString('en-US')}-commit store ` +
      `(1,000 files) since its first call is erased: ${r.commitsRewritten.toLocaleString('en-US')} commits rewritten (the worst case, the whole history).`,
    '',
    '| step | seconds |',
    '|---|---|',
    `| preview (\`--dry-run\`) | ${r.dryRunSeconds.toFixed(1)} |`,
    `| redaction: rewrite, audit record, full repack and prune, history index rebuilt | ${r.redactSeconds.toFixed(1)} |`,
    `| \`verify-redaction\`: search of all ${r.objectsScanned.toLocaleString('en-US')} objects and every file | ${r.verifySeconds.toFixed(1)} |`,
    '',
  ].join('\n');
}

if (require.main === module) {
  const commits = Number(process.argv.find((a) => a.startsWith('--commits='))?.split('=')[1] ?? 10_000);
  benchRedaction({ commits, cacheDir: path.resolve(__dirname, '..', '..', 'bench', '.cache'), log: (m) => process.stderr.write(`${m}\n`) })
    .then((r) => process.stdout.write(renderRedaction(r) + '\n'))
    .catch((error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
