import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import { oneLine } from '../commit-message';
import { RedactionRefusedError, StaleHeadError } from '../errors';
import { repack } from '../gc';
import { listRemotes } from '../replication/remote-config';
import { updateRemoteState } from '../replication/state';
import { STORE_BRANCH } from '../repo-config';
import { AUDIT_REF, auditHead, nextId, readRecords, recordIds, RedactionRecord, writeAuditCommit } from './audit-log';
import { addedLines, compileRegex, linesRedactor, marker, pathRedactor, RedactionTarget, Redactor, regexRedactor, targetKind, textRedactor } from './matcher';
import { checkMatch, keyedMatchHash, MATCH_KEY_FILE, matchKey, readMatchKey } from './match-key';
import type { RedactionPort } from './port';
import { objectsContaining, plainFiles } from './prune';
import { PreviewItem, rewriteHistory } from './rewrite';
import { dreamBranches, reviewArchives, reviewBranches } from '../review/refs';
import { dreamRef, dreamReviewId } from '../review/names';
import { readDream, readDreams, writeDream } from '../dream/records';

export type { RedactionPort } from './port';
export type { RedactionRecord } from './audit-log';
export type { RedactionTarget } from './matcher';
export type { PreviewItem } from './rewrite';
export { PREVIEW_ITEMS } from './rewrite';
export { AUDIT_REF } from './audit-log';

/**
 * Redaction: erase a secret or personal data from all of history, keeping an audit record of the erasure.
 *
 * Crash safety rests on one atomic step, the branch's ref moving from the old history to the new one:
 * every new object (rewritten blobs, trees, commits and the audit commit) is durable first, then a
 * journal naming both heads, then the branch. A crash before the branch moves leaves the old history
 * whole (the journal is dropped on the next open and the redaction can be run again); after it, the next
 * open finishes the rest (audit ref, caches, pruning) from the journal.
 */
export interface RedactOptions extends RedactionTarget {
  /** Limit the search to commits from..to (commit ids or tool_use ids, inclusive); default all. */
  at?: { from?: string; to?: string };
  reason: string;
  operator: string;
  dryRun?: boolean;
  /** Refuse (StaleHeadError) if HEAD is no longer this commit: the store moved on since the preview. */
  expectHead?: string;
  onProgress?: (message: string) => void;
}

export interface RedactionOutcome {
  id: string;
  dryRun: boolean;
  marker: string;
  /** The keyed hash the record keeps (null for a dry run on a store that has no key yet: a dry run writes nothing). */
  matched: string | null;
  commitsChanged: number;
  commitsRewritten: number;
  blobsRedacted: number;
  firstRewritten: string | null;
  oldHead: string;
  newHead: string;
  preview: PreviewItem[];
  record: RedactionRecord | null;
}

const OPERATOR = /^[A-Za-z0-9_.:@-]{1,64}$/;

interface Journal {
  id: string;
  oldHead: string;
  newHead: string;
  auditCommit: string;
  firstRewritten: string;
  /** Review refs moved onto the rewritten history (absent in journals from before review). */
  sideRefs?: Array<{ ref: string; oldTip: string; newTip: string }>;
  /**
   * Dreams whose pending review's branch was rewritten from a fork the rewrite changed: a review's id
   * hashes its fork, so each dream record takes the new fork and review id (absent before dreams).
   */
  dreamForks?: Array<{ id: string; oldFork: string; newFork: string }>;
}

function journalFile(gitdir: string): string {
  return path.join(gitdir, 'memgit', 'redaction-pending.json');
}

export async function redact(
  port: RedactionPort,
  options: RedactOptions,
  author: { name: string; email: string },
): Promise<RedactionOutcome> {
  const kind = targetKind(options);
  if (!OPERATOR.test(options.operator ?? '')) throw new RedactionRefusedError('--operator must be 1-64 characters of A-Z a-z 0-9 _ . : @ -');
  const reason = oneLine(options.reason ?? '');
  if (!reason) throw new RedactionRefusedError('a redaction needs a reason (--reason)');
  if (kind === 'regex') compileRegex(options.regex!);
  return port.exclusive(async () => {
    await recoverRedaction(port);
    const entries = port.entries();
    if (entries.length === 0) throw new RedactionRefusedError('the store has no commits; there is nothing to redact');
    const current = entries[entries.length - 1].commit;
    if (options.expectHead !== undefined && options.expectHead !== current) throw new StaleHeadError(options.expectHead, current);
    await refuseOtherRefs(port);
    const records = await readRecords(port.objects, port.durableFs, port.gitdir);
    const id = nextId(records);
    const now = new Date();
    const mark = marker(id, now);
    const redactor = await buildRedactor(port, options, kind, mark);
    const range = rangeOf(entries, options.at);
    const progress = options.onProgress;
    let lastShown = 0;
    const result = await rewriteHistory(port.objects, entries, redactor, {
      sideRefs: await reviewRefs(port),
      id,
      dryRun: !!options.dryRun,
      pathSensitive: kind === 'path',
      range,
      onProgress: progress
        ? (done, total) => {
            if (done === total || Date.now() - lastShown > 1000) {
              lastShown = Date.now();
              progress(`redaction ${id}: ${done}/${total} commits`);
            }
          }
        : undefined,
    });
    const key = options.dryRun || result.blobsRedacted === 0 ? readMatchKey(port.gitdir) : await matchKey(port.gitdir, port.durableFs);
    const outcome: RedactionOutcome = {
      id,
      dryRun: !!options.dryRun,
      marker: mark,
      matched: key ? keyedMatchHash(options, key) : null,
      commitsChanged: result.commitsChanged,
      commitsRewritten: result.commitsRewritten,
      blobsRedacted: result.blobsRedacted,
      firstRewritten: result.firstRewritten,
      oldHead: result.oldHead,
      newHead: result.newHead,
      preview: result.preview,
      record: null,
    };
    if (options.dryRun || result.blobsRedacted === 0) return outcome;
    const record: RedactionRecord = {
      schema: 'memgit.redaction/2',
      id,
      operator: options.operator,
      reason,
      time: now.toISOString(),
      kind,
      matched: outcome.matched!,
      matchedKey: key!.id,
      marker: mark,
      range: options.at ? { from: options.at.from ?? null, to: options.at.to ?? null } : null,
      oldHead: result.oldHead,
      newHead: result.newHead,
      firstRewritten: result.firstRewritten!,
      commitsChanged: result.commitsChanged,
      commitsRewritten: result.map.size,
      blobsRedacted: result.blobsRedacted,
      map: Object.fromEntries(result.map),
    };
    // What the store keeps beside git (the session timeline, the call log) is erased first: if a crash
    // comes before the branch moves, the old history stays whole and a rerun finds the text there again.
    await redactSideFiles(port, redactor);
    const auditCommit = await writeAuditCommit(port.objects, port.durableFs, port.gitdir, record, author);
    await port.durableFs.flush(); // every new object is durable before anything names it
    const rewrittenBranches = new Set(result.sideRefs.map((side) => side.ref));
    const dreamForks = readDreams(port.gitdir)
      .filter((dream) => rewrittenBranches.has(dreamRef(dream.id)) && result.map.has(dream.memgit.fork))
      .map((dream) => ({ id: dream.id, oldFork: dream.memgit.fork, newFork: result.map.get(dream.memgit.fork)! }));
    const journal: Journal = { id, oldHead: result.oldHead, newHead: result.newHead, auditCommit, firstRewritten: result.firstRewritten!, sideRefs: result.sideRefs, dreamForks };
    await nodeFs.promises.mkdir(path.dirname(journalFile(port.gitdir)), { recursive: true });
    await port.durableFs.writeFile(journalFile(port.gitdir), JSON.stringify(journal) + '\n');
    await port.durableFs.flush();
    if ((await port.head()) !== result.oldHead) throw new RedactionRefusedError('the store moved during the redaction; nothing was changed');
    // The one atomic step: from here on the new history is the store's.
    await git.writeRef({ fs: port.durableFs.gitFs, gitdir: port.gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: result.newHead, force: true });
    await port.durableFs.flush();
    port.log(`redaction ${id} by ${options.operator}: ${result.commitsChanged} commit(s) changed, ${result.map.size} rewritten from ${result.firstRewritten!.slice(0, 12)}; reason: ${reason}`);
    await finish(port, journal);
    return { ...outcome, record };
  });
}

/**
 * A store has one branch, its own refs (refs/memgit/...) and remote-tracking refs (dropped by `finish`).
 * Any other ref (a tag or branch made with the git CLI) would either keep the erased text reachable or,
 * once the old history is pruned, point at objects that are gone: refuse before anything is written.
 */
async function refuseOtherRefs(port: RedactionPort): Promise<void> {
  const refs = await git.listRefs({ fs: port.durableFs.gitFs, gitdir: port.gitdir, filepath: 'refs' });
  // Review branches (refs/heads/review/…) and dreams' branches (refs/heads/dream/…) are memgit's own:
  // rewritten with the branch (reviewRefs).
  const others = refs
    .filter((r) => r !== `heads/${STORE_BRANCH}` && !r.startsWith('memgit/') && !r.startsWith('remotes/') && !r.startsWith('heads/review/') && !r.startsWith('heads/dream/'))
    .map((r) => `refs/${r}`);
  if (others.length === 0) return;
  const shown = others.slice(0, 5).map((r) => JSON.stringify(r)).join(', ') + (others.length > 5 ? `, and ${others.length - 5} more` : '');
  throw new RedactionRefusedError(
    `this repository has refs besides the store's branch (${shown}); they would keep the erased text or ` +
      'point at pruned commits. Delete them first (git update-ref -d <ref>) and redact again; nothing was changed',
  );
}

/** The review branches and archives (docs/review.md), whose held and rejected calls are erased from too. */
async function reviewRefs(port: RedactionPort): Promise<Array<{ ref: string; tip: string }>> {
  return [
    ...(await reviewBranches(port.durableFs, port.gitdir)).map((b) => ({ ref: b.ref, tip: b.tip })),
    ...(await dreamBranches(port.durableFs, port.gitdir)).map((b) => ({ ref: b.ref, tip: b.tip })),
    ...(await reviewArchives(port.durableFs, port.gitdir)).map((a) => ({ ref: a.ref, tip: a.commit }))];
}

/** A redaction interrupted by a crash: finish it if the branch moved, forget it if not. Idempotent. */
export async function recoverRedaction(port: RedactionPort): Promise<void> {
  let journal: Journal;
  try {
    journal = JSON.parse(await nodeFs.promises.readFile(journalFile(port.gitdir), 'utf8')) as Journal;
  } catch {
    return;
  }
  const head = await git.resolveRef({ fs: port.durableFs.gitFs, gitdir: port.gitdir, ref: `refs/heads/${STORE_BRANCH}` });
  if (head === journal.newHead) {
    port.log(`finishing redaction ${journal.id}, interrupted after the history was rewritten`);
    await finish(port, journal);
  } else {
    port.log(`redaction ${journal.id} was interrupted before the history was rewritten; nothing of it was applied (run it again)`);
    await nodeFs.promises.rm(journalFile(port.gitdir), { force: true });
  }
}

async function finish(port: RedactionPort, journal: Journal): Promise<void> {
  const args = { fs: port.durableFs.gitFs, gitdir: port.gitdir };
  if ((await auditHead(port.durableFs, port.gitdir)) !== journal.auditCommit) {
    await git.writeRef({ ...args, ref: AUDIT_REF, value: journal.auditCommit, force: true });
  }
  // Review refs onto the rewritten history (each only from its old tip: idempotent after a crash).
  for (const side of journal.sideRefs ?? []) {
    const now = await git.resolveRef({ ...args, ref: side.ref }).catch(() => null);
    if (now === side.oldTip) await git.writeRef({ ...args, ref: side.ref, value: side.newTip, force: true });
  }
  // Dreams waiting for review: their records name the new fork and review id (each only from the old
  // fork: idempotent after a crash).
  for (const moved of journal.dreamForks ?? []) {
    const dream = readDream(port.gitdir, moved.id);
    if (!dream || dream.memgit.fork !== moved.oldFork) continue;
    const oldReview = dreamReviewId(moved.id, moved.oldFork);
    const outputs = dream.outputs.map((output) => (output.type === 'review' && output.review_id === oldReview ? { ...output, review_id: dreamReviewId(moved.id, moved.newFork) } : output));
    writeDream(port.gitdir, { ...dream, memgit: { ...dream.memgit, fork: moved.newFork }, outputs });
  }
  // Remote-tracking refs and FETCH_HEAD still name the old history: drop them (the next fetch or push
  // writes them anew), so nothing keeps the erased objects reachable.
  for (const ref of await git.listRefs({ ...args, filepath: 'refs/remotes' }).catch(() => [] as string[])) {
    await git.deleteRef({ ...args, ref: `refs/remotes/${ref}` });
  }
  for (const name of ['FETCH_HEAD', 'ORIG_HEAD']) await nodeFs.promises.rm(path.join(port.gitdir, name), { force: true });
  await port.durableFs.flush();
  await port.afterRewrite(journal.oldHead, journal.newHead);
  await repack(port.objects, port.durableFs, port.dir, port.gitdir, { full: true, pruneUnreachable: true });
  const stillThere = await git.readObject({ fs: nodeFs, gitdir: port.gitdir, oid: journal.firstRewritten, cache: {} }).then(
    () => true,
    () => false,
  );
  if (stillThere) throw new Error(`redaction ${journal.id}: the old commit ${journal.firstRewritten} can still be read after pruning`);
  // Replicas hold the old history: the next push (now, if replication runs) replaces it, logged.
  for (const remote of await listRemotes({ fs: nodeFs, gitdir: port.gitdir })) {
    updateRemoteState(port.gitdir, remote.name, { pendingForce: `redaction ${journal.id} rewrote history`, stopped: null });
  }
  await nodeFs.promises.rm(journalFile(port.gitdir), { force: true });
  port.announce();
}

async function buildRedactor(port: RedactionPort, options: RedactOptions, kind: string, mark: string): Promise<Redactor> {
  switch (kind) {
    case 'text':
      return textRedactor(options.text!, mark);
    case 'regex':
      return regexRedactor(options.regex!, mark);
    case 'path': {
      const p = options.path!;
      if (!/^\/memories\/[^\0]+$/.test(p) || p.split('/').some((s) => s === '..' || s === '.')) {
        throw new RedactionRefusedError(`${JSON.stringify(p)} is not a /memories file path`);
      }
      const repoPath = p.slice(1).replace(/\/+$/, '');
      if (!port.entries().some((e) => e.changes.some((c) => c.path === repoPath))) {
        throw new RedactionRefusedError(`no version of ${p} exists in this store's history`);
      }
      return pathRedactor(repoPath, mark);
    }
    default: {
      const entry = port.entries().find((e) => e.toolUseId === options.call);
      if (!entry) throw new RedactionRefusedError(`no call with tool_use id ${JSON.stringify(options.call)} in this store`);
      const lines = new Set<string>();
      for (const change of entry.changes) {
        if (!change.newOid || !change.path.startsWith(`${MEMORY_REPO_ROOT}/`)) continue;
        const before = change.oldOid ? Buffer.from(await port.objects.readBlob(change.oldOid)).toString('utf8') : '';
        const after = Buffer.from(await port.objects.readBlob(change.newOid)).toString('utf8');
        for (const line of addedLines(before, after)) lines.add(line);
      }
      if (lines.size === 0) throw new RedactionRefusedError(`call ${options.call} added no lines (a delete or a rename); redact by text or path instead`);
      return linesRedactor(lines, mark);
    }
  }
}

function rangeOf(entries: readonly { commit: string; toolUseId?: string }[], at: RedactOptions['at']): { from: number; to: number } {
  const find = (ref: string) => {
    const i = entries.findIndex((e) => e.toolUseId === ref || e.commit === ref || (ref.length >= 7 && /^[0-9a-f]+$/.test(ref) && e.commit.startsWith(ref)));
    if (i < 0) throw new RedactionRefusedError(`${JSON.stringify(ref)} names no commit or call in this store`);
    return i;
  };
  const from = at?.from ? find(at.from) : 0;
  const to = at?.to ? find(at.to) : entries.length - 1;
  if (from > to) throw new RedactionRefusedError('the range ends before it starts');
  return { from, to };
}

export function listRedactions(port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir'>): Promise<RedactionRecord[]> {
  return readRecords(port.objects, port.durableFs, port.gitdir);
}

/** The ids of the recorded redactions (without reading the records). */
export function redactionIds(port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir'>): Promise<string[]> {
  return recordIds(port.objects, port.durableFs, port.gitdir);
}

/** Where an old commit id (from before a redaction) went: its rewritten commit and the redaction. */
export async function rewrittenCommit(port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir'>, ref: string): Promise<{ commit: string; redaction: string } | null> {
  if (!/^[0-9a-f]{7,40}$/.test(ref)) return null;
  let current: { commit: string; redaction: string } | null = null;
  for (const record of await listRedactions(port)) {
    const target: string = current?.commit ?? ref;
    const hit: [string, string] | undefined = Object.entries(record.map).find(([old]) => (target.length === 40 ? old === target : old.startsWith(target)));
    if (hit) current = { commit: hit[1], redaction: record.id };
  }
  return current;
}

/**
 * Whether a ref that resolved to `resolved` named it by an id from before a redaction (a bookmark, a
 * link): the old id and the redaction that rewrote it, or null when the ref names the commit as it is.
 * Every edge that shows a commit says so the same way (the UI's notice, `memgit show`).
 */
export async function rewrittenFrom(
  port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir'>,
  ref: string,
  resolved: string,
): Promise<{ old: string; redaction: string } | null> {
  const id = ref.replace(/^commit:/, '').toLowerCase();
  if (!/^[0-9a-f]{7,40}$/.test(id) || resolved.startsWith(id)) return null;
  const moved = await rewrittenCommit(port, id);
  return moved && moved.commit === resolved ? { old: id, redaction: moved.redaction } : null;
}

export interface VerificationReport {
  redaction: string;
  /**
   * Whether the text or regex given was checked against the record and is what it matched (a different
   * value is refused before anything is searched). False when this store cannot tell, said in matchNote:
   * the record's hash is keyed with a secret only the store that redacted holds (a clone, a store
   * restored from a replica), or the redaction matched a path or a call.
   */
  matchConfirmed: boolean;
  matchNote: string | null;
  objectsScanned: number;
  objectsWithText: string[];
  filesScanned: number;
  filesWithText: string[];
}

/**
 * Prove an erasure: search every object in the repository (loose and packed, reachable or not, inflated)
 * and every other file of the store for the text (or regex) given again by the operator, which must be
 * what the redaction matched (its hash is compared with the record).
 */
export async function verifyRedaction(
  port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir' | 'dir'>,
  id: string,
  target: RedactionTarget,
): Promise<VerificationReport> {
  const record = (await listRedactions(port)).find((r) => r.id === id);
  if (!record) throw new RedactionRefusedError(`no redaction ${id} in this store's audit log`);
  const kind = targetKind(target);
  if (kind !== 'text' && kind !== 'regex') throw new RedactionRefusedError('verify with the text or regex that was redacted');
  const match = record.kind === kind ? checkMatch(record, target, readMatchKey(port.gitdir)) : 'unknown';
  const matchNote =
    match === 'yes'
      ? null
      : record.kind !== kind
        ? `${id} erased a ${record.kind}, so the ${kind} given cannot be checked against its record; it was searched for all the same`
        : `this store cannot confirm that the ${kind} given is what ${id} matched: the record's hash is keyed with a secret ` +
          `only the store that made it holds (.git/${MATCH_KEY_FILE}, never replicated); it was searched for all the same`;
  if (match === 'no') throw new RedactionRefusedError(`that ${kind} is not what redaction ${id} matched (the hashes differ)`);
  const contains =
    kind === 'text'
      ? (bytes: Buffer) => bytes.includes(Buffer.from(target.text!, 'utf8'))
      : (() => {
          const regex = compileRegex(target.regex!);
          return (bytes: Buffer) => {
            regex.lastIndex = 0;
            return regex.test(bytes.toString('utf8'));
          };
        })();
  const objects = await objectsContaining(port.gitdir, contains);
  const objectsDir = path.join(port.gitdir, 'objects');
  const files = await plainFiles(port.dir, (full) => full === objectsDir);
  const filesWithText: string[] = [];
  for (const file of files) {
    if (contains(await nodeFs.promises.readFile(file))) filesWithText.push(path.relative(port.dir, file));
  }
  return { redaction: id, matchConfirmed: match === 'yes', matchNote, objectsScanned: objects.scanned, objectsWithText: objects.found, filesScanned: files.length, filesWithText };
}

/**
 * What readers ask of the redactions a store recorded (its audit log on refs/memgit/audit): handed out by
 * `MemoryStore.redactionLog()`, so that the UI, the CLI and the read model never hold the redaction port
 * (which can rewrite history) to ask it.
 */
export interface RedactionLog {
  /** Every recorded redaction, oldest first. */
  records(): Promise<RedactionRecord[]>;
  /** Their ids, without reading the records. */
  ids(): Promise<string[]>;
  /** See `rewrittenFrom`: whether `ref` named the commit `resolved` by an id from before a redaction. */
  rewrittenFrom(ref: string, resolved: string): Promise<{ old: string; redaction: string } | null>;
  /** See `verifyRedaction`: search every object and file of the store for the text or regex again. */
  verify(id: string, target: RedactionTarget): Promise<VerificationReport>;
}

export function redactionLog(port: Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir' | 'dir'>): RedactionLog {
  return {
    records: () => listRedactions(port),
    ids: () => redactionIds(port),
    rewrittenFrom: (ref, resolved) => rewrittenFrom(port, ref, resolved),
    verify: (id, target) => verifyRedaction(port, id, target),
  };
}

/**
 * The JSON-lines files memgit keeps under `.git/memgit/` beside git (the session timeline, the call log,
 * ...): every string in every record goes through the redactor, and the file is replaced atomically.
 * The history index and the flags are rebuilt after the rewrite instead.
 */
async function redactSideFiles(port: RedactionPort, redactor: Redactor): Promise<void> {
  const dir = path.join(port.gitdir, 'memgit');
  const names = await nodeFs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.jsonl') || name.startsWith('history-') || name.startsWith('flags-')) continue;
    const file = path.join(dir, name);
    const text = await nodeFs.promises.readFile(file, 'utf8');
    let changed = false;
    const redactString = (value: string): string => {
      const next = redactor('', value);
      if (next === null || next === value) return value;
      changed = true;
      return next;
    };
    const deep = (value: unknown): unknown => {
      if (typeof value === 'string') return redactString(value);
      if (Array.isArray(value)) return value.map(deep);
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v)]));
      return value;
    };
    const lines = text.split('\n').map((line) => {
      if (!line) return line;
      try {
        return JSON.stringify(deep(JSON.parse(line)));
      } catch {
        return redactString(line); // a torn line: still no trace of the text
      }
    });
    if (changed) await port.durableFs.writeFile(file, lines.join('\n'));
  }
}
