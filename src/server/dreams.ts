import type Anthropic from '@anthropic-ai/sdk';
import { checkDreamRequest, type DreamRecord, type MemoryStore } from '../store';
import type { StoreRegistry } from '../tenancy/registry';
import { HttpError } from './errors';

/** The dream runner and the SDK under it, loaded when a dream is started: most servers never start one. */
const dreams = (): typeof import('../dream') => require('../dream') as typeof import('../dream');

/**
 * Dreams on `memgit server` (issue 28, docs/dreams.md): background jobs, at most `maxConcurrent` on the
 * server at once (a request over it is answered 429), each holding its store open in the registry while
 * it runs. On shutdown every running dream is asked to cancel and awaited (it stops at its next turn).
 * The SDK client is handed in by the composition (made from the environment like `memgit chat`'s).
 */

export interface DreamJobsOptions {
  client: () => Anthropic;
  maxConcurrent: number;
}

export interface DreamBody {
  inputs?: unknown;
  model?: unknown;
  instructions?: unknown;
}

const FIELDS = new Set(['inputs', 'model', 'instructions']);

export class DreamJobs {
  private readonly running = new Map<string, { store: MemoryStore; id: string; done: Promise<unknown> }>();
  private reserved = 0;
  private closed = false;

  constructor(readonly options: DreamJobsOptions) {}

  get count(): number {
    return this.running.size;
  }

  /** Start a dream on store `storeId` in the background; resolves with it once begun (pending). */
  async start(registry: StoreRegistry, storeId: string, body: DreamBody): Promise<DreamRecord> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'invalid_request_error', 'the body must be a JSON object {"inputs": [...], "model": "...", "instructions": "..."}');
    const extra = Object.keys(body).filter((k) => !FIELDS.has(k));
    if (extra.length) throw new HttpError(400, 'invalid_request_error', `unknown field ${JSON.stringify(extra[0].slice(0, 64))}`);
    const model = body.model === undefined ? dreams().DEFAULT_DREAM_MODEL : body.model;
    const checked = checkDreamRequest({ inputs: (body.inputs ?? []) as never, model: model as string, instructions: (body.instructions ?? null) as string | null });
    if (this.closed) throw new HttpError(503, 'overloaded_error', 'the server is shutting down');
    if (this.running.size + this.reserved >= this.options.maxConcurrent) {
      throw new HttpError(429, 'rate_limit_error', `${this.options.maxConcurrent} dream(s) are running on this server, its bound (memgit server --max-dreams ${this.options.maxConcurrent}); try again when one has ended`);
    }
    this.reserved += 1;
    let reservedHeld = true;
    const release = () => {
      if (reservedHeld) this.reserved -= 1;
      reservedHeld = false;
    };
    return new Promise<DreamRecord>((resolve, reject) => {
      const job = registry.use(storeId, { create: false }, async (store) => {
        let started: Awaited<ReturnType<typeof import('../dream').startDream>>;
        try {
          started = await dreams().startDream(store, this.options.client(), {
            sessions: checked.inputs.flatMap((i) => i.session_ids),
            instructions: checked.instructions ?? null,
            model: checked.model,
          });
        } catch (error) {
          release();
          reject(error);
          return;
        }
        const key = `${storeId}/${started.dream.id}`;
        this.running.set(key, { store, id: started.dream.id, done: started.done });
        release();
        resolve(started.dream);
        try {
          await started.done;
        } finally {
          this.running.delete(key);
        }
      });
      job.catch((error: unknown) => {
        release();
        reject(error);
      });
    });
  }

  /** Ask every running dream to stop at its next turn, and wait for them (before the registry closes). */
  async shutdown(): Promise<void> {
    this.closed = true;
    const all = [...this.running.values()];
    for (const job of all) {
      try {
        job.store.cancelDream(job.id);
      } catch {
        // a store closed under it: its dream ends failing
      }
    }
    await Promise.all(all.map((job) => job.done.catch(() => undefined)));
  }
}
