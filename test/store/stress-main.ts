/**
 * `npm run stress`: the long fault-injection run (200 kills of a writer, 20 of them while it creates a
 * brand-new store), printing progress and the tally. Exits non-zero on any failure.
 *
 * Usage: node dist/test/store/stress-main.js [kills] [initKills] [seed]
 */
import { runCrashCampaign } from './crash-harness';

async function main(): Promise<void> {
  const [kills = '200', initKills = '20', seed = String(Date.now() % 100000)] = process.argv.slice(2);
  const started = Date.now();
  const tally = await runCrashCampaign({
    kills: Number(kills),
    initKills: Number(initKills),
    seed: Number(seed),
    progress: (line) => process.stdout.write(`${line}\n`),
  });
  const { failures, ...figures } = tally;
  process.stdout.write(`\nseed ${seed}, ${((Date.now() - started) / 1000).toFixed(1)} s\n${JSON.stringify(figures, null, 2)}\n`);
  if (failures.length) {
    process.stdout.write(`\n${failures.length} failure(s):\n${failures.join('\n')}\n`);
    process.exit(1);
  }
  process.stdout.write('no failures\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
