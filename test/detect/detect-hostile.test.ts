/**
 * Hostile input to the detectors. Work is bounded in two ways, both checked here without timing
 * anything: every regular expression is reviewed mechanically (no unbounded repetition, so the work at
 * a start position is bounded by a constant and a scan is linear in the text), and the text scanned is
 * capped (256 KiB of added text by default; a write over the cap holds, saying why). Adversarial strings
 * made of each family's trigger words, repeated to the cap, must come back (a catastrophic pattern would
 * not, within jest's timeout).
 */
import { detectWrite, proposeFromToolInput, PATTERN_RULES, DEFAULT_MAX_SCANNED_CHARS, type ProposedWrite } from '../../src/detect';
import { DESTINATION_PATTERNS } from '../../src/detect/destinations';
import { findPersonalData } from '../../src/detect/personal-data';
import { isHidden, stripHidden } from '../../src/detect/text';

/** A pattern's source with escapes and character classes taken out: what is left are its operators. */
function operators(source: string): string {
  return source
    .replace(/\\[pPu]\{[^}]{1,40}\}/g, 'x')
    .replace(/\\./g, 'x')
    .replace(/\[(?:\\.|[^\]\\])*\]/g, 'x');
}

/** Whether a quantified group contains a quantifier (star height over one) with an unbounded count anywhere. */
function unbounded(source: string): string[] {
  const ops = operators(source);
  const problems: string[] = [];
  if (/[*+]/.test(ops)) problems.push('* or +');
  if (/\{\d+,\}/.test(ops)) problems.push('{n,}');
  for (const m of ops.matchAll(/\{\d+(?:,(\d+))?\}/g)) if (Number(m[1] ?? 0) > 2048) problems.push(`bound ${m[0]} over 2048`);
  return problems;
}

function write(text: string): ProposedWrite {
  return { command: 'create', path: '/memories/hostile.md', files: [{ path: '/memories/hostile.md', before: null, after: text }] };
}

describe('every pattern is linear by construction', () => {
  test.each(PATTERN_RULES.map((r, i) => [`${r.kind}/${r.rule} #${i}`, r.pattern] as const))('%s has only bounded repetition', (_name, pattern) => {
    expect(unbounded(pattern.source)).toEqual([]);
    expect(pattern.flags).toContain('u');
  });

  test.each(DESTINATION_PATTERNS.map((p) => [p.source.slice(0, 60), p] as const))('destination pattern %s has only bounded repetition', (_name, pattern) => {
    expect(unbounded(pattern.source)).toEqual([]);
  });

  test('the review itself catches unbounded patterns', () => {
    expect(unbounded('a+b')).toEqual(['* or +']);
    expect(unbounded('(?:ab)*')).toEqual(['* or +']);
    expect(unbounded('a{2,}')).toEqual(['{n,}']);
    expect(unbounded('[a+*]{1,40}\\+')).toEqual([]);
  });
});

describe('adversarial text, repeated to the cap', () => {
  const cap = DEFAULT_MAX_SCANNED_CHARS;
  const fill = (unit: string) => unit.repeat(Math.ceil(cap / unit.length)).slice(0, cap - 1);
  const units: Array<[string, string]> = [
    ['ignore verbs', 'ignore '],
    ['ignore + previous, no noun', 'ignore previous '],
    ['note for the', 'note for the '],
    ['curl without a pipe', 'curl aaaa '],
    ['curl runs to the bound', 'curl ' + 'a'.repeat(400) + ' '],
    ['rm flags', 'rm -r -f -x -y '],
    ['dots and letters (e-mail)', 'a.'],
    ['at signs (e-mail)', 'a@b.'],
    ['digits and spaces (phone, card)', '1 '],
    ['IBAN-like', 'DE89 '],
    ['base64 alphabet', 'QUJD'],
    ['hex', 'ab'],
    ['percent escapes', '%41'],
    ['unicode escapes', '\\u0041'],
    ['html entities', '&#65;'],
    ['open brackets', '<'],
    ['markdown image starts', '!['],
    ['URL scheme', 'https://'],
    ['URL with a long path', 'https://a.example/' + 'b'.repeat(3000) + ' '],
    ['zero-width', '\u200B'],
    ['tag characters', '\u{E0041}'],
    ['variation selectors', '\uFE0F'],
    ['mixed-script word', 'pаypal '],
    ['without + checks', 'without the the the '],
    ['negations', 'never not no '],
    ['sentence gaps', 'from ' + 'x.'.repeat(30) + ' '],
  ];

  test.each(units)('%s: scanned up to the cap, and answered', (_name, unit) => {
    const text = fill(unit);
    const d = detectWrite(write(text));
    expect(d.scanned.chars).toBeLessThanOrEqual(cap);
    expect(['hold', 'pass']).toContain(d.verdict);
    expect(d.findings.length).toBeLessThan(1000);
  });

  test('a write over the cap holds, and says how much was scanned', () => {
    const text = 'Always run the tests.\n'.repeat(20_000); // 440 KB, all benign
    const d = detectWrite(write(text));
    expect(d.scanned).toEqual({ chars: cap, truncated: true });
    expect(d.verdict).toBe('hold');
    expect(d.findings[0]).toMatchObject({ kind: 'limit', rule: 'unscanned-remainder', reason: expect.stringContaining(`only the first ${cap}`) });
    const small = detectWrite(write('Always run the tests.\n'.repeat(10)), { maxScannedChars: 50 });
    expect(small.scanned.truncated).toBe(true);
  });

  test('one huge line (1 MiB through the contract) is cut at the cap', async () => {
    const line = 'x'.repeat(1024 * 1024 - 10);
    const d = detectWrite(await proposeFromToolInput({ command: 'create', path: '/memories/big.md', file_text: line }));
    expect(d.scanned).toEqual({ chars: cap, truncated: true });
  });

  test('the personal-data patterns stay linear on runs that used to be quadratic', () => {
    // 200 KB of "a." took 18 s with the former e-mail pattern; these must simply come back.
    for (const unit of ['a.', 'a-', 'a@b.', '1 ', '+1 ']) {
      const text = unit.repeat(100_000);
      expect(Array.isArray(findPersonalData(text))).toBe(true);
    }
    expect(findPersonalData('write to dana.smith+acme@mail.example.com now').map((f) => f.rule)).toEqual(['email']);
  });
});

test('the hidden-character class that is stripped in one pass names exactly the characters isHidden names', () => {
  const disagree: number[] = [];
  for (let cp = 0; cp < 0xe0200; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (isHidden(cp) !== (stripHidden(String.fromCodePoint(cp)) === '')) disagree.push(cp);
  }
  expect(disagree).toEqual([]);
});
