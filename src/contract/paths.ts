/**
 * Virtual path rules of the memory tool (spec §2). Every `path`, `old_path` and `new_path` goes through
 * `resolvePath` before anything reads the store, so a rejected path can never reach storage.
 */
import type { RelPath } from './types';

/** The memory as the model names it: every memory path is `/memories` or a path below it. */
export const MEMORY_ROOT = '/memories';
/** The same folder in the store's git repository, without the slash (`/memories/a.md` is `memories/a.md` there). */
export const MEMORY_REPO_ROOT = MEMORY_ROOT.slice(1);

export type ResolvedPath =
  /** `asGiven` is the caller's spelling, which the result texts echo. */
  | { ok: true; rel: RelPath; virtual: string; asGiven: string }
  | { ok: false; error: string };

const MAX_PATH_BYTES = 1024;
const MAX_NAME_BYTES = 255;
const MAX_SEGMENTS = 20;

/** C0/C1 controls and DEL (Cc), format characters (Cf), lone surrogates (Cs), line/paragraph separators, U+FFFD. */
const CONTROL_OR_INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\uFFFD]/u;
/** `%` followed by two hex digits: a percent-encoded byte someone may decode later (`100%.md` is fine). */
const PERCENT_ENCODED_BYTE = /%[0-9A-Fa-f]{2}/;
const WINDOWS_FORBIDDEN_CHARS = /[<>:"|?*]/;
const EDGE_SPACE_OR_TRAILING_DOT = /^ |[ .]$/;
/** Windows device names, with any extension, including the superscript-digit variants Windows also reserves. */
const RESERVED_DEVICE_NAME = /^(?:CON|PRN|AUX|NUL|COM[0-9\u00B9\u00B2\u00B3]|LPT[0-9\u00B9\u00B2\u00B3])(?:\..*)?$/iu;
/** 8.3 short names such as `GIT~1` can alias another name (e.g. `.git`) on Windows checkouts. */
const SHORT_NAME_ALIAS = /~[0-9]/;

/** `/memories` for the root, `/memories/a/b.md` for `a/b.md`. */
export function toVirtual(rel: RelPath): string {
  return rel === '' ? MEMORY_ROOT : `${MEMORY_ROOT}/${rel}`;
}

export function childPath(parent: RelPath, name: string): RelPath {
  return parent === '' ? name : `${parent}/${name}`;
}

/** Parent directories of a RelPath, shallowest first, excluding the root and the path itself. */
export function ancestorsOf(rel: RelPath): RelPath[] {
  const segments = rel.split('/');
  const ancestors: RelPath[] = [];
  for (let depth = 1; depth < segments.length; depth++) {
    ancestors.push(segments.slice(0, depth).join('/'));
  }
  return ancestors;
}

/** Tool-use and session ids end up in commit messages, so only a conservative alphabet is allowed. */
export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9_.:-]{1,128}$/.test(id);
}

export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Applies the rules of spec §2 in order; the first failing rule decides the error text.
 * `field` only names the input field when the value is not a string at all.
 */
export function resolvePath(p: unknown, field = 'path'): ResolvedPath {
  if (typeof p !== 'string') {
    return { ok: false, error: `Error: Invalid input: ${field} must be a string` };
  }
  if (p !== MEMORY_ROOT && !p.startsWith(`${MEMORY_ROOT}/`)) {
    return { ok: false, error: `Error: Path must start with ${MEMORY_ROOT}, got: ${p}` };
  }
  if (looksLikeTraversal(p)) {
    return { ok: false, error: `Error: Path ${p} would escape ${MEMORY_ROOT} directory` };
  }
  const withoutTrailingSlash = p.endsWith('/') ? p.slice(0, -1) : p;
  const virtual = withoutTrailingSlash.normalize('NFC');
  const invalidReason = findInvalidNameReason(virtual);
  if (invalidReason !== null) {
    return { ok: false, error: `Error: Invalid path ${JSON.stringify(p)}: ${invalidReason}` };
  }
  const rel = virtual === MEMORY_ROOT ? '' : virtual.slice(MEMORY_ROOT.length + 1);
  return { ok: true, rel, virtual, asGiven: p };
}

/** Rule 2: refused even when the pattern would resolve inside the root. */
function looksLikeTraversal(p: string): boolean {
  if (p.includes('\\') || PERCENT_ENCODED_BYTE.test(p)) return true;
  return p
    .slice(MEMORY_ROOT.length)
    .split('/')
    .some((segment) => {
      const compatibilityForm = segment.normalize('NFKC');
      return (
        segment === '..' ||
        compatibilityForm === '..' ||
        compatibilityForm.includes('/') ||
        compatibilityForm.includes('\\')
      );
    });
}

/**
 * Rule 3 on the NFC form without its trailing slash. Whole-path reasons are checked first (control
 * characters, length, depth), then each name from left to right, each against the reasons in table order.
 */
function findInvalidNameReason(virtual: string): string | null {
  if (CONTROL_OR_INVISIBLE.test(virtual)) return 'contains control or invisible characters';
  if (utf8ByteLength(virtual) > MAX_PATH_BYTES) return `is longer than ${MAX_PATH_BYTES} bytes`;
  if (virtual === MEMORY_ROOT) return null;
  const names = virtual.slice(MEMORY_ROOT.length + 1).split('/');
  if (names.length > MAX_SEGMENTS) return `has more than ${MAX_SEGMENTS} segments`;
  for (const name of names) {
    const reason = findInvalidSegmentReason(name);
    if (reason !== null) return reason;
  }
  return null;
}

function findInvalidSegmentReason(name: string): string | null {
  if (name === '') return 'has an empty segment';
  if (name.startsWith('.') || name.normalize('NFKC').startsWith('.')) {
    return 'names starting with "." are reserved';
  }
  if (WINDOWS_FORBIDDEN_CHARS.test(name)) return 'contains characters not allowed in file names';
  if (EDGE_SPACE_OR_TRAILING_DOT.test(name)) {
    return 'has a name that starts with a space or ends with "." or a space';
  }
  if (RESERVED_DEVICE_NAME.test(name) || SHORT_NAME_ALIAS.test(name)) {
    return 'uses a reserved device or short name';
  }
  if (utf8ByteLength(name) > MAX_NAME_BYTES) return `has a name longer than ${MAX_NAME_BYTES} bytes`;
  return null;
}
