import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Secrets are found by secretlint's recommended preset (a maintained rule set: Anthropic, OpenAI, AWS,
 * GCP, GitHub, Slack, npm, private keys, basic auth in URLs, connection strings...). secretlint ships as
 * ES modules only; it runs in a worker thread, which loads it with Node's own module loader whatever
 * loads memgit, and keeps the scanning off the thread that answers memory calls.
 */
export interface SecretFinding {
  rule: string;
  /** Character offsets in the scanned text. */
  start: number;
  end: number;
}

const WORKER_SOURCE = `
// Only dynamic import: this script may be run as CommonJS or, in a process started as an ES module, as one.
(async () => {
  const { parentPort, workerData } = await import('node:worker_threads');
  const { pathToFileURL } = await import('node:url');
  const ready = Promise.all([workerData.core, workerData.preset, workerData.profiler].map((file) => import(pathToFileURL(file).href)));
  // secretlint's profiler marks every step of every lint in the process-wide performance timeline, keeps
  // every mark and searches all of them at each new one: each scan cost more than the one before (63 ms a
  // commit after 10,000 in one process) and memory grew without bound. Nothing here reads the profile, so
  // it gets a timeline that keeps nothing.
  ready.then(([, , { secretLintProfiler }]) => {
    secretLintProfiler.perf = { mark() {}, measure() {} };
  }, () => undefined);
  parentPort.on('message', async ({ id, text }) => {
    try {
      const [core, preset] = await ready;
      const result = await core.lintSource({
        source: { filePath: 'memory.md', content: text, ext: '.md', contentType: 'text' },
        options: { config: { rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: preset.creator }] }, maskSecrets: true },
      });
      parentPort.postMessage({ id, findings: result.messages.map((m) => ({ rule: String(m.ruleId).replace('@secretlint/secretlint-rule-', ''), start: m.range[0], end: m.range[1] })) });
    } catch (error) {
      parentPort.postMessage({ id, error: String((error && error.message) || error) });
    }
  });
})();
`;

/**
 * How long a worker with nothing to scan is kept before it is ended (the next scan starts another, which
 * loads secretlint again: some hundreds of ms of the worker's CPU, off the thread that answers calls). A
 * process that opened and closed its stores does not keep a thread and secretlint's memory for good.
 */
export const SCANNER_IDLE_MS = 30_000;

export class SecretScanner {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (f: SecretFinding[]) => void; reject: (e: Error) => void }>();
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: { idleMs?: number } = {}) {}

  /** Whether a worker is running now (ended after SCANNER_IDLE_MS without a scan). */
  get running(): boolean {
    return this.worker !== null;
  }

  scan(text: string): Promise<SecretFinding[]> {
    this.cancelIdleEnd();
    const worker = this.start();
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref(); // an answer is awaited: keep the process alive for it
      worker.postMessage({ id, text });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        core: require.resolve('@secretlint/core'),
        preset: require.resolve('@secretlint/secretlint-rule-preset-recommend'),
        // The profiler instance @secretlint/core itself imports.
        profiler: require.resolve('@secretlint/profiler', { paths: [path.dirname(require.resolve('@secretlint/core'))] }),
      },
    });
    worker.on('message', (message: { id: number; findings?: SecretFinding[]; error?: string }) => {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) {
        worker.unref();
        this.endWhenIdle(worker);
      }
      if (!waiter) return;
      if (message.error !== undefined) waiter.reject(new Error(`secret scan failed: ${message.error}`));
      else waiter.resolve(message.findings ?? []);
    });
    worker.on('error', (error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
      this.worker = null;
    });
    worker.unref(); // an idle scanner never keeps a process alive
    this.worker = worker;
    return worker;
  }

  private endWhenIdle(worker: Worker): void {
    this.cancelIdleEnd();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.worker !== worker || this.pending.size > 0) return;
      this.worker = null;
      worker.terminate().catch(() => undefined); // ending an idle worker cannot fail a scan
    }, this.options.idleMs ?? SCANNER_IDLE_MS).unref();
  }

  private cancelIdleEnd(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  async close(): Promise<void> {
    this.cancelIdleEnd();
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}
