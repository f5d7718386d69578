import { baseFootprint, changedLines, MERGE_LIMITS, splitShared, threeWayMerge } from '../../src/store/rollback/merge';

const text = (...lines: string[]) => lines.map((l) => `${l}\n`).join('');

describe('threeWayMerge (base = what the call wrote, ours = now, theirs = before the call)', () => {
  it('undoes the call and keeps a later change elsewhere in the file', () => {
    const before = text('a', 'b', 'c', 'd', 'e');
    const base = text('a', 'BAD', 'c', 'd', 'e');
    const ours = text('a', 'BAD', 'c', 'd', 'E2');
    expect(threeWayMerge(base, ours, before)).toEqual({ clean: true, text: text('a', 'b', 'c', 'd', 'E2') });
  });

  it('removes an inserted line while keeping a line inserted right after it (git would call this a conflict)', () => {
    const before = text('a', 'b');
    const base = text('a', 'BAD', 'b');
    const ours = text('a', 'BAD', 'good', 'b');
    expect(threeWayMerge(base, ours, before)).toEqual({ clean: true, text: text('a', 'good', 'b') });
  });

  it('reports a conflict when a later change rewrote the same line, in ours and base coordinates', () => {
    const before = text('a', 'b', 'c');
    const base = text('a', 'BAD', 'c');
    const ours = text('a', 'BAD but edited', 'c');
    expect(threeWayMerge(base, ours, before)).toEqual({ clean: false, conflicts: [{ ours: { start: 1, end: 2 }, base: { start: 1, end: 2 } }] });
  });

  it('treats two insertions at the same place as a conflict', () => {
    const before = text('a', 'c');
    const base = text('a', 'b', 'c');
    // Reverting the deletion of a line at the place where a later call inserted one: order unknown.
    expect(threeWayMerge(text('a', 'c'), text('a', 'X', 'c'), base).clean).toBe(false);
    expect(threeWayMerge(base, base, before)).toEqual({ clean: true, text: before });
  });

  it('accepts a later change identical to the undo', () => {
    const before = text('a', 'b');
    const base = text('a', 'B');
    expect(threeWayMerge(base, before, before)).toEqual({ clean: true, text: before });
  });

  it('keeps a missing final newline as it is', () => {
    expect(threeWayMerge('a\nB\nc', 'a\nB\nc\nd', 'a\nb\nc')).toEqual({ clean: true, text: 'a\nb\nc\nd' });
  });
});

describe('baseFootprint and changedLines', () => {
  it('maps a later change back to the lines of base it touched', () => {
    const base = text('a', 'b', 'c', 'd');
    // The later call's before already had an extra line on top; it then changed "c".
    const before = text('top', 'a', 'b', 'c', 'd');
    const after = text('top', 'a', 'b', 'C', 'd');
    expect(baseFootprint(base, before, after)).toEqual([{ start: 2, end: 3 }]);
    expect(changedLines(before, after)).toEqual([{ from: 4, to: 4 }]);
  });

  it('maps an insertion to the gap between base lines', () => {
    const base = text('a', 'b');
    expect(baseFootprint(base, base, text('a', 'new', 'b'))).toEqual([{ start: 1, end: 1 }]);
  });
});

describe('bounded merges of hostile files', () => {
  // node-diff3's LCS over half a million lines (all alike) would run for hours; these must come back.
  const many = (n: number, line: (k: number) => string) => Array.from({ length: n }, (_, k) => `${line(k)}\n`).join('');

  it('merges a one-line change of a 524,287-line file by the few lines around it', () => {
    const lines = 524_287;
    const middle = (lines - 1) / 2;
    const withMarker = (m: string, extra = 'tail') => many(lines, (k) => (k === middle ? m : k === lines - 1 ? extra : 'a'));
    // The call changed the marker m0 -> m1; a later call changed the last line; undo the call.
    const result = threeWayMerge(withMarker('m1'), withMarker('m1', 'tail edited'), withMarker('m0'));
    expect(result.clean).toBe(true);
    if (!result.clean) return;
    expect(result.text).toBe(withMarker('m0', 'tail edited'));
  });

  it('reports a conflict in file coordinates after leaving the shared lines out', () => {
    const base = many(1000, (k) => (k === 500 ? 'BAD' : `line ${k}`));
    const ours = many(1000, (k) => (k === 500 ? 'BAD, edited later' : `line ${k}`));
    const theirs = many(1000, (k) => `line ${k}`);
    expect(threeWayMerge(base, ours, theirs)).toEqual({ clean: false, conflicts: [{ ours: { start: 500, end: 501 }, base: { start: 500, end: 501 } }] });
  });

  it('refuses as tooLarge a merge whose sides differ from base in more lines than MERGE_LIMITS allow', () => {
    const n = Math.max(MERGE_LIMITS.editLength, Math.ceil(Math.sqrt(MERGE_LIMITS.lcsWork))) + 10;
    // Every line differs on all three sides: no shared head or tail but the final newline.
    const result = threeWayMerge(many(n, (k) => `b${k}`), many(n, (k) => `o${k}`), many(n, (k) => `t${k}`));
    expect(result).toEqual({ clean: false, conflicts: [], tooLarge: true, lines: n });
  });

  it('merges changes far apart in a long file of identical lines (where an LCS would be quadratic)', () => {
    const n = 200_000;
    const at = (edits: Record<number, string>) => many(n, (k) => edits[k] ?? 'a');
    // The call wrote line 10; a later call changed line 199,990; undo the call.
    const result = threeWayMerge(at({ 10: 'BAD' }), at({ 10: 'BAD', 199_990: 'later' }), at({}));
    expect(result).toEqual({ clean: true, text: at({ 199_990: 'later' }) });
  });

  it('changedLines and baseFootprint fall back to the whole file beyond the edit bound', () => {
    const n = Math.max(MERGE_LIMITS.editLength, Math.ceil(Math.sqrt(MERGE_LIMITS.lcsWork))) + 10;
    const before = many(n, (k) => `x${k}`);
    const after = many(n, (k) => `y${k}`);
    expect(changedLines(before, after)).toEqual([{ from: 1, to: n }]);
    expect(baseFootprint(before, before, after)).toEqual([{ start: 0, end: n + 1 }]);
    // Within the bound, the same lines as an unbounded diff: the one changed line of a long file.
    const long = many(200_000, (k) => `l${k}`);
    const edited = long.replace('l150000\n', 'L150000\n');
    expect(changedLines(long, edited)).toEqual([{ from: 150_001, to: 150_001 }]);
    expect(baseFootprint(long, long, edited)).toEqual([{ start: 150_000, end: 150_001 }]);
  });
});

describe('splitShared', () => {
  const cases: string[][] = [
    ['a\nb\nc\n', 'a\nB\nc\n', 'a\nb\nc\n'],
    ['', 'x', ''],
    ['same\n', 'same\n', 'same\n'],
    ['a\n', 'a\nb\n', 'a'],
    ['ab', 'ab\n', 'abc'],
    ['x\n\ny', 'x\n\nz', 'x\n\ny'],
    ['head\nmid 1\ntail\n', 'head\nmid 2\ntail\n', 'head\ntail\n'],
    ['\n\n\n', '\n\n', '\n'],
    ['t\nail', 'other t\nail', 'xt\nail'],
  ];
  it.each(cases.map((c) => [JSON.stringify(c), c]))('splits %s into shared head, middles and shared tail', (_name, texts) => {
    const split = splitShared(texts as string[]);
    (texts as string[]).forEach((text, i) => {
      const lines = text.split('\n');
      expect(split.middles[i]).toEqual(lines.slice(split.head, lines.length - split.tail));
      expect(split.join(split.middles[i])).toBe(text);
    });
  });

  it('leaves only the differing lines of two 1 MiB texts', () => {
    const big = (m: string) => `${'a\n'.repeat(262_143)}${m}\n${'a\n'.repeat(262_143)}`;
    const { head, middles, tail, join } = splitShared([big('m0'), big('m1')]);
    expect(middles).toEqual([['m0'], ['m1']]);
    expect(head).toBe(262_143);
    expect(tail).toBe(262_144);
    expect(join(['m2'])).toBe(big('m2'));
  });
});
