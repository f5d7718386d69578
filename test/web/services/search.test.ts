import { matchingLines, SEARCH_BUDGETS } from '../../../src/web/services/search';

describe('matchingLines', () => {
  it('numbers matching lines without splitting the text', () => {
    const text = 'alpha\nbeta\nAlphabet soup\n\ngamma alpha\n';
    expect(matchingLines(text, 'alpha', 10, 1000)).toEqual({
      lines: [
        { no: 1, text: 'alpha', cutBefore: false, cutAfter: false },
        { no: 3, text: 'Alphabet soup', cutBefore: false, cutAfter: false },
        { no: 5, text: 'gamma alpha', cutBefore: false, cutAfter: false },
      ],
      more: false,
    });
    // Several matches on one line count once; the next line's number stays right.
    expect(matchingLines('a a a\nb\na\n', 'a', 10, 1000).lines.map((l) => l.no)).toEqual([1, 3]);
    expect(matchingLines('no newline at end a', 'a', 10, 1000).lines).toHaveLength(1);
  });

  it('cuts a long line to a window around the match', () => {
    const line = 'x'.repeat(100_000) + 'NEEDLE' + 'y'.repeat(100_000);
    const [hit] = matchingLines(`${line}\n`, 'needle', 10, 1_000_000).lines;
    expect(hit.text.length).toBeLessThanOrEqual(SEARCH_BUDGETS.lineChars);
    expect(hit.text).toContain('NEEDLE');
    expect([hit.cutBefore, hit.cutAfter]).toEqual([true, true]);
  });

  it('stops at the line and character budgets and says there is more', () => {
    const text = 'a\n'.repeat(1000);
    expect(matchingLines(text, 'a', 20, 1000)).toMatchObject({ more: true });
    expect(matchingLines(text, 'a', 20, 1000).lines).toHaveLength(20);
    expect(matchingLines(text, 'a', 500, 5).lines).toHaveLength(5);
    expect(matchingLines(text, 'a', 20, 1000).lines[19].no).toBe(20);
  });
});
