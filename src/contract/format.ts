/** Text formatting shared by the commands (spec §3). */

const SIZE_UNITS = ['B', 'K', 'M', 'G'] as const;

/** Directories have no size in git; the listing always shows them as 4096 bytes. */
export const DIRECTORY_SIZE_TEXT = '4K';

/**
 * Human-readable size as the reference handler prints it: `0B`, `5B`, `1K`, `1.0K` (1025), `1.3K`.
 * The float formula is kept verbatim so the rounding matches byte for byte.
 */
/**
 * A failed call's result text for a line that already says it is an error (`error: …`): without the
 * contract's own leading "Error: ", which would read twice.
 */
export function errorMessage(content: string): string {
  return content.replace(/^Error: /, '');
}

export function formatSize(bytes: number): string {
  if (bytes === 0) return '0B';
  const unitIndex = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), SIZE_UNITS.length - 1);
  const scaled = bytes / 1024 ** unitIndex;
  const number = Number.isInteger(scaled) ? String(scaled) : scaled.toFixed(1);
  return `${number}${SIZE_UNITS[unitIndex]}`;
}

export function splitLines(content: string): string[] {
  return content.split('\n');
}

/** `lines[0]` gets number `firstLineNumber`; the number is right-aligned in 6 columns, then a tab. */
export function numberLines(lines: readonly string[], firstLineNumber: number): string {
  return lines.map((line, index) => `${String(firstLineNumber + index).padStart(6, ' ')}\t${line}`).join('\n');
}

const SNIPPET_CONTEXT_LINES = 2;

/** Lines L-2 .. L+2 of `content`, clamped to the file, numbered as in `view`. */
export function snippetAround(content: string, line: number): string {
  const lines = splitLines(content);
  const first = Math.max(1, line - SNIPPET_CONTEXT_LINES);
  const last = Math.min(lines.length, line + SNIPPET_CONTEXT_LINES);
  return numberLines(lines.slice(first - 1, last), first);
}

/**
 * Echoes a hostile input value inside an error text without running any of its code: strings as they are,
 * other primitives via String(), objects and arrays as JSON (String() on `{"toString": 1}` would throw).
 */
export function displayValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value) ?? Object.prototype.toString.call(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
