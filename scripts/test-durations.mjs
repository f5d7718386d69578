/**
 * `npm run test:durations`: runs the whole suite once with jest's JSON report and writes each test file's
 * duration (seconds, wall) to test/support/durations.json, from which test/support/sequencer.js starts the
 * longest files first on a machine without jest's cache (a fresh clone, CI). Or, given a report jest
 * already wrote (`node scripts/test-durations.mjs REPORT.json`), reads that instead of running the suite.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let report = process.argv[2];
if (!report) {
  report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-durations-')), 'report.json');
  const run = spawnSync(path.join(root, 'node_modules', '.bin', 'jest'), ['--json', `--outputFile=${report}`], { cwd: root, stdio: 'inherit' });
  if (!fs.existsSync(report)) process.exit(run.status ?? 1);
}
const { testResults } = JSON.parse(fs.readFileSync(report, 'utf8'));
const seconds = {};
for (const result of testResults) {
  const file = path.relative(path.join(root, 'test'), result.name).split(path.sep).join('/');
  seconds[file] = Math.round((result.endTime - result.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)));
const out = path.join(root, 'test', 'support', 'durations.json');
fs.writeFileSync(out, JSON.stringify({ measured: new Date().toISOString().slice(0, 10), seconds: sorted }, null, 2) + '\n');
process.stdout.write(`${Object.keys(sorted).length} files, ${Math.round(Object.values(sorted).reduce((a, b) => a + b, 0))} s in all: ${path.relative(root, out)}\n`);
