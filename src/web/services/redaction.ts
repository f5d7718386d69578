import { randomBytes } from 'node:crypto';
import { MAX_REASON_LENGTH, MAX_REF_LENGTH, MAX_VALUE_LENGTH, REDACTION_KINDS, RedactionKind, RedactionRequest, requestField, shownTarget } from '../../operator/redaction';
import { mask, oneLine, PREVIEW_ITEMS, type PreviewItem, type RedactionOutcome, type RedactionRecord } from '../../store';
import { entryOf } from '../../history/points';
import { AuditContext, BadRequest, CommitSummary, NotFound, summarise } from './context';

/**
 * The redaction action of the UI (its form, its preview, the previews waiting for confirmation) and the
 * pages over its audit log. The request itself, and running it, is the operator floor's
 * (src/operator/redaction.ts).
 *
 * What the operator types to match (a text or a regex) is a secret: it travels only in POST bodies (never
 * a URL), is never written back into a page (the preview shows each changed line with the match replaced
 * by the marker, and what it erases only masked), and between the preview and the confirmation it stays
 * on the server, bound to the operator's login session, under a random id the confirmation form carries.
 */

/** The form's fields that may be shown again (a failed preview, a prefilled call): never text or regex. */
export interface RedactionFormFields {
  kind: RedactionKind;
  path: string;
  call: string;
  reason: string;
  from: string;
  to: string;
}

/** What the form may show again (from a query string or a posted form); a bad field is simply left empty. */
export function formFields(params: Record<string, unknown>): RedactionFormFields {
  const safe = (name: string, max: number) => {
    try {
      return requestField(params, name, max);
    } catch {
      return '';
    }
  };
  const call = safe('call', MAX_REF_LENGTH);
  const path = safe('path', MAX_VALUE_LENGTH);
  const asked = safe('kind', 16);
  const kind: RedactionKind = (REDACTION_KINDS as readonly string[]).includes(asked) ? (asked as RedactionKind) : call ? 'call' : path ? 'path' : 'text';
  return { kind, path, call, reason: oneLine(safe('reason', MAX_REASON_LENGTH)), from: safe('from', MAX_REF_LENGTH), to: safe('to', MAX_REF_LENGTH) };
}

/** A piece of a changed line as it will read: plain text, or the marker that replaces a match. */
export interface LineSegment {
  text: string;
  marker: boolean;
}

export interface PreviewLine {
  line: number;
  /** The line as it will read after the redaction (empty when the line goes, as in a whole-file redaction). */
  segments: LineSegment[];
  removed: boolean;
  /** What the line loses, masked (`sk-************AA (52 chars)`), never the text itself. */
  erased: string;
  cut: boolean;
}

export interface PreviewFile {
  commit: string;
  toolUseId: string | null;
  session: string | null;
  /** The commit as history has it (for its links and title). */
  call: CommitSummary | null;
  path: string;
  lines: PreviewLine[];
  moreLines: number;
}

export interface RedactionPreview {
  kind: RedactionKind;
  /** What is matched, as it may be shown: a path or call id as is, a text or regex masked. */
  shownTarget: string;
  reason: string;
  range: { from: string | null; to: string | null } | null;
  marker: string;
  id: string;
  commitsChanged: number;
  commitsRewritten: number;
  blobsRedacted: number;
  firstRewritten: CommitSummary | null;
  head: string;
  files: PreviewFile[];
  /** The store previews at most PREVIEW_ITEMS file versions; the redaction covers them all. */
  filesTruncated: boolean;
}

/** Longest stretch of unchanged text shown on a preview line. */
const MAX_SHOWN_LINE = 400;

/** The changed part of a line (common prefix and suffix dropped), masked. */
function erasedPart(before: string, after: string): string {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let end = 0;
  while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
  const removed = before.slice(start, before.length - end);
  return removed.trim() === '' ? '' : mask(removed);
}

/** The line as it will read, cut into text and markers; long unchanged text is cut. */
export function segmentsOf(after: string, marker: string): { segments: LineSegment[]; cut: boolean } {
  const segments: LineSegment[] = [];
  let cut = false;
  after.split(marker).forEach((text, i, parts) => {
    if (text.length > MAX_SHOWN_LINE) {
      cut = true;
      const half = MAX_SHOWN_LINE / 2;
      text = i === 0 ? `…${text.slice(-half)}` : i === parts.length - 1 ? `${text.slice(0, half)}…` : `${text.slice(0, half)}…${text.slice(-half)}`;
    }
    if (text) segments.push({ text, marker: false });
    if (i < parts.length - 1) segments.push({ text: marker, marker: true });
  });
  return { segments, cut };
}

function previewFile(ctx: AuditContext, item: PreviewItem, marker: string): PreviewFile {
  const entry = entryOf(ctx, item.commit);
  return {
    commit: item.commit,
    toolUseId: item.toolUseId,
    session: item.session,
    call: entry ? summarise(ctx, entry) : null,
    path: item.path,
    lines: item.lines.map((l) => ({ line: l.line, ...segmentsOf(l.after, marker), removed: l.after === '' && l.before !== '', erased: erasedPart(l.before, l.after) })),
    moreLines: item.moreLines,
  };
}

export function previewModel(ctx: AuditContext, request: RedactionRequest, outcome: RedactionOutcome): RedactionPreview {
  const first = outcome.firstRewritten ? entryOf(ctx, outcome.firstRewritten) : undefined;
  return {
    kind: request.kind,
    shownTarget: shownTarget(request),
    reason: request.reason,
    range: request.from || request.to ? { from: request.from ?? null, to: request.to ?? null } : null,
    marker: outcome.marker,
    id: outcome.id,
    commitsChanged: outcome.commitsChanged,
    commitsRewritten: outcome.commitsRewritten,
    blobsRedacted: outcome.blobsRedacted,
    firstRewritten: first ? summarise(ctx, first) : null,
    head: outcome.oldHead,
    files: outcome.preview.map((item) => previewFile(ctx, item, outcome.marker)),
    filesTruncated: outcome.preview.length >= PREVIEW_ITEMS,
  };
}

/**
 * Previewed redactions waiting for the operator's confirmation, by a random id, each bound to the login
 * session that previewed it and kept for PENDING_TTL_MS. Taking one removes it.
 */
const PENDING_TTL_MS = 15 * 60 * 1000;
const MAX_PENDING = 100;

interface Pending {
  sessionKey: string;
  request: RedactionRequest;
  head: string;
  expires: number;
}

export class PendingRedactions {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly now: () => number = Date.now) {}

  put(sessionKey: string, request: RedactionRequest, head: string): string {
    this.prune();
    const id = randomBytes(24).toString('base64url');
    this.pending.set(id, { sessionKey, request, head, expires: this.now() + PENDING_TTL_MS });
    return id;
  }

  /** The previewed redaction `id` names, if this login session made it and it has not expired. */
  take(id: unknown, sessionKey: string): { request: RedactionRequest; head: string } | null {
    if (typeof id !== 'string') return null;
    const found = this.pending.get(id);
    if (!found || found.sessionKey !== sessionKey) return null;
    this.pending.delete(id);
    if (found.expires <= this.now()) return null;
    return { request: found.request, head: found.head };
  }

  get size(): number {
    return this.pending.size;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, p] of this.pending) if (p.expires <= now) this.pending.delete(id);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
  }
}

/** A redaction record as the pages show it (everything but the old → new map). */
export type RedactionRow = Omit<RedactionRecord, 'map'>;

function rowOf(record: RedactionRecord): RedactionRow {
  const { map: _map, ...row } = record;
  return row;
}

/** Every redaction in the audit log (refs/memgit/audit), newest first. */
export async function listRedactionRows(ctx: AuditContext): Promise<RedactionRow[]> {
  return (await ctx.store.redactionLog().records()).map(rowOf).reverse();
}

/** Old → new rows on one page of a record. */
export const MAP_ROWS_PER_PAGE = 200;

export interface MapRow {
  old: string;
  new: string;
  /** The rewritten commit, when it is still in history (a later redaction may have rewritten it again). */
  call: CommitSummary | null;
}

export interface RedactionPage {
  record: RedactionRow;
  map: MapRow[];
  mapTotal: number;
  /** 0-based index of the first map row shown, and cursors to the neighbouring pages. */
  from: number;
  nextFrom: number | null;
  prevFrom: number | null;
}

export async function redactionPage(ctx: AuditContext, id: string, from = 0): Promise<RedactionPage> {
  const record = (await ctx.store.redactionLog().records()).find((r) => r.id === id);
  if (!record) throw new NotFound(`no redaction ${JSON.stringify(id)} in this store's audit log`);
  const all = Object.entries(record.map);
  if (!Number.isSafeInteger(from) || from < 0 || (from > 0 && from >= all.length)) throw new BadRequest(`from must be a row between 0 and ${Math.max(0, all.length - 1)}`);
  // The map is in history order (the rewrite walks oldest first): show it as written.
  const map = all.slice(from, from + MAP_ROWS_PER_PAGE).map(([old, now]) => {
    const entry = entryOf(ctx, now);
    return { old, new: now, call: entry ? summarise(ctx, entry) : null };
  });
  return {
    record: rowOf(record),
    map,
    mapTotal: all.length,
    from,
    nextFrom: from + MAP_ROWS_PER_PAGE < all.length ? from + MAP_ROWS_PER_PAGE : null,
    prevFrom: from > 0 ? Math.max(0, from - MAP_ROWS_PER_PAGE) : null,
  };
}


export async function redactionCount(ctx: AuditContext): Promise<number> {
  return (await ctx.store.redactionLog().ids()).length;
}
