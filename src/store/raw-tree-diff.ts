import { diffTrees, FileChange, ObjectStore, pushChangesAt } from './objects';

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
export async function diffTreesRaw(objects: ObjectStore, oldTree: string | null, newTree: string | null, prefix = ''): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  const before = oldTree ? await objects.readTreeContent(oldTree) : EMPTY;
  const after = newTree ? await objects.readTreeContent(newTree) : EMPTY;
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
    await pushChangesAt(changes, full, was, now, (a, b) => diffTreesRaw(objects, a, b, full));
  }
  return changes;
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
  while (!before.done || !after.done) {
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
