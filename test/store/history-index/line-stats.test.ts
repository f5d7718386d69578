import { structuredPatch } from 'diff';
import { beyondEditLength, DIFF_MAX_EDIT_LENGTH, lineChangeCounts } from '../../../src/store/history-index/line-stats';
import { compareTexts } from '../../../src/web/services/diff-view';

/** A small deterministic generator (no Math.random: the cases are the same on every run). */
function generator(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

function randomText(next: () => number): string {
  const lines = Array.from({ length: Math.floor(next() * 12) }, () => ['a', 'b', 'c', 'd', ''][Math.floor(next() * 5)]);
  const text = lines.join('\n');
  return next() < 0.5 ? text : `${text}\n`;
}

describe('beyondEditLength', () => {
  it('says "beyond" only where jsdiff, searching up to the same number of edits, gives up', () => {
    const next = generator(19);
    let beyond = 0;
    for (let k = 0; k < 3000; k++) {
      const before = randomText(next);
      const after = randomText(next);
      const max = Math.floor(next() * 8);
      if (!beyondEditLength(before, after, max)) continue;
      beyond++;
      expect([before, after, max, structuredPatch('a', 'b', before, after, undefined, undefined, { maxEditLength: max })]).toEqual([before, after, max, undefined]);
    }
    expect(beyond).toBeGreaterThan(100); // the property was exercised, not vacuous
  });

  it(`answers at once for two unrelated versions of a 6,000-line file (jsdiff would search ${DIFF_MAX_EDIT_LENGTH} edits first)`, () => {
    const before = Array.from({ length: 6000 }, (_, k) => `x${k}\n`).join('');
    const after = Array.from({ length: 6000 }, (_, k) => `y${k}\n`).join('');
    expect(beyondEditLength(before, after, DIFF_MAX_EDIT_LENGTH)).toBe(true);
    expect(lineChangeCounts(before, after)).toEqual({ added: 0, removed: 0 });
    expect(compareTexts(before, after)).toMatchObject({ tooLarge: true, added: 0, removed: 0 });
    // Close versions are diffed as before.
    expect(lineChangeCounts(before, before.replace('x10\n', 'X10\n'))).toEqual({ added: 1, removed: 1 });
  });
});

describe('lineChangeCounts', () => {
  /** The counts of the whole texts' diff: what lineChangeCounts answered before it diffed only the lines between the shared ends. */
  function untrimmedCounts(before: string, after: string): { added: number; removed: number } {
    if (before === after) return { added: 0, removed: 0 };
    const patch = structuredPatch('a', 'b', before, after, undefined, undefined, { context: 3, maxEditLength: DIFF_MAX_EDIT_LENGTH });
    if (!patch) return { added: 0, removed: 0 };
    const lines = patch.hunks.flatMap((hunk) => hunk.lines);
    return { added: lines.filter((l) => l[0] === '+').length, removed: lines.filter((l) => l[0] === '-').length };
  }

  /** Texts that share long runs at both ends, with \r\n endings and last lines without a newline. */
  function sharedEnds(next: () => number): [string, string] {
    const pick = () => ['a\n', 'b\n', 'a', 'b', 'a\r\n', '\n', 'c\n', 'ab\n'][Math.floor(next() * 8)];
    const run = (n: number) => Array.from({ length: Math.floor(next() * n) }, pick).join('');
    const head = run(8);
    const tail = run(8);
    return [head + run(5) + tail, head + run(5) + tail];
  }

  it('counts what a diff of the whole texts counts (random pairs, shared ends, \\r\\n, no final newline)', () => {
    const next = generator(7);
    let differ = 0;
    for (let k = 0; k < 4000; k++) {
      const [before, after] = k % 2 ? sharedEnds(next) : [randomText(next), randomText(next)];
      if (before !== after) differ++;
      expect([before, after, lineChangeCounts(before, after)]).toEqual([before, after, untrimmedCounts(before, after)]);
    }
    expect(differ).toBeGreaterThan(3000);
  });

  it('diffs a one-line change of a half-million-line file as that line', () => {
    const before = Array.from({ length: 500_000 }, (_, k) => `line ${k}\n`).join('');
    const after = before.replace('line 250000\n', 'changed\n');
    expect(lineChangeCounts(before, after)).toEqual({ added: 1, removed: 1 });
    expect(lineChangeCounts(before, `${before}tail`)).toEqual({ added: 1, removed: 0 });
    expect(lineChangeCounts(`${before}tail`, `${before}tail\n`)).toEqual({ added: 1, removed: 1 });
  });
});
