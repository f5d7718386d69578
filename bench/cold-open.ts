/**
 * One cold open in a process of its own, so that its peak RSS is its own: `node dist/bench/cold-open.js DIR`
 * opens the store at DIR (which has no .git/memgit/: the history index is rebuilt from git, as after a
 * clone) and prints `{"ms": …, "cpuMs": …, "peakMb": …, "baseMb": …, "commits": …}` (cpuMs: the process's CPU
 * time during the open, user and system, which a loaded machine does not inflate as it does `ms`; baseMb:
 * its RSS before the open). Used by bench/memgit-stores.ts.
 */
import '../src/cli/threadpool'; // as in the memgit CLI
import * as fs from 'node:fs';
import { MemoryStore } from '../src/store/memory-store';
import { now } from './stats';

/**
 * This process's peak RSS: VmHWM, which belongs to the process's own memory and starts anew at exec. Not
 * getrusage's maxRSS: on Linux that keeps the high-water mark of the memory the process was forked with, so
 * a bench that has just packed a large store (gigabytes resident) would see its own peak here.
 */
function peakRssKb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]);
  } catch {
    // not Linux: getrusage's figure
  }
  return process.resourceUsage().maxRSS;
}

async function main(dir: string): Promise<void> {
  const baseMb = process.memoryUsage().rss / 1024 / 1024;
  const started = now();
  const cpu = process.cpuUsage();
  const store = await MemoryStore.open(dir, { log: () => undefined, autoGcLooseObjects: 0 });
  const ms = now() - started;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  const commits = store.history.size - 1;
  const peakMb = peakRssKb() / 1024;
  await store.close();
  process.stdout.write(`${JSON.stringify({ ms, cpuMs, peakMb, baseMb, commits })}\n`);
}

main(process.argv[2]).catch((error: Error) => {
  process.stderr.write(`cold-open failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
