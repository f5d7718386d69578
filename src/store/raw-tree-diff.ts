import { diffTrees, FileChange, ObjectStore } from './objects';

/**
 * diffTrees over the trees' raw bytes, for rebuilding the history index from git (a cold open reads every
 * commit once and diffs the trees along its changed path): both trees are walked side by side in git's
 * order, unchanged entries are skipped by comparing their 20-byte ids in place, and only the entries that
 * differ are decoded. Nothing is parsed into entry objects and no tree is cached, which is what made the
 * parsed path slow and large at 100,000 commits.
 *
 * The result is diffTrees's, change for change and in the same order (test/store/raw-tree-diff.test.ts
 * proves it on random and git-written histories). A tree whose entries are out of git's order (a
 * malformed tree from elsewhere) is diffed by diffTrees instead.
 */
export async function diffTreesRaw(
  objects: ObjectStore,
  oldTree: string | null,
  newTree: string | null,
  prefix = '',
  trees: TreeReader = objects,
): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  const before = oldTree ? await trees.readTreeContent(oldTree) : EMPTY;
  const after = newTree ? await trees.readTreeContent(newTree) : EMPTY;
  const differing = changedEntries(before, after);
  if (differing === null) return diffTrees(objects, oldTree, newTree, prefix);
  // The order diffTrees emits: the changed names sorted as JavaScript sorts strings.
  differing.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const changes: FileChange[] = [];
  for (let k = 0; k < differing.length; k++) {
    // A name on both sides with different types comes out of the walk twice (git orders "a" and "a/" apart).
    let { name, before: was, after: now } = differing[k];
    while (k + 1 < differing.length && differing[k + 1].name === name) {
      k++;
      was ??= differing[k].before;
      now ??= differing[k].after;
    }
    const full = prefix ? `${prefix}/${name}` : name;
    // pushChangesAt's order (what changed below the name, then the file itself), inlined: one async call
    // and closure fewer per changed name, on every commit of a rebuild.
    const beforeTree = was?.type === 'tree' ? was.oid : null;
    const afterTree = now?.type === 'tree' ? now.oid : null;
    if (beforeTree || afterTree) for (const change of await diffTreesRaw(objects, beforeTree, afterTree, full, trees)) changes.push(change);
    const beforeBlob = was && was.type !== 'tree' ? was.oid : null;
    const afterBlob = now && now.type !== 'tree' ? now.oid : null;
    if (beforeBlob !== afterBlob) changes.push({ path: full, oldOid: beforeBlob, newOid: afterBlob });
  }
  return changes;
}

/** Where diffTreesRaw reads a tree's raw bytes: the ObjectStore, or a ConsecutiveTrees over it. */
export interface TreeReader {
  readTreeContent(oid: string): Uint8Array | Promise<Uint8Array>;
}

/**
 * The trees of a walk along consecutive commits, each diffed against its parent: a commit's diff starts
 * from the trees its parent's diff ended on (the parent's root tree and the folders it changed), so the
 * trees read for one diff are kept for the next and not read again. `next()` after each diff; at most two
 * diffs' trees are held.
 */
export class ConsecutiveTrees implements TreeReader {
  private previous = new Map<string, Uint8Array>();
  private current = new Map<string, Uint8Array>();

  constructor(private readonly objects: Pick<ObjectStore, 'readTreeContent'>) {}

  /** A kept tree at once (no promise to allocate and settle), another from the store. */
  readTreeContent(oid: string): Uint8Array | Promise<Uint8Array> {
    const kept = this.current.get(oid) ?? this.previous.get(oid);
    if (kept) {
      this.current.set(oid, kept);
      return kept;
    }
    return this.objects.readTreeContent(oid).then((bytes) => {
      this.current.set(oid, bytes);
      return bytes;
    });
  }

  /** One diff is done: the trees it read are the ones the next one starts from. */
  next(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

const EMPTY = new Uint8Array(0);
const SPACE = 0x20;
const NUL = 0;
const SLASH = 0x2f;
const OID_BYTES = 20;

interface Side {
  type: 'tree' | 'blob' | 'commit';
  oid: string;
}

interface Differing {
  name: string;
  before: Side | null;
  after: Side | null;
}

/** A cursor over a raw tree: the entry at `at` spans mode, name and id. */
class Cursor {
  at = 0;
  modeEnd = 0;
  nameEnd = 0;
  constructor(readonly bytes: Uint8Array) {
    this.read();
  }

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  /** Position the fields of the entry at `at` (throws on a truncated tree). */
  read(): void {
    if (this.done) return;
    const space = this.bytes.indexOf(SPACE, this.at);
    const nul = space < 0 ? -1 : this.bytes.indexOf(NUL, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + OID_BYTES > this.bytes.length) throw new Error('malformed tree object');
    this.modeEnd = space;
    this.nameEnd = nul;
  }

  next(): void {
    this.at = this.nameEnd + 1 + OID_BYTES;
    this.read();
  }

  get isTree(): boolean {
    // "40000" (git writes no leading zero in trees); "040000" appears in some malformed trees.
    const b = this.bytes;
    const length = this.modeEnd - this.at;
    return (length === 5 && b[this.at] === 0x34 && b[this.at + 1] === 0x30) || (length === 6 && b[this.at] === 0x30 && b[this.at + 1] === 0x34);
  }

  get type(): Side['type'] {
    if (this.isTree) return 'tree';
    const b = this.bytes;
    return this.modeEnd - this.at === 6 && b[this.at] === 0x31 && b[this.at + 1] === 0x36 ? 'commit' : 'blob';
  }

  side(): Side {
    return { type: this.type, oid: Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.nameEnd + 1, OID_BYTES).toString('hex') };
  }

  name(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.modeEnd + 1, this.nameEnd - this.modeEnd - 1).toString('utf8');
  }

  /** Same id and same type as the other cursor's entry. */
  sameAs(other: Cursor): boolean {
    const a = this.bytes;
    const b = other.bytes;
    for (let k = 1; k <= OID_BYTES; k++) if (a[this.nameEnd + k] !== b[other.nameEnd + k]) return false;
    return this.type === other.type;
  }
}

/** git's base_name_compare: names compared bytewise, a tree's name as if it ended in "/". */
function compareNames(a: Cursor, b: Cursor): number {
  const aStart = a.modeEnd + 1;
  const bStart = b.modeEnd + 1;
  const aLength = a.nameEnd - aStart;
  const bLength = b.nameEnd - bStart;
  const common = Math.min(aLength, bLength);
  for (let k = 0; k < common; k++) {
    const d = a.bytes[aStart + k] - b.bytes[bStart + k];
    if (d !== 0) return d;
  }
  const aNext = aLength > common ? a.bytes[aStart + common] : a.isTree ? SLASH : NUL;
  const bNext = bLength > common ? b.bytes[bStart + common] : b.isTree ? SLASH : NUL;
  return aNext - bNext;
}

/** How many bytes two arrays share at their start, or with `atEnd` at their end. */
function sharedLength(a: Uint8Array, b: Uint8Array, atEnd: boolean): number {
  const x = asBuffer(a);
  const y = asBuffer(b);
  // Binary search over native comparisons: invariant, `low` bytes are shared and `high + 1` are not.
  let low = 0;
  let high = Math.min(x.length, y.length);
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    const same = atEnd ? x.compare(y, y.length - middle, y.length, x.length - middle, x.length) === 0 : x.compare(y, 0, middle, 0, middle) === 0;
    if (same) low = middle;
    else high = middle - 1;
  }
  return low;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The entries that differ between two raw trees, or null when either is out of git's order. */
function changedEntries(beforeBytes: Uint8Array, afterBytes: Uint8Array): Differing[] | null {
  const before = new Cursor(beforeBytes);
  const after = new Cursor(afterBytes);
  // The entry each cursor stood on before its last step, to check that names strictly increase.
  const beforePrevious = new Cursor(beforeBytes);
  const afterPrevious = new Cursor(afterBytes);
  const step = (cursor: Cursor, previous: Cursor): boolean => {
    previous.at = cursor.at;
    previous.modeEnd = cursor.modeEnd;
    previous.nameEnd = cursor.nameEnd;
    cursor.next();
    return cursor.done || compareNames(previous, cursor) < 0;
  };
  const differing: Differing[] = [];
  const beforeLength = beforeBytes.length;
  const afterLength = afterBytes.length;
  // The entries at the start that are the same bytes at the same offsets in both trees are the same
  // entries: nothing differs there, and their order is checked in one tree (the same bytes compare the
  // same way in the other). A call changes one or two entries of a tree: most of it is shared.
  const prefix = sharedLength(beforeBytes, afterBytes, false);
  while (!before.done && !after.done && before.at === after.at && before.nameEnd + 1 + OID_BYTES <= prefix) {
    const shared = before.nameEnd + 1 + OID_BYTES; // the end of the entry both cursors stand on
    const ordered = step(before, beforePrevious);
    if (!ordered) return null;
    afterPrevious.at = after.at;
    afterPrevious.modeEnd = after.modeEnd;
    afterPrevious.nameEnd = after.nameEnd;
    after.at = shared;
    if (!before.done && before.nameEnd + 1 + OID_BYTES <= prefix) {
      after.modeEnd = before.modeEnd; // the next entry is shared too: the same fields
      after.nameEnd = before.nameEnd;
    } else {
      after.read(); // the first entry that may differ: read and checked in its own tree
      if (!after.done && compareNames(afterPrevious, after) >= 0) return null;
    }
  }
  // Likewise the entries at the end: once what remains of both trees is the same bytes, nothing more
  // differs (the rest is only checked for order, in one tree).
  const suffix = sharedLength(beforeBytes, afterBytes, true);
  while (!before.done || !after.done) {
    if (!before.done && !after.done && beforeLength - before.at === afterLength - after.at && beforeLength - before.at <= suffix) {
      while (!before.done) if (!step(before, beforePrevious)) return null;
      break;
    }
    const order = before.done ? 1 : after.done ? -1 : compareNames(before, after);
    let ordered = true;
    if (order === 0) {
      if (!before.sameAs(after)) differing.push({ name: after.name(), before: before.side(), after: after.side() });
      ordered = step(before, beforePrevious) && step(after, afterPrevious);
    } else if (order < 0) {
      differing.push({ name: before.name(), before: before.side(), after: null });
      ordered = step(before, beforePrevious);
    } else {
      differing.push({ name: after.name(), before: null, after: after.side() });
      ordered = step(after, afterPrevious);
    }
    if (!ordered) return null;
  }
  return differing;
}
