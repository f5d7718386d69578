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
