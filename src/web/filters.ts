import * as nunjucks from 'nunjucks';

/**
 * Every nunjucks filter and global of the UI, registered in one place. Stored data is hostile: the only
 * filter that returns markup is `visible`, and it escapes every character of its input itself.
 */

/**
 * Characters that render invisibly or reorder text: C0/C1 controls (tab aside), format characters
 * (bidi embeddings/overrides/isolates, zero-width joiners and spaces, BOM, soft hyphen, tag characters),
 * line/paragraph separators, lone surrogates, and the Hangul fillers that pass for blanks.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115F\u1160\u3164\uFFA0]/gu;

/** The same characters without tab and newline, for a yes/no test that copies nothing. */
const HIDDEN_NOT_LAYOUT = /(?![\t\n])[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115F\u1160\u3164\uFFA0]/u;

const NAMES: Record<number, string> = {
  0x200b: 'ZERO WIDTH SPACE', 0x200c: 'ZERO WIDTH NON-JOINER', 0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK', 0x200f: 'RIGHT-TO-LEFT MARK', 0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING', 0x202c: 'POP DIRECTIONAL FORMATTING', 0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE', 0x2066: 'LEFT-TO-RIGHT ISOLATE', 0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE', 0x2069: 'POP DIRECTIONAL ISOLATE', 0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
  0x2060: 'WORD JOINER', 0x00ad: 'SOFT HYPHEN', 0x061c: 'ARABIC LETTER MARK', 0x0000: 'NULL',
  0x001b: 'ESCAPE', 0x000d: 'CARRIAGE RETURN', 0x2028: 'LINE SEPARATOR', 0x2029: 'PARAGRAPH SEPARATOR',
};

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The same five characters nunjucks' autoescape replaces. */
export function escape(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);
}

export function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

export function hasHidden(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  return HIDDEN_NOT_LAYOUT.test(text);
}

/**
 * Text made safe and honest for display: HTML-escaped, invisible characters shown as marked code points,
 * and (optionally) case-insensitive matches of `highlight` wrapped in <mark>. A run of the same invisible
 * character is one mark with a count ("U+200B ×3999"), so a file of zero-width spaces cannot blow a page
 * up twenty-fold.
 */
export function visible(text: unknown, highlight?: string): nunjucks.runtime.SafeString {
  const input = text === null || text === undefined ? '' : String(text);
  let out = '';
  let last = 0;
  let run: { ch: string; count: number } | null = null;
  const flush = (chunk: string) => {
    out += highlight ? markMatches(chunk, highlight) : escape(chunk);
  };
  const endRun = () => {
    if (!run) return;
    out += markHidden(run.ch, run.count);
    run = null;
  };
  for (const match of input.matchAll(HIDDEN)) {
    const ch = match[0];
    if (ch === '\t' || ch === '\n') continue; // layout characters, left in the text
    const index = match.index!;
    if (run && index === last && run.ch === ch) {
      run.count++;
    } else {
      endRun();
      flush(input.slice(last, index));
      run = { ch, count: 1 };
    }
    last = index + ch.length;
  }
  endRun();
  flush(input.slice(last));
  return new nunjucks.runtime.SafeString(out);
}

/**
 * A path made visible (as `visible` does) in segments that each end with their "/", with a line-break
 * opportunity between them: in a table (where app.css keeps each segment on one line) a long path wraps
 * between its folders, never inside a name ("acme-" / "logistics"); it copies as the same text.
 */
export function pathText(text: unknown): nunjucks.runtime.SafeString {
  const input = text === null || text === undefined ? '' : String(text);
  // "/memories/customers/a.md" → "/memories/", "customers/", "a.md": a leading "/" stays with its name.
  const segments = input.match(/\/*[^/]*(?:\/+|$)/g)!.filter((segment) => segment !== '');
  if (segments.length <= 1) return visible(input);
  return new nunjucks.runtime.SafeString(segments.map((segment) => `<span class="seg">${visible(segment)}</span>`).join('<wbr>'));
}

/**
 * What a text costs on a page, in characters of output: its length, plus the markup of each invisible
 * character (a run of one character is one mark). Budgets of diffs and files are counted in this unit.
 */
export function displayCost(text: string): number {
  let cost = text.length;
  let last = -2;
  let prev = '';
  for (const match of text.matchAll(HIDDEN)) {
    const ch = match[0];
    if (ch === '\t' || ch === '\n') continue;
    if (!(match.index === last && ch === prev)) cost += MARK_COST;
    last = match.index! + ch.length;
    prev = ch;
  }
  return cost;
}

const MARK_COST = 96;

function markHidden(ch: string, count: number): string {
  const cp = codePoint(ch);
  const name = NAMES[ch.codePointAt(0)!];
  const label = count > 1 ? `${cp} \u00d7${count}` : cp;
  const title = `${name ? `${cp} ${name}` : `${cp} (invisible or control character)`}${count > 1 ? `, ${count} in a row` : ''}`;
  return `<span class="ctl" title="${escape(title)}">${label}</span>`;
}

function markMatches(chunk: string, highlight: string): string {
  if (!highlight) return escape(chunk);
  const lower = chunk.toLowerCase();
  const needle = highlight.toLowerCase();
  let out = '';
  let from = 0;
  // toLowerCase can change lengths for a few characters; fall back to no highlight when it does.
  if (lower.length !== chunk.length) return escape(chunk);
  for (let i = lower.indexOf(needle); i !== -1 && needle; i = lower.indexOf(needle, from)) {
    out += escape(chunk.slice(from, i)) + '<mark>' + escape(chunk.slice(i, i + needle.length)) + '</mark>';
    from = i + needle.length;
  }
  return out + escape(chunk.slice(from));
}

const UNITS: [number, string][] = [
  [60, 'second'], [60, 'minute'], [24, 'hour'], [30, 'day'], [12, 'month'], [Infinity, 'year'],
];

/** "3 minutes ago", relative to `now` (both in seconds since the epoch). */
export function relativeTime(seconds: number, now = Date.now() / 1000): string {
  let delta = Math.round(now - seconds);
  const future = delta < 0;
  delta = Math.abs(delta);
  if (delta < 5) return 'just now';
  let value = delta;
  for (const [size, unit] of UNITS) {
    if (value < size) {
      const n = Math.floor(value);
      const text = `${n} ${unit}${n === 1 ? '' : 's'}`;
      return future ? `in ${text}` : `${text} ago`;
    }
    value /= size;
  }
  return '';
}

/** Times reach the templates as records' ISO strings or as seconds since the epoch. */
export type TimeValue = number | string;

function toSeconds(time: TimeValue): number {
  return typeof time === 'string' ? Date.parse(time) / 1000 : time;
}

export function absoluteTime(time: TimeValue): string {
  return new Date(toSeconds(time) * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function isoTime(time: TimeValue): string {
  return new Date(toSeconds(time) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A memory path relative to /memories as URL path segments ('a b/c#.md' → 'a%20b/c%23.md'). */
export function encodePath(rel: string): string {
  return rel.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

/** `/memories/a/b.md` → `a/b.md`. */
export function relOf(virtualPath: string | null | undefined): string {
  if (!virtualPath) return '';
  return virtualPath.replace(/^\/?memories\/?/, '');
}

/**
 * A same-origin URL: a fixed path (always starting with '/') and query parameters, all encoded.
 * Empty or null parameters are left out.
 */
export function url(pathname: string, params: Record<string, unknown> = {}): string {
  if (!pathname.startsWith('/') || pathname.startsWith('//')) throw new Error(`not a local path: ${pathname}`);
  const query = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '' && v !== false)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return query ? `${pathname}?${query}` : pathname;
}

export function fileUrl(rel: string, at?: string | null): string {
  return url(`/files/${encodePath(rel)}`, { at });
}

export function rawUrl(rel: string, at?: string | null): string {
  return url(`/raw/${encodePath(rel)}`, { at });
}

export function treeUrl(dir: string, at?: string | null): string {
  return url('/tree', { at, dir });
}

/**
 * An id that a URL parser would take for a dot segment and resolve away (`/sessions/..` is `/`, and
 * `%2E` spells the same segment to a browser). New ids may not be only dots, but a store written before
 * may hold them; their links carry the id in the query instead.
 */
export function isDotSegment(id: string): boolean {
  return id === '.' || id === '..';
}

/** A session's page: `/sessions/<id>`, or `/sessions?id=<id>` for an id a browser would resolve away. */
export function sessionUrl(id: string): string {
  return isDotSegment(id) ? url('/sessions', { id }) : `/sessions/${encodeURIComponent(id)}`;
}

/**
 * A call's page: `/calls/<tool_use id>`, by kind (see routes/commits.ts); a call whose id a browser
 * would resolve away is linked by its commit, `/commits/<sha>`, which names the same page.
 */
export function callUrl(toolUseId: string, commit?: string | null): string {
  return isDotSegment(toolUseId) && commit ? `/commits/${encodeURIComponent(commit)}` : `/calls/${encodeURIComponent(toolUseId)}`;
}

export function registerFilters(env: nunjucks.Environment): void {
  env.addFilter('visible', visible);
  env.addFilter('pathText', pathText);
  env.addFilter('hasHidden', hasHidden);
  env.addFilter('reltime', (t: TimeValue) => relativeTime(toSeconds(t)));
  env.addFilter('abstime', absoluteTime);
  env.addFilter('iso', isoTime);
  env.addFilter('bytes', humanBytes);
  env.addFilter('rel', relOf);
  env.addFilter('plural', (n: number, word: string, many?: string) => `${n} ${n === 1 ? word : many ?? `${word}s`}`);
  env.addGlobal('url', url);
  env.addGlobal('fileUrl', fileUrl);
  env.addGlobal('rawUrl', rawUrl);
  env.addGlobal('treeUrl', treeUrl);
  env.addGlobal('sessionUrl', sessionUrl);
  env.addGlobal('callUrl', callUrl);
}
