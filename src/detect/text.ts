/**
 * Text as the rules see it. Hidden characters are found (and reported) before they are stripped, so that
 * `ig\u200Bnore` and `іgnore` (a Cyrillic і) read as `ignore`; tag characters (U+E0000 block) are decoded
 * to the ASCII they smuggle. Every loop here is one pass over the text.
 */

/** Bidi embedding/override/isolate controls: they reorder what a reviewer sees (Trojan Source). */
const BIDI_CONTROLS = new Set([0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);
const BIDI_MARKS = new Set([0x200e, 0x200f, 0x061c]);
/** Zero-width characters with no business in a note outside scripts that join letters or emoji sequences. */
const ZERO_WIDTH = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x180e]);
const JOINERS = new Set([0x200c, 0x200d]);
/** Characters that render as nothing (or blank) though they are letters or operators to a model. */
const INVISIBLE = new Set([0x2061, 0x2062, 0x2063, 0x2064, 0x115f, 0x1160, 0x3164, 0xffa0, 0x034f, 0x17b4, 0x17b5]);
const SOFT_HYPHEN = 0x00ad;
const BLACK_FLAG = 0x1f3f4;

const isTag = (cp: number) => cp >= 0xe0000 && cp <= 0xe007f;
const isVariationSupplement = (cp: number) => cp >= 0xe0100 && cp <= 0xe01ef;
const isVariationSelector = (cp: number) => cp >= 0xfe00 && cp <= 0xfe0f;
const isControl = (cp: number) => (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f);
const JOINING_CONTEXT = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Khmer}\p{Script=Myanmar}\u{FE0F}]/u;

/** Characters removed before matching (found and reported by scanHidden first). */
export function isHidden(cp: number): boolean {
  return (
    BIDI_CONTROLS.has(cp) ||
    BIDI_MARKS.has(cp) ||
    ZERO_WIDTH.has(cp) ||
    INVISIBLE.has(cp) ||
    cp === SOFT_HYPHEN ||
    isTag(cp) ||
    isVariationSupplement(cp) ||
    isVariationSelector(cp) ||
    isControl(cp)
  );
}

/** The characters isHidden names, as one character class (kept in step by test/detect/detect-rules.test.ts). */
const HIDDEN_CHARS = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C\u200B-\u200D\u2060\uFEFF\u180E\u2061-\u2064\u115F\u1160\u3164\uFFA0\u034F\u17B4\u17B5\u00AD\uFE00-\uFE0F\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/gu;

/** The text without hidden characters (one pass). */
export function stripHidden(text: string): string {
  return text.replace(HIDDEN_CHARS, '');
}

export interface HiddenHit {
  rule: 'bidi-control' | 'bidi-mark' | 'zero-width' | 'zero-width-run' | 'tag-characters' | 'variation-selector-run' | 'invisible-character' | 'control-character';
  /** Offset in the text of the first character of the kind. */
  index: number;
  count: number;
}

export interface HiddenScan {
  hits: HiddenHit[];
  /** ASCII smuggled in tag characters, if any (scanned by the rules like any other text). */
  tagPayload: string;
}

/** One pass over the code points: every kind of hidden character, with its first offset and count. */
export function scanHidden(text: string): HiddenScan {
  const first = new Map<HiddenHit['rule'], HiddenHit>();
  const hit = (rule: HiddenHit['rule'], index: number) => {
    const seen = first.get(rule);
    if (seen) seen.count++;
    else first.set(rule, { rule, index, count: 1 });
  };
  let tagPayload = '';
  let previous = -1;
  let selectorsInARow = 0;
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (BIDI_CONTROLS.has(cp)) hit('bidi-control', i);
    else if (BIDI_MARKS.has(cp)) hit('bidi-mark', i);
    else if (ZERO_WIDTH.has(cp)) {
      const next = text.codePointAt(i + width);
      const joinsLetters =
        JOINERS.has(cp) &&
        ((previous >= 0 && JOINING_CONTEXT.test(String.fromCodePoint(previous))) || (next !== undefined && JOINING_CONTEXT.test(String.fromCodePoint(next))));
      const byteOrderMark = cp === 0xfeff && i === 0;
      if (!joinsLetters && !byteOrderMark) hit('zero-width', i);
    } else if (INVISIBLE.has(cp)) hit('invisible-character', i);
    else if (isControl(cp)) hit('control-character', i);
    else if (isTag(cp)) {
      // An emoji tag sequence (the flags of England, Scotland, Wales) is U+1F3F4, a few tags, then U+E007F.
      let end = i;
      let payload = '';
      while (end < text.length && isTag(text.codePointAt(end)!)) {
        const tag = text.codePointAt(end)!;
        if (tag >= 0xe0020 && tag <= 0xe007e) payload += String.fromCharCode(tag - 0xe0000);
        end += 2;
      }
      const flag = previous === BLACK_FLAG && text.codePointAt(end - 2) === 0xe007f && (end - i) / 2 <= 7 && /^[a-z0-9]{2,6}$/.test(payload);
      if (!flag) {
        const seen = first.get('tag-characters');
        if (seen) seen.count += (end - i) / 2;
        else first.set('tag-characters', { rule: 'tag-characters', index: i, count: (end - i) / 2 });
        tagPayload += (tagPayload ? '\n' : '') + payload;
      }
      previous = text.codePointAt(end - 2)!;
      i = end;
      selectorsInARow = 0;
      continue;
    } else if (isVariationSupplement(cp)) hit('variation-selector-run', i);
    else if (isVariationSelector(cp)) {
      // One selector after an emoji or a CJK ideograph is ordinary; a run of them encodes bytes.
      selectorsInARow++;
      if (selectorsInARow >= 3) hit('variation-selector-run', i);
    }
    if (!isVariationSelector(cp)) selectorsInARow = 0;
    previous = cp;
    i += width;
  }
  const hits = [...first.values()];
  const zeroWidth = first.get('zero-width');
  // Four or more zero-width characters are enough to spell a message in binary.
  if (zeroWidth && zeroWidth.count >= 4) zeroWidth.rule = 'zero-width-run';
  const supplement = first.get('variation-selector-run');
  if (supplement && supplement.count < 2) hits.splice(hits.indexOf(supplement), 1);
  return { hits, tagPayload };
}

/** Cyrillic and Greek letters that look like Latin ones, folded only inside words that mix the scripts. */
const CONFUSABLES: Record<string, string> = {
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', і: 'i', ї: 'i', ј: 'j', ѕ: 's', ԁ: 'd', һ: 'h', ӏ: 'l', ԛ: 'q', ԝ: 'w',
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w', ϲ: 'c', ɡ: 'g', ɑ: 'a', ı: 'i',
};
const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE_SCRIPT = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/** Whether a word mixes Latin letters with Cyrillic or Greek ones (`pаypal` with a Cyrillic а). */
export function isMixedScript(word: string): boolean {
  return LATIN.test(word) && LOOKALIKE_SCRIPT.test(word);
}

/**
 * A line as the rules match it: compatibility-normalised (fullwidth and mathematical letters become plain
 * ones), hidden characters removed, lower case, typographic quotes and dashes made ASCII, runs of spaces
 * made one, and look-alike letters folded in words that mix scripts. Never contains a newline.
 */
export function foldLine(line: string): string {
  const out = stripHidden(line.normalize('NFKC'))
    .toLowerCase()
    .replace(/[\u2018\u2019\u201b\u2032\u02bc`´]/g, "'")
    .replace(/[\u201c\u201d\u201e\u201f\u00ab\u00bb]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\r\u2028\u2029 ]+/g, ' ');
  return LOOKALIKE_SCRIPT.test(out) ? foldMixedWords(out) : out;
}

const isLatinCode = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7);
const isLookalikeCode = (c: number) => (c >= 0x370 && c <= 0x3ff) || (c >= 0x400 && c <= 0x4ff) || c === 0x261 || c === 0x251 || c === 0x131;
const LETTER = /[\p{L}\p{M}]/u;

/** One pass: words (runs of letters) that mix Latin with Cyrillic or Greek get their look-alikes folded. */
function foldMixedWords(text: string): string {
  let out = '';
  let start = 0;
  let latin = false;
  let lookalike = false;
  const flush = (end: number) => {
    const word = text.slice(start, end);
    out += latin && lookalike ? [...word].map((c) => CONFUSABLES[c] ?? c).join('') : word;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const letter = c < 0x80 ? isLatinCode(c) : LETTER.test(text[i]);
    if (!letter) {
      flush(i);
      out += text[i];
      start = i + 1;
      latin = lookalike = false;
      continue;
    }
    if (isLatinCode(c)) latin = true;
    else if (isLookalikeCode(c)) lookalike = true;
  }
  flush(text.length);
  return out;
}

/** Spell hidden characters out (`<U+202E>`) so that a reviewer sees them. */
export function spellOutHidden(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    out += isHidden(cp) && cp !== 0x09 && !isVariationSelector(cp) ? `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>` : ch;
  }
  return out;
}

const EXCERPT = 160;

/** At most 160 characters of a line, around a position given as a share of its length, hidden characters spelled out. */
export function excerpt(line: string, at = 0): string {
  const visible = spellOutHidden(line.trim());
  if (visible.length <= EXCERPT) return visible;
  const centre = Math.round(at * visible.length);
  const start = Math.max(0, Math.min(visible.length - EXCERPT, centre - EXCERPT / 3));
  return `${start > 0 ? '…' : ''}${visible.slice(start, start + EXCERPT)}${start + EXCERPT < visible.length ? '…' : ''}`;
}
