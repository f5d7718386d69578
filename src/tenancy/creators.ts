import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemgitError, type ErrorCode } from '../store';
import * as lockfile from 'proper-lockfile';

/**
 * Which key created which store, in `<root>/.memgit/stores.json` (mode 0600): the record a per-key bound
 * on store creation counts. A store is claimed here *before* its folder is made, under the same kind of
 * lock as keys.json (other server processes may share the root), so two creations cannot both pass the
 * bound; a claim whose store was never made (the open failed) is released, and a claim whose folder has
 * gone (an operator removed the store) stops counting the next time the bound is reached.
 */

export interface StoreCreation {
  /** The id of the key whose call created the store. */
  key: string;
  created: string;
}

interface CreatorsFile {
  version: 1;
  stores: Record<string, StoreCreation>;
}

/** A key made as many stores as it may (`--max-stores-per-key`); nothing was written. */
export class StoreQuotaError extends MemgitError {
  static override readonly code: ErrorCode = 'quota_exceeded';

  constructor(
    readonly keyId: string,
    readonly limit: number,
  ) {
    super(`this key has created ${limit} stores, the most one key may create (--max-stores-per-key ${limit}); nothing was written`);
  }
}

export function creatorsFile(root: string): string {
  return path.join(root, '.memgit', 'stores.json');
}

async function readCreators(root: string): Promise<CreatorsFile> {
  let text: string;
  try {
    text = await fs.promises.readFile(creatorsFile(root), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, stores: {} };
    throw error;
  }
  const parsed = JSON.parse(text) as CreatorsFile;
  if (parsed?.version !== 1 || typeof parsed.stores !== 'object' || parsed.stores === null) throw new Error(`${creatorsFile(root)} is not a memgit store record (version 1)`);
  // A plain object with no prototype: store ids such as `constructor` are ordinary keys here.
  return { version: 1, stores: Object.assign(Object.create(null) as Record<string, StoreCreation>, parsed.stores) };
}

export class StoreCreators {
  /** Updates of this process, one at a time (the file lock orders them against other processes). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly root: string) {}

  /** The key that created store `id`, when a key did. */
  async creatorOf(id: string): Promise<string | null> {
    const file = await readCreators(this.root);
    return Object.prototype.hasOwnProperty.call(file.stores, id) ? file.stores[id].key : null;
  }

  /** How many stores `keyId` created that still exist. */
  async count(keyId: string): Promise<number> {
    const file = await readCreators(this.root);
    return Object.entries(file.stores).filter(([id, c]) => c.key === keyId && this.stillThere(id)).length;
  }

  /**
   * Record that `keyId` creates store `id`, or throw StoreQuotaError when it already made `limit` stores
   * (stores whose folder is gone no longer count). Nothing at all is written when it throws.
   */
  claim(id: string, keyId: string, limit: number): Promise<void> {
    return this.update((file) => {
      let mine = Object.entries(file.stores).filter(([, c]) => c.key === keyId);
      if (mine.length >= limit) {
        mine = mine.filter(([other]) => this.stillThere(other));
        if (mine.length >= limit) throw new StoreQuotaError(keyId, limit);
      }
      file.stores[id] = { key: keyId, created: new Date().toISOString() };
    });
  }

  /** Forget a claim whose store was not made after all. */
  release(id: string, keyId: string): Promise<void> {
    return this.update((file) => {
      if (file.stores[id]?.key === keyId) delete file.stores[id];
    });
  }

  private stillThere(id: string): boolean {
    return fs.existsSync(path.join(this.root, id, '.git'));
  }

  private update(change: (file: CreatorsFile) => void): Promise<void> {
    const run = this.queue.then(() => this.locked(change));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async locked(change: (file: CreatorsFile) => void): Promise<void> {
    const dir = path.dirname(creatorsFile(this.root));
    await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    const release = await lockfile.lock(dir, { lockfilePath: path.join(dir, 'stores.lock'), retries: { retries: 50, minTimeout: 20, maxTimeout: 200 } });
    try {
      const file = await readCreators(this.root);
      change(file);
      const temp = `${creatorsFile(this.root)}.${process.pid}.tmp`;
      const handle = await fs.promises.open(temp, 'w', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(temp, creatorsFile(this.root));
    } finally {
      await release();
    }
  }
}
