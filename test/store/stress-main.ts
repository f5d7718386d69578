/**
 * `npm run stress`: the long fault-injection run (200 kills of a writer, 20 of them while it creates a
 * brand-new store), then a kill -9 of `memgit server` under load (MEMGIT_STRESS_SERVER=0 skips it), printing
 * progress and the tally, then the mixed-abuse run of bench/abuse.ts (MEMGIT_STRESS_ABUSE=0 skips it): one
 * tenant's unfinished and dripping bodies, floods and heavy reads, colluding keys filling the body budget
 * and revoked keys' event streams while another key's calls are timed; the server must stay up, log no
 * unexpected error, stay within the memory bound of its configuration, and one attacker must cost the
 * victim no call and no MCP session. Exits non-zero on
 * any failure.
 *
 * Usage: node dist/test/store/stress-main.js [kills] [initKills] [seed]
 */
import { abuseRun, DEFAULT_ABUSE, renderAbuseSection } from '../../bench/abuse';
import { killUnderLoad } from '../../bench/server';
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
  // memgit server killed -9 under load (bench/server.ts): acknowledged calls in history, fsck, retries.
  if (process.env.MEMGIT_STRESS_SERVER !== '0') {
    const kill = await killUnderLoad({ stores: 20, clients: 8, seconds: 20 }, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`server kill -9: ${JSON.stringify(kill)}\n`);
    if (kill.missing || kill.fsckFailures || kill.retriesDiffering) failures.push(`server kill -9: ${JSON.stringify(kill)}`);
  }
  // One key abusing the server while another key's calls are timed (bench/abuse.ts).
  if (process.env.MEMGIT_STRESS_ABUSE !== '0') {
    const abuse = await abuseRun(DEFAULT_ABUSE, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`\n${renderAbuseSection(abuse)}\n`);
    if (!abuse.stillUp) failures.push('abuse run: the server did not survive');
    if (abuse.unexpected > 0) failures.push(`abuse run: ${abuse.unexpected} unexpected error(s) logged by the server`);
    if (abuse.peakRssBytes > abuse.boundBytes) failures.push(`abuse run: peak RSS ${abuse.peakRssBytes} over the bound ${abuse.boundBytes}`);
    // One attacker (each abuse with its own key) must cost the victim no call and no MCP session.
    if (abuse.victim.errors > 0) failures.push(`abuse run: the victim had ${abuse.victim.errors} error(s) under one attacker: ${JSON.stringify(abuse.victim.errorKinds)}`);
    if (abuse.victim.sessionsLost > 0) failures.push(`abuse run: the victim lost ${abuse.victim.sessionsLost} MCP session(s)`);
  }
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
