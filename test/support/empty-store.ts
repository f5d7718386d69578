/**
 * Fresh, empty stores for a test file that needs one per case (the conformance vectors, the accepted
 * hostile paths): the first is made by MemoryStore.open, as an agent's first call makes it, and every case
 * gets a byte-for-byte copy of it in a folder of its own. A copy is the store a fresh MemoryStore.open
 * would have made (making one writes and fsyncs the initial commit: most of a small case's time); making
 * a store from nothing is tested where it is the subject (test/store/open-guards.test.ts, and every file
 * that opens a store in a new folder).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store';

export class EmptyStores {
  private readonly root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-empty-stores-'));
  private template: Promise<string> | null = null;
  private copies = 0;

  /** A new folder (not yet opened by anyone) holding a fresh, empty store. */
  async make(): Promise<string> {
    this.template ??= (async () => {
      const dir = path.join(this.root, 'template');
      const store = await MemoryStore.open(dir, { log: () => undefined });
      await store.close();
      return dir;
    })();
    const template = await this.template;
    const dir = path.join(this.root, `store-${++this.copies}`);
    fs.cpSync(template, dir, { recursive: true });
    return dir;
  }

  /** Remove the template and every copy (afterAll). */
  removeAll(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
