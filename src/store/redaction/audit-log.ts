import git from 'isomorphic-git';
import type { ObjectStore } from '../objects';
import type { DurableFs } from '../durable-fs';
import type { TargetKind } from './matcher';

/**
 * The record of every erasure, kept in the repository itself on its own ref so that it travels with
 * the store (clones, replicas) and is itself history: one commit per redaction on `refs/memgit/audit`,
 * whose tree holds every record so far as `redactions/<id>.json`. A record never holds what was
 * erased, only a hash of it, keyed with a secret that never leaves the store (match-key.ts).
 */
export const AUDIT_REF = 'refs/memgit/audit';

export interface RedactionRecord {
  /** /2: `matched` is keyed (see match-key.ts); /1, written before: a plain SHA-256. */
  schema: 'memgit.redaction/2' | 'memgit.redaction/1';
  id: string;
  operator: string;
  reason: string;
  time: string;
  kind: TargetKind;
  /**
   * The kind and the matched text, regex, path or call id, hashed: `hmac-sha256:` keyed with the store's
   * own secret (memgit.redaction/2), or `sha256:` unkeyed in records written before (memgit.redaction/1).
   */
  matched: string;
  /** Which secret keyed `matched` (a hash of it; memgit.redaction/2 only). */
  matchedKey?: string;
  marker: string;
  /** The commit range searched (old ids), or null for all of history. */
  range: { from: string | null; to: string | null } | null;
  oldHead: string;
  newHead: string;
  /** Old id of the first commit whose content changed. */
  firstRewritten: string;
  /** Commits whose memory changed (blobs replaced) and commits rewritten in all (every later one too). */
  commitsChanged: number;
  commitsRewritten: number;
  blobsRedacted: number;
  /** Every rewritten commit: old id → new id. */
  map: Record<string, string>;
}

export async function auditHead(fs: DurableFs, gitdir: string): Promise<string | null> {
  return git.resolveRef({ fs: fs.gitFs, gitdir, ref: AUDIT_REF }).catch(() => null);
}

export async function readRecords(objects: ObjectStore, fs: DurableFs, gitdir: string): Promise<RedactionRecord[]> {
  const head = await auditHead(fs, gitdir);
  if (!head) return [];
  const { commit } = await objects.readCommit(head);
  const root = await objects.readTree(commit.tree);
  const dir = root.find((e) => e.path === 'redactions' && e.type === 'tree');
  if (!dir) return [];
  const records: RedactionRecord[] = [];
  for (const entry of await objects.readTree(dir.oid)) {
    if (entry.type !== 'blob' || !entry.path.endsWith('.json')) continue;
    records.push(JSON.parse(Buffer.from(await objects.readBlob(entry.oid)).toString('utf8')) as RedactionRecord);
  }
  return records.sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
}

/** The ids of the records (r1, r2, ...), read from the audit tree without reading the records. */
export async function recordIds(objects: ObjectStore, fs: DurableFs, gitdir: string): Promise<string[]> {
  const head = await auditHead(fs, gitdir);
  if (!head) return [];
  const root = await objects.readTree((await objects.readCommit(head)).commit.tree);
  const dir = root.find((e) => e.path === 'redactions' && e.type === 'tree');
  if (!dir) return [];
  return (await objects.readTree(dir.oid)).filter((e) => e.type === 'blob' && e.path.endsWith('.json')).map((e) => e.path.slice(0, -'.json'.length));
}

/** The next redaction id: r1, r2, ... */
export function nextId(records: RedactionRecord[]): string {
  return `r${records.reduce((max, r) => Math.max(max, Number(r.id.slice(1)) || 0), 0) + 1}`;
}

/** Write (but do not point the ref at) the audit commit that adds `record`; returns its id. */
export async function writeAuditCommit(objects: ObjectStore, fs: DurableFs, gitdir: string, record: RedactionRecord, author: { name: string; email: string }): Promise<string> {
  const parent = await auditHead(fs, gitdir);
  const existing = parent ? await objects.readTree((await objects.readCommit(parent)).commit.tree) : [];
  const dirEntry = existing.find((e) => e.path === 'redactions' && e.type === 'tree');
  const records = dirEntry ? (await objects.readTree(dirEntry.oid)).filter((e) => e.path !== `${record.id}.json`) : [];
  const blob = await objects.writeBlob(Buffer.from(JSON.stringify(record, null, 2) + '\n', 'utf8'));
  records.push({ mode: '100644', path: `${record.id}.json`, oid: blob, type: 'blob' });
  const redactions = await objects.writeTree(records);
  const tree = await objects.writeTree([{ mode: '040000', path: 'redactions', oid: redactions, type: 'tree' }]);
  const person = { ...author, timestamp: Math.floor(Date.parse(record.time) / 1000), timezoneOffset: 0 };
  return objects.writeCommit({
    message: `redaction ${record.id}\n\nMemory-Actor: operator:${record.operator}\nMemory-Reason: ${record.reason}\n`,
    tree,
    parent: parent ? [parent] : [],
    author: person,
    committer: person,
  });
}
