/**
 * The write-time detectors (src/detect, issue 27): how well they sort the poisoning corpus
 * (test/fixtures/poisoning-corpus), tuning and held-out parts apart, and the time they add to a write.
 *
 *   node dist/bench/detectors.js [--reps=N]     prints the section of docs/benchmarks.md
 *
 * Latency is the detectors alone, in process, per write: the rules (`detectWrite`, synchronous) and the
 * rules plus the secret scanner (`detectWriteWithSecrets`: secretlint in its worker thread, warmed up
 * first; its first scan, which loads secretlint, is reported apart). Building the ProposedWrite is not
 * timed: the write path has the contract's outcome and the old text at hand.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { detectWrite, detectWriteWithSecrets, proposeFromToolInput, type ProposedWrite } from '../src/detect';
import { SecretScanner } from '../src/store/flags/secret-scanner';
import { loadCorpus, type CorpusEntry } from '../test/detect/corpus';
import { now } from './stats';

export interface ShareResult {
  held: number;
  total: number;
}

export interface LatencyResult {
  name: string;
  n: number;
  median: number;
  p99: number;
  max: number;
}

export interface DetectorsBench {
  poisoned: { tuning: ShareResult; holdout: ShareResult };
  benign: { tuning: ShareResult; holdout: ShareResult };
  /** Entries of the held-out part that were misclassified: id and note. */
  holdoutMisses: Array<{ id: string; note: string; verdict: string }>;
  latency: LatencyResult[];
  firstSecretScanMs: number;
  corpusWrites: number;
  reps: number;
  /** The machine's 1-minute load average when the timing ended (the machine may be shared). */
  load: number;
}

function stats(name: string, samples: number[]): LatencyResult {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { name, n: sorted.length, median: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
}

/** A typical note of about 2 KB: a customer profile with contacts, links and imperatives. */
export function typicalNote(): string {
  const lines = [
    '# Globex',
    '',
    '- Contact: Hank Scorpio (hank@globex.example), CEO; Sam Park (sam.park@globex.example) for the integration',
    '- Plan: Growth, invoiced monthly; send invoices to ap@globex.example and always CC Sam',
    '- SDK: @parcelhub/node 3.2.1, region eu-west-1, webhooks at https://hooks.globex.example/parcelhub',
    '- Prefers short answers with TypeScript examples; never suggest changes on Fridays',
    '- Time zone: PST; calls Tuesdays 17:00 CET',
    '',
    '## Setup notes',
    '',
    '- Labels are 4x6, printed on Zebra ZT410 printers in three warehouses (Springfield, Shelbyville, Capital City)',
    '- Batch endpoint live since 2026-11-27; 1,200 labels per minute at peak',
    '- Test with `curl -X POST https://api.parcelhub.example/v2/label-batches -H "Authorization: Bearer $KEY" --data @batch.json`',
    '- Known issue: their proxy strips the Parcelhub-Signature header; they whitelisted it on 2026-11-29',
    '',
    '## History',
    '',
    '- 2026-10-02: onboarding call, sandbox keys issued',
    '- 2026-10-15: first production labels',
    '- 2026-11-03: rate limit raised to 50 requests/s after their Black Friday forecast',
    '- 2026-11-20: webhook retries misconfigured (returned 500 on duplicates); fixed on their side',
    '- 2026-12-01: asked about customs forms for Canada; sent the docs link https://docs.parcelhub.example/customs',
    '',
    '## Open questions',
    '',
    '- Do they want a second sandbox for the new warehouse team?',
    '- Sam mentioned moving to the v3 SDK in Q1; check the migration guide with him first',
  ];
  return lines.join('\n') + '\n';
}

export async function benchDetectors(options: { reps?: number; corpusDir?: string; log?: (m: string) => void } = {}): Promise<DetectorsBench> {
  const reps = options.reps ?? 20;
  const log = options.log ?? (() => undefined);
  const corpus = { poisoned: loadCorpus('poisoned', options.corpusDir), benign: loadCorpus('benign', options.corpusDir) };
  const writes = new Map<CorpusEntry, ProposedWrite>();
  for (const e of [...corpus.poisoned, ...corpus.benign]) writes.set(e, await proposeFromToolInput(e.input, e.files));

  const share = (entries: CorpusEntry[]): ShareResult => ({ held: entries.filter((e) => detectWrite(writes.get(e)!).verdict === 'hold').length, total: entries.length });
  const result: DetectorsBench = {
    poisoned: { tuning: share(corpus.poisoned.filter((e) => !e.holdout)), holdout: share(corpus.poisoned.filter((e) => e.holdout)) },
    benign: { tuning: share(corpus.benign.filter((e) => !e.holdout)), holdout: share(corpus.benign.filter((e) => e.holdout)) },
    holdoutMisses: [...corpus.poisoned, ...corpus.benign]
      .filter((e) => e.holdout)
      .map((e) => ({ e, verdict: detectWrite(writes.get(e)!).verdict }))
      .filter(({ e, verdict }) => verdict !== e.expected)
      .map(({ e, verdict }) => ({ id: e.id, note: e.note, verdict })),
    latency: [],
    firstSecretScanMs: 0,
    corpusWrites: writes.size,
    reps,
    load: 0,
  };
  log(`  corpus: poisoned held ${result.poisoned.tuning.held}/${result.poisoned.tuning.total} (tuning), ${result.poisoned.holdout.held}/${result.poisoned.holdout.total} (holdout); benign held ${result.benign.tuning.held}/${result.benign.tuning.total}, ${result.benign.holdout.held}/${result.benign.holdout.total}`);

  const note = typicalNote();
  const noteCreate = await proposeFromToolInput({ command: 'create', path: '/memories/customers/globex/profile.md', file_text: note });
  const noteInsert = await proposeFromToolInput(
    { command: 'insert', path: '/memories/customers/globex/profile.md', insert_line: 7, insert_text: '- Escalations go to oncall@globex.example\n' },
    { '/memories/customers/globex/profile.md': note },
  );
  const adversarial: ProposedWrite = { command: 'create', path: '/memories/x.md', files: [{ path: '/memories/x.md', before: null, after: 'pаypal a.'.repeat(30_000).slice(0, 256 * 1024 - 1) }] };

  const scanner = new SecretScanner();
  try {
    let t = now();
    await scanner.scan('warm up');
    result.firstSecretScanMs = now() - t;
    const scan = (text: string) => scanner.scan(text);
    const time = async (name: string, inputs: ProposedWrite[], withSecrets: boolean, times: number) => {
      // One untimed pass first: the JIT compiles the patterns' matchers and the scanner's path.
      for (const w of inputs) await (withSecrets ? detectWriteWithSecrets(w, scan) : detectWrite(w));
      const samples: number[] = [];
      for (let r = 0; r < times; r++) {
        for (const w of inputs) {
          t = now();
          if (withSecrets) await detectWriteWithSecrets(w, scan);
          else detectWrite(w);
          samples.push(now() - t);
        }
      }
      const s = stats(name, samples);
      result.latency.push(s);
      log(`  ${name}: median ${s.median.toFixed(3)} ms, p99 ${s.p99.toFixed(3)} ms`);
    };
    const all = [...writes.values()];
    await time(`corpus writes (${all.length}), rules`, all, false, reps);
    await time(`corpus writes (${all.length}), rules + secret scan`, all, true, reps);
    await time('2 KB note, create, rules', [noteCreate], false, reps * 20);
    await time('2 KB note, create, rules + secret scan', [noteCreate], true, reps * 20);
    await time('one-line insert into a 2 KB note, rules + secret scan', [noteInsert], true, reps * 20);
    await time('worst case: 256 KiB of adversarial text (the cap), rules', [adversarial], false, Math.max(3, Math.round(reps / 4)));
  } finally {
    await scanner.close();
  }
  result.load = os.loadavg()[0];
  return result;
}

const pct = (s: ShareResult) => `${s.held}/${s.total} (${((100 * s.held) / s.total).toFixed(1)}%)`;
const both = (a: ShareResult, b: ShareResult): ShareResult => ({ held: a.held + b.held, total: a.total + b.total });

/** The section of docs/benchmarks.md. */
export function renderDetectors(r: DetectorsBench): string {
  const ms = (v: number) => (v >= 10 ? `${v.toFixed(1)} ms` : `${v.toFixed(3)} ms`);
  const poisonedAll = both(r.poisoned.tuning, r.poisoned.holdout);
  const benignAll = both(r.benign.tuning, r.benign.holdout);
  return [
    '## Write-time detectors',
    '',
    `The detectors of src/detect (issue 27; rules in docs/review.md) on the poisoning corpus (test/fixtures/poisoning-corpus: ` +
      `${poisonedAll.total} poisoned and ${benignAll.total} benign memory writes written for this purpose). The rules were tuned on the ` +
      'tuning part only; the held-out part was written and committed before any tuning (bench/detectors.ts).',
    '',
    '| writes held | tuning | held out | whole corpus | target (issue 27) |',
    '|---|---|---|---|---|',
    `| poisoned (should be held) | ${pct(r.poisoned.tuning)} | ${pct(r.poisoned.holdout)} | ${pct(poisonedAll)} | ≥ 90%: **${poisonedAll.held / poisonedAll.total >= 0.9 ? 'met' : 'not met'}** |`,
    `| benign (should pass) | ${pct(r.benign.tuning)} | ${pct(r.benign.holdout)} | ${pct(benignAll)} | ≤ 5%: **${benignAll.held / benignAll.total <= 0.05 ? 'met' : 'not met'}** |`,
    '',
    r.holdoutMisses.length
      ? `Held-out writes misclassified: ${r.holdoutMisses.map((m) => `${m.id} (${m.note}: ${m.verdict})`).join('; ')}.`
      : 'No held-out write was misclassified.',
    '',
    `Time the detectors add to one write, in process, after one untimed pass (${r.reps} passes over the corpus; the 2 KB note ${r.reps * 20} times). ` +
      `The secret scanner's first scan, which starts its worker and loads secretlint, took ${ms(r.firstSecretScanMs)} and is not in these figures.`,
    '',
    '| write | n | median | p99 | max |',
    '|---|---|---|---|---|',
    ...r.latency.map((l) => `| ${l.name} | ${l.n} | ${ms(l.median)} | ${ms(l.p99)} | ${ms(l.max)} |`),
    '',
    `Load average (1 min) at the end of the timing: ${r.load.toFixed(1)} on ${os.cpus().length} CPUs; p99 and max take the pauses of a shared machine and of garbage collection. ` +
      'The worst case is the cap at work: a write never costs more than scanning 256 KiB, and adds that much only when it adds that much text.',
    '',
  ].join('\n');
}

if (require.main === module) {
  const reps = Number(process.argv.find((a) => a.startsWith('--reps='))?.split('=')[1] ?? 20);
  benchDetectors({ reps, corpusDir: path.resolve(__dirname, '..', '..', 'test', 'fixtures', 'poisoning-corpus'), log: (m) => process.stderr.write(`${m}\n`) })
    .then((r) => process.stdout.write(renderDetectors(r) + '\n'))
    .catch((error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
