/**
 * The process the crash harness kills: opens a store and streams the deterministic workload into it,
 * from call `start` on, keeping `depth` calls queued at once (so the store is always mid-write). Each
 * tool_result is written to stdout as one JSON line the moment it is acknowledged, with a synchronous
 * write, so a line the harness reads was acknowledged before the process died.
 *
 * Usage: node dist/test/store/crash-writer.js <repo> <seed> <start> <count> [depth]
 */
import * as fs from 'node:fs';
import { MemoryStore, ToolResult } from '../../src/store/memory-store';
import { workloadCall } from './crash-workload';

export interface AckLine {
  index: number;
  result: ToolResult;
}

async function main(): Promise<void> {
  const [repo, seedText, startText, countText, depthText = '4'] = process.argv.slice(2);
  const seed = Number(seedText);
  const start = Number(startText);
  const end = start + Number(countText);
  const depth = Number(depthText);
  const store = await MemoryStore.open(repo, { log: (message) => process.stderr.write(`memgit: ${message}\n`) });
  const inFlight: Array<{ index: number; result: Promise<ToolResult> }> = [];
  let next = start;
  while (next < end || inFlight.length > 0) {
    while (next < end && inFlight.length < depth) {
      const call = workloadCall(seed, next);
      const block = { type: 'tool_use', id: call.id, name: 'memory', input: call.input };
      inFlight.push({ index: next, result: store.execute(block, { session: call.session }) });
      next += 1;
    }
    // The store's queue settles calls in order, so the oldest in flight is always the next to finish.
    const oldest = inFlight.shift()!;
    const line: AckLine = { index: oldest.index, result: await oldest.result };
    fs.writeSync(1, `${JSON.stringify(line)}\n`);
  }
  await store.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`crash-writer: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
