import { baseFootprint, changedLines, threeWayMerge } from '../../src/store/rollback/merge';

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
