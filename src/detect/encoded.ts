/**
 * Encoded blobs: long base64 or hex runs, percent-encoded, `\uXXXX` and `&#NN;` sequences that decode to
 * readable text. Memory is prose; text that hides its words behind an encoding is a way past the rules
 * (which then read what it decodes to). Runs are found by one pass over the characters, not by regular
 * expressions; hashes, keys and binary blobs decode to bytes that are not text and are left alone.
 */

export type Encoding = 'base64' | 'hex' | 'percent' | 'unicode-escape' | 'html-entity';

export interface DecodedBlob {
  encoding: Encoding;
  /** Offset of the run in the scanned text. */
  index: number;
  length: number;
  text: string;
}

const MIN_BASE64 = 32;
const MIN_HEX = 32;
const MIN_ESCAPES = 6;
const MAX_BLOBS = 16;
const MAX_BLOB_CHARS = 64 * 1024;

const isBase64Char = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95;
const isUrlChar = (c: number) => isBase64Char(c) || c === 37 || c === 46 || c === 126;
const isHexChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** Decoded bytes that read as text: valid UTF-8, almost all printable, some letters. */
export function readableText(bytes: Buffer): string | null {
  if (bytes.length < 12) return null;
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD')) return null;
  let printable = 0;
  let letters = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp === 9 || cp === 10 || cp === 13 || (cp >= 32 && cp !== 127 && !(cp >= 0x80 && cp <= 0x9f))) printable++;
    if (/\p{L}/u.test(ch)) letters++;
  }
  const length = [...text].length;
  return printable / length >= 0.95 && letters / length >= 0.4 ? text : null;
}

/** Whether decoded text reads like prose (a sentence), not an identifier or JSON header. */
export function isProse(text: string): boolean {
  const spaces = (text.match(/ /g) ?? []).length;
  return spaces >= 3 && spaces / text.length < 0.4;
}

function runs(text: string, inRun: (c: number) => boolean, min: number, visit: (start: number, end: number) => boolean): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : -1;
    if (c >= 0 && inRun(c)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      if (i - start >= min && !visit(start, i)) return;
      start = -1;
    }
  }
}

/** Runs of `prefix` + `digits` escapes (`%41`, `\u0041`, `&#65;`), decoded. */
function escapeRuns(text: string, encoding: Encoding, match: RegExp, decode: (m: RegExpExecArray) => string, out: DecodedBlob[]): void {
  // `match` is sticky (y): it is tried only where the previous escape ended, so the pass stays linear.
  const lead = encoding === 'unicode-escape' ? '\\' : '&';
  for (let i = text.indexOf(lead); i >= 0 && i < text.length && out.length < MAX_BLOBS; ) {
    let end = i;
    let decoded = '';
    let count = 0;
    for (;;) {
      match.lastIndex = end;
      const m = match.exec(text);
      if (!m) break;
      decoded += decode(m);
      end = match.lastIndex;
      count++;
      if (decoded.length > MAX_BLOB_CHARS) break;
    }
    if (count >= MIN_ESCAPES && /\p{L}/u.test(decoded)) out.push({ encoding, index: i, length: end - i, text: decoded });
    i = text.indexOf(lead, Math.max(end, i + 1));
  }
}

export function findEncoded(text: string): DecodedBlob[] {
  const out: DecodedBlob[] = [];
  runs(text, isHexChar, MIN_HEX, (start, end) => {
    const run = text.slice(start, Math.min(end, start + 2 * MAX_BLOB_CHARS));
    const decoded = run.length % 2 === 0 ? readableText(Buffer.from(run, 'hex')) : null;
    if (decoded) out.push({ encoding: 'hex', index: start, length: end - start, text: decoded });
    return out.length < MAX_BLOBS;
  });
  runs(text, isBase64Char, MIN_BASE64, (start, end) => {
    const run = text.slice(start, Math.min(end, start + (4 * MAX_BLOB_CHARS) / 3));
    if (/^[0-9a-fA-F]+$/.test(run)) return true; // hex, above
    const decoded = readableText(Buffer.from(run, run.includes('-') || run.includes('_') ? 'base64url' : 'base64'));
    if (decoded) out.push({ encoding: 'base64', index: start, length: end - start, text: decoded });
    return out.length < MAX_BLOBS;
  });
  // Percent-encoding mixes escapes with plain characters ("ignore%20previous%20instructions").
  runs(text, isUrlChar, 12, (start, end) => {
    const run = text.slice(start, Math.min(end, start + MAX_BLOB_CHARS));
    let escapes = 0;
    for (let i = run.indexOf('%'); i >= 0; i = run.indexOf('%', i + 1)) if (isHexChar(run.charCodeAt(i + 1)) && isHexChar(run.charCodeAt(i + 2))) escapes++;
    if (escapes < 3) return true;
    try {
      const decoded = decodeURIComponent(run.replace(/\+/g, ' '));
      if (/\p{L}/u.test(decoded)) out.push({ encoding: 'percent', index: start, length: end - start, text: decoded });
    } catch {
      // not valid percent-encoding: left to the other rules
    }
    return out.length < MAX_BLOBS;
  });
  escapeRuns(text, 'unicode-escape', /\\u([0-9a-f]{4})/iy, (m) => String.fromCharCode(parseInt(m[1], 16)), out);
  escapeRuns(text, 'html-entity', /&#(?:x([0-9a-f]{1,6})|([0-9]{1,7}));/iy, (m) => {
    const cp = m[1] ? parseInt(m[1], 16) : Number(m[2]);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
  }, out);
  return out.slice(0, MAX_BLOBS);
}
