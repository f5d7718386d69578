/**
 * The fleet section of `npm run bench` (issue 30, docs/fleet.md): the fleet drill (bench/fleet-drill.ts)
 * in each ack mode — three nodes behind HAProxy, a git server, clients writing to many stores, one node
 * killed with SIGKILL a third of the way in and brought back — with calls/s through HAProxy, p50/p99,
 * failover time and acknowledged calls lost; and the placement's balance for 10,000 stores on 20 nodes.
 *
 *   node dist/bench/fleet.js [--seconds=N] [--stores=N] [--clients=N]   (prints the section)
 */
import * as os from 'node:os';
import { placementBalance } from '../src/tenancy/fleet';
import { FleetDrillResult, runFleetDrill } from './fleet-drill';

export interface FleetBenchOptions {
  seconds: number;
  stores: number;
  clients: number;
  log: (message: string) => void;
}

export interface FleetBenchResult {
  options: Omit<FleetBenchOptions, 'log'>;
  runs: FleetDrillResult[];
  balance: { nodes: number; stores: number; min: number; max: number; mean: number; maxOverMean: number };
  /** HAProxy's own spread of the drill's stores over its three nodes (before the kill), per mode. */
  load: number;
}

export async function benchFleet(options: FleetBenchOptions): Promise<FleetBenchResult> {
  const runs: FleetDrillResult[] = [];
  for (const mode of ['replicated', 'local'] as const) {
    options.log(`fleet: the drill in ${mode} mode, ${options.stores} stores, ${options.clients} clients, ${options.seconds} s`);
    runs.push(await runFleetDrill({ mode, stores: options.stores, clients: options.clients, durationMs: options.seconds * 1000 }));
  }
  const nodes = Array.from({ length: 20 }, (_, i) => `node-${i + 1}`);
  const stores = Array.from({ length: 10_000 }, (_, i) => `tenant-${i}`);
  const b = placementBalance(stores, nodes);
  const counts = Object.values(b.perNode);
  return {
    options: { seconds: options.seconds, stores: options.stores, clients: options.clients },
    runs,
    balance: { nodes: nodes.length, stores: stores.length, min: Math.min(...counts), max: b.max, mean: b.mean, maxOverMean: b.maxOverMean },
    load: os.loadavg()[0],
  };
}

export function renderFleet(r: FleetBenchResult): string {
  const row = (x: FleetDrillResult) =>
    `| ${x.mode} | ${x.acked} | ${x.calls_per_s} | ${x.p50_ms} ms | ${x.p99_ms} ms | ${x.failover_ms === null ? '–' : `${(x.failover_ms / 1000).toFixed(1)} s`} | ${x.lost} of ${x.acked} | ${x.duplicated} | ${x.fsck ? 'all pass' : 'FAILED'} | ${x.fenced ? 'yes' : 'no'} |`;
  const spread = (x: FleetDrillResult) => Object.entries(x.perNode).sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, c]) => `${n} ${c}`).join(', ');
  return [
    '## Fleet: nodes behind HAProxy, a git server as the source of truth',
    '',
    `The fleet drill (\`npm run drill:fleet\`, bench/fleet-drill.ts; docs/fleet.md): git's \`http-backend\` as the git server, three \`memgit server\` nodes and HAProxy with deploy/haproxy/haproxy.cfg, all on 127.0.0.1 of one machine; ${r.options.clients} clients write new files to ${r.options.stores} stores through HAProxy for ${r.options.seconds} s. A third of the way in, the node serving the first store is killed with SIGKILL; three fifths in it comes back on the same folder and port. A call is timed from its first attempt to its acknowledgement, retries (same tool_use id, after a 503 or a lost connection) included. Failover: from the kill to the first acknowledgement, by another node, of a store the killed node served. Lost: acknowledged calls whose tool_use id is not on the git server's branch afterwards.`,
    '',
    '| `--ack` | calls acknowledged | calls/s | p50 | p99 | failover | acknowledged calls lost | on the git server twice | `git fsck --full` | returning node re-synced |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.runs.map(row),
    '',
    `Stores per node while all three were up (HAProxy's consistent hash): ${r.runs.map((x) => `${x.mode}: ${spread(x)}`).join('; ')}.`,
    '',
    `Placement on paper (src/tenancy/fleet.ts, rendezvous hashing): ${r.balance.stores.toLocaleString('en-US')} stores on ${r.balance.nodes} nodes, ${r.balance.mean} per node on average, ${r.balance.min} on the emptiest, ${r.balance.max} on the fullest (${r.balance.maxOverMean.toFixed(2)}× the mean).`,
    '',
    `Load average (1 min) at the end: ${r.load.toFixed(1)} on ${os.cpus().length} CPUs; the git server, the three nodes, HAProxy and the clients share them, so these are figures of the protocol on one small machine, not of a fleet's capacity. In replicated mode a call waits for a push to the git server (one \`git http-backend\` process per request here), which is most of its latency; local mode answers before the push and loses what the killed node had not pushed yet.`,
    '',
  ].join('\n');
}

if (require.main === module) {
  const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  benchFleet({ seconds: arg('seconds', 30), stores: arg('stores', 50), clients: arg('clients', 8), log: (m) => process.stderr.write(`${m}\n`) })
    .then((r) => process.stdout.write(renderFleet(r) + '\n'))
    .catch((error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
