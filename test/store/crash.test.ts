/**
 * The short fault-injection run of `npm test` (the long one is `npm run stress`): a writer process is
 * killed with SIGKILL 25 times while streaming memory calls, plus 4 times while creating a new store;
 * after every kill the store must reopen by itself, pass `git fsck --full`, be clean in `git status`,
 * take the next write at once, and hold every acknowledged result. See crash-harness.ts.
 */
import * as path from 'node:path';
import { ensureBuilt } from '../support/dist';
import { runCrashCampaign } from './crash-harness';

const WRITER_SOURCES = ['crash-writer.ts', 'crash-workload.ts', '../support/random.ts'].map((file) => path.join(__dirname, file));

test('survives SIGKILL at random moments with nothing acknowledged lost and nothing half-applied', async () => {
  await ensureBuilt(WRITER_SOURCES);
  const tally = await runCrashCampaign({ kills: 25, initKills: 4, seed: 20261202 });
  expect(tally.failures).toEqual([]);
  expect(tally.kills).toBe(25);
  expect(tally.initKills).toBe(4);
  expect(tally.fsckProblems).toBe(0);
  expect(tally.acknowledged).toBeGreaterThan(50);
  expect(tally.commits).toBeGreaterThan(20);
  // The kills interrupt writes, so reopening has repairs to make and dead writers' locks to take over.
  expect(tally.repairsLogged).toBeGreaterThan(0);
  expect(tally.lockTakeoversLogged).toBeGreaterThan(0);
}, 180_000);
