import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';
import git from 'isomorphic-git';
import type { DurableFs } from './durable-fs';
import { sortByPathBytes } from './git-index';
import { ObjectReader, RawObject } from './object-reader';

/**
 * Object-level access to one repository: blobs, trees and commits by oid. Reads go through
 * isomorphic-git (loose objects and packs). Writes produce git's loose-object format here — hashing with
 * node's crypto and compressing with node's zlib, several times cheaper than isomorphic-git's web-stream
 * route — and are staged in the DurableFs, so that all objects of one call become durable together at
 * the next flush, before the ref moves. Git objects are immutable, so trees are cached by oid.
 */

export type EntryType = 'blob' | 'tree' | 'commit';

export interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: EntryType;
}

export const FILE_MODE = '100644';
export const DIR_MODE = '040000';
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const TREE_CACHE_LIMIT = 20_000;
const RECENT_BLOB_LIMIT = 16;
const PACK_CACHE_TRIM_EVERY = 20_000;
const RECENT_BLOB_MAX_BYTES = 1024 * 1024;

export class ObjectStore {
  /** isomorphic-git's own cache object: shared between calls so packfiles are parsed once. */
  readonly gitCache: object = {};
  private readonly trees = new Map<string, TreeEntry[]>();
  private readonly recentBlobs = new Map<string, Uint8Array>();
  /** The fast read path (object-reader.ts); isomorphic-git answers whatever it cannot. */
  private readonly reader: ObjectReader;

  constructor(
    readonly fs: DurableFs,
    readonly gitdir: string,
  ) {
    this.reader = new ObjectReader(gitdir);
  }

  private lastYield = Date.now();

  /**
   * The fast path reads synchronously, and a loop of reads (indexing a long history) would otherwise never
   * let timers run — among them the write lock's refresh, which would then be taken as stale. Give the
   * event loop a turn every 50 ms.
   */
  private async yieldSometimes(): Promise<void> {
    if (Date.now() - this.lastYield < 50) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.lastYield = Date.now();
  }

  /** An object's type and content (without git's header), or null if the fast path cannot read it. */
  readRaw(oid: string): RawObject | null {
    if (this.fs.isStaged(this.loosePath(oid))) return null;
    try {
      return this.reader.read(oid);
    } catch {
      return null; // anything unusual (a corrupt or foreign object): isomorphic-git reports it properly
    }
  }

  private get args() {
    return { fs: this.fs.gitFs, gitdir: this.gitdir, cache: this.gitCache };
  }

  async readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.trees.get(oid);
    if (cached) return cached;
    await this.yieldSometimes();
    const raw = this.readRaw(oid);
    const parsed = raw?.type === 'tree' ? parseTreeEntries(raw.body) : null;
    if (parsed) {
      this.cacheTree(oid, parsed);
      return parsed;
    }
    await this.flushIfStaged(oid);
    this.countRead();
    const { tree } = await git.readTree({ ...this.args, oid });
    const entries = tree as TreeEntry[];
    this.cacheTree(oid, entries);
    return entries;
  }

  private cacheTree(oid: string, entries: TreeEntry[]): void {
    if (this.trees.size >= TREE_CACHE_LIMIT) this.trees.clear();
    this.trees.set(oid, entries);
  }

  async readBlob(oid: string): Promise<Uint8Array> {
    const recent = this.recentBlobs.get(oid);
    if (recent) return recent;
    await this.yieldSometimes();
    const raw = this.readRaw(oid);
    if (raw?.type === 'blob') return raw.body;
    await this.flushIfStaged(oid);
    this.countRead();
    const { blob } = await git.readBlob({ ...this.args, oid });
    return blob;
  }

  async writeBlob(bytes: Uint8Array): Promise<string> {
    const oid = this.writeObject('blob', bytes);
    // The working tree is written from the blob right after the commit: spare re-reading and inflating it.
    if (this.recentBlobs.size >= RECENT_BLOB_LIMIT) this.recentBlobs.delete(this.recentBlobs.keys().next().value!);
    if (bytes.byteLength <= RECENT_BLOB_MAX_BYTES) this.recentBlobs.set(oid, bytes);
    return oid;
  }

  async writeTree(entries: TreeEntry[]): Promise<string> {
    const oid = this.writeObject('tree', serializeTree(entries));
    this.trees.set(oid, entries);
    return oid;
  }

  async readCommit(oid: string): Promise<ReadCommitResult> {
    await this.yieldSometimes();
    const raw = this.readRaw(oid);
    const parsed = raw?.type === 'commit' ? parseCommitObject(oid, raw.body) : null;
    if (parsed) return parsed;
    await this.flushIfStaged(oid);
    this.countRead();
    return git.readCommit({ ...this.args, oid });
  }

  async writeCommit(commit: CommitObject): Promise<string> {
    return this.writeObject('commit', Buffer.from(serializeCommit(commit), 'utf8'));
  }

  /** Path of a loose object. */
  loosePath(oid: string): string {
    return path.join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  }

  /**
   * Stage one object, unless it is already there loose (git objects are named by content; one that is
   * only in a pack is written loose again, as isomorphic-git does, and the next gc drops the copy).
   * Synchronous on purpose: a call's objects are a handful of small buffers.
   */
  private writeObject(type: EntryType, body: Uint8Array): string {
    const wrapped = Buffer.concat([Buffer.from(`${type} ${body.byteLength}\0`), body]);
    const oid = createHash('sha1').update(wrapped).digest('hex');
    const file = this.loosePath(oid);
    if (!this.fs.isStaged(file) && !nodeFs.existsSync(file)) {
      this.fs.stage(file, deflateSync(wrapped, { level: 1 }), 0o444);
    }
    return oid;
  }

  /**
   * isomorphic-git keeps every object it has read from a pack (GitPackIndex.offsetCache) for the life of
   * the cache and never evicts: reading a large history once would keep all of it in memory. Empty those
   * caches every so many reads; the packs and their indexes stay loaded.
   */
  private countRead(): void {
    if (++this.reads % PACK_CACHE_TRIM_EVERY !== 0) return;
    const cache = this.gitCache as Record<symbol, unknown>;
    for (const key of Object.getOwnPropertySymbols(cache)) {
      const value = cache[key];
      if (!(value instanceof Map)) continue;
      for (const loading of value.values()) {
        void Promise.resolve(loading)
          .then((pack: unknown) => {
            if (pack && typeof pack === 'object' && 'offsetCache' in pack) (pack as { offsetCache: object }).offsetCache = {};
          })
          .catch(() => undefined);
      }
    }
  }

  private reads = 0;

  /** A staged object is read from disk only after the flush that writes it: flushing early is always safe. */
  private async flushIfStaged(oid: string): Promise<void> {
    if (this.fs.isStaged(this.loosePath(oid))) await this.fs.flush();
  }

  async hashBlob(bytes: Uint8Array): Promise<string> {
    const { oid } = await git.hashBlob({ object: bytes });
    return oid;
  }

  /** The tree entry at a slash-separated repository path, or null. '' is the root itself. */
  async entryAt(rootTree: string, repoPath: string): Promise<TreeEntry | null> {
    let current: TreeEntry = { mode: DIR_MODE, path: '', oid: rootTree, type: 'tree' };
    if (repoPath === '') return current;
    for (const name of repoPath.split('/')) {
      if (current.type !== 'tree') return null;
      const found = (await this.readTree(current.oid)).find((entry) => entry.path === name);
      if (!found) return null;
      current = found;
    }
    return current;
  }
}

/** One file that differs between two trees (null = absent on that side). */
export interface FileChange {
  path: string;
  oldOid: string | null;
  newOid: string | null;
}

/**
 * Files that differ between two trees, descending only into subtrees whose oids differ — a call that
 * touched one file costs a handful of tree reads, whatever the size of the memory.
 */
export async function diffTrees(
  objects: ObjectStore,
  oldTree: string | null,
  newTree: string | null,
  prefix = '',
): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  // Maps, not find(): a directory of 1,000 files would otherwise cost a million comparisons per call.
  const oldEntries = new Map((oldTree ? await objects.readTree(oldTree) : []).map((e) => [e.path, e]));
  const newEntries = new Map((newTree ? await objects.readTree(newTree) : []).map((e) => [e.path, e]));
  const names = new Set([...oldEntries.keys(), ...newEntries.keys()]);
  const changes: FileChange[] = [];
  for (const name of [...names].sort()) {
    const before = oldEntries.get(name) ?? null;
    const after = newEntries.get(name) ?? null;
    if (before && after && before.oid === after.oid && before.type === after.type) continue;
    const full = prefix ? `${prefix}/${name}` : name;
    const beforeTree = before?.type === 'tree' ? before.oid : null;
    const afterTree = after?.type === 'tree' ? after.oid : null;
    if (beforeTree || afterTree) changes.push(...(await diffTrees(objects, beforeTree, afterTree, full)));
    const beforeBlob = before && before.type !== 'tree' ? before.oid : null;
    const afterBlob = after && after.type !== 'tree' ? after.oid : null;
    if (beforeBlob !== afterBlob) changes.push({ path: full, oldOid: beforeBlob, newOid: afterBlob });
  }
  return changes;
}

/** Every file below a tree, as repository paths with blob oids. */
export async function listFiles(objects: ObjectStore, tree: string, prefix = ''): Promise<Map<string, TreeEntry>> {
  const files = new Map<string, TreeEntry>();
  for (const entry of await objects.readTree(tree)) {
    const full = prefix ? `${prefix}/${entry.path}` : entry.path;
    if (entry.type === 'tree') {
      for (const [p, e] of await listFiles(objects, entry.oid, full)) files.set(p, e);
    } else {
      files.set(full, entry);
    }
  }
  return files;
}

export type CommitObject = Parameters<typeof git.writeCommit>[0]['commit'];

/**
 * A tree object's bytes, as git writes them: entries sorted by name with directories compared as if they
 * ended in '/', mode without a leading zero. Names are checked like isomorphic-git's writeTree does (no
 * separators, no '.', '..' or '.git' aliases), so nothing unsafe for a checkout can enter a tree.
 */
export function serializeTree(entries: TreeEntry[]): Buffer {
  for (const entry of entries) {
    assertSafeEntryName(entry.path);
    if (!/^[0-9a-f]{40}$/.test(entry.oid)) throw new Error(`tree entry ${JSON.stringify(entry.path)}: bad oid ${entry.oid}`);
  }
  const sorted = sortByPathBytes(entries, (entry) => (entry.type === 'tree' ? `${entry.path}/` : entry.path));
  const heads = sorted.map((entry) => Buffer.from(`${entry.mode.replace(/^0+/, '')} ${entry.path}\0`, 'utf8'));
  let size = 0;
  for (const head of heads) size += head.length + 20;
  const out = Buffer.allocUnsafe(size);
  let offset = 0;
  for (let i = 0; i < sorted.length; i++) {
    offset += heads[i].copy(out, offset);
    offset += out.write(sorted[i].oid, offset, 20, 'hex');
  }
  return out;
}

/** Same rules as isomorphic-git's assertSafeEntryPath (git's verify_path for trees), plus empty and NUL. */
function assertSafeEntryName(name: string): void {
  if (/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(name) && !/^(\.|\.git|git~[1-9])[. ]*$/i.test(name)) return; // common case
  const hfsClean = name.replace(/[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g, '');
  const ntfsClean = hfsClean.split(':')[0];
  const normalized = ntfsClean.toLowerCase().replace(/[. ]+$/, '');
  if (
    name === '' ||
    name.includes('\0') ||
    name.includes('/') ||
    name.includes('\\') ||
    (normalized === '' && ntfsClean !== '') ||
    normalized === '.git' ||
    /^\.?git~[1-9]$/.test(normalized)
  ) {
    throw new Error(`unsafe tree entry name ${JSON.stringify(name)}`);
  }
}

/** A commit object's text, byte for byte what isomorphic-git's writeCommit produces for the same input. */
export function serializeCommit(commit: CommitObject): string {
  const person = (p: { name: string; email: string; timestamp: number; timezoneOffset: number }) =>
    `${p.name} <${p.email}> ${p.timestamp} ${formatTimezoneOffset(p.timezoneOffset)}`;
  let text = `tree ${commit.tree}\n`;
  for (const parent of commit.parent ?? []) text += `parent ${parent}\n`;
  text += `author ${person(commit.author)}\n`;
  text += `committer ${person(commit.committer ?? commit.author)}\n`;
  if (commit.gpgsig) throw new Error('memgit does not write signed commits');
  const message = commit.message.replace(/\r/g, '').replace(/^\n+/, '').replace(/\n+$/, '');
  return `${text}\n${message}\n`;
}

function formatTimezoneOffset(minutes: number): string {
  // git stores the offset east of UTC; JavaScript's (and isomorphic-git's input) is west of UTC.
  const sign = minutes === 0 ? (Object.is(minutes, -0) ? '-' : '+') : minutes < 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
}

export type ReadCommitResult = Awaited<ReturnType<typeof git.readCommit>>;

const TREE_MODES: Record<string, { mode: string; type: EntryType }> = {
  '40000': { mode: '040000', type: 'tree' },
  '040000': { mode: '040000', type: 'tree' },
  '100644': { mode: '100644', type: 'blob' },
  '100755': { mode: '100755', type: 'blob' },
  '120000': { mode: '120000', type: 'blob' },
  '160000': { mode: '160000', type: 'commit' },
};

/**
 * A tree object's entries as isomorphic-git's readTree returns them (normalised modes, code-point order),
 * or null for anything unusual — an odd mode or an unsafe name — which is left to isomorphic-git.
 */
export function parseTreeEntries(body: Buffer): TreeEntry[] | null {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    const nul = space < 0 ? -1 : body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) return null;
    const known = TREE_MODES[body.toString('latin1', at, space)];
    if (!known) return null;
    const name = body.toString('utf8', space + 1, nul);
    try {
      assertSafeEntryName(name);
    } catch {
      return null;
    }
    entries.push({ mode: known.mode, path: name, oid: body.toString('hex', nul + 1, nul + 21), type: known.type });
    at = nul + 21;
  }
  return sortByPathBytes(entries, (e) => e.path);
}

/** A commit as isomorphic-git's readCommit returns it, or null (signed or unusual: isomorphic-git parses). */
export function parseCommitObject(oid: string, body: Buffer): ReadCommitResult | null {
  const text = body.toString('utf8');
  const split = text.indexOf('\n\n');
  const headerText = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  let tree: string | undefined;
  const parent: string[] = [];
  let author: ReturnType<typeof parsePerson> = null;
  let committer: ReturnType<typeof parsePerson> = null;
  for (const line of headerText.split('\n')) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') tree = value;
    else if (key === 'parent') parent.push(value);
    else if (key === 'author') author = parsePerson(value);
    else if (key === 'committer') committer = parsePerson(value);
    else return null; // gpgsig, encoding, mergetag, continuation lines: isomorphic-git knows them
  }
  if (!tree || !author || !committer) return null;
  return { oid, commit: { message, tree, parent, author, committer }, payload: `${headerText}\n\n${message}` } as ReadCommitResult;
}

function parsePerson(value: string): { name: string; email: string; timestamp: number; timezoneOffset: number } | null {
  const m = /^(.*) <(.*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(value);
  if (!m) return null;
  const minutes = Number(m[5]) * 60 + Number(m[6]);
  // isomorphic-git's convention (JavaScript's): minutes west of UTC, so +0100 is -60; +0000 is 0.
  const timezoneOffset = m[4] === '-' ? (minutes === 0 ? -0 : minutes) : minutes === 0 ? 0 : -minutes;
  return { name: m[1], email: m[2], timestamp: Number(m[3]), timezoneOffset };
}
