import { structuredPatch } from 'diff';
import { trimCommonLines } from '../../../src/store/history-index/line-stats';
import { compareTexts } from '../../../src/web/services/diff-view';

/** compareTexts leaves shared leading and trailing lines out of the diff itself; the diff must not change. */

function randomText(rand: () => number, lines: number): string {
  const words = ['a', 'b', 'c', 'dd', ''];
  const out: string[] = [];
  for (let k = 0; k < lines; k++) out.push(words[Math.floor(rand() * words.length)]);
  return out.join('\n') + (rand() < 0.8 ? '\n' : '');
}

function mutate(rand: () => number, text: string): string {
  const lines = text.split('\n');
  const edits = 1 + Math.floor(rand() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rand() * (lines.length + 1));
    const r = rand();
    if (r < 0.4) lines.splice(at, 0, `new ${e}`);
    else if (r < 0.7) lines.splice(at, 1);
    else lines[at] = `changed ${e}`;
  }
  return lines.join('\n');
}

function seeded(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

it('gives the same counts, and hunks whose lines match both texts at their numbers', () => {
  const rand = seeded(20261203);
  for (let round = 0; round < 400; round++) {
    const before = randomText(rand, Math.floor(rand() * 40));
    const after = rand() < 0.1 ? before : mutate(rand, before);
    const view = compareTexts(before, after);
    const full = structuredPatch('a', 'b', before, after, undefined, undefined, { context: 3 });
    let added = 0;
    let removed = 0;
    for (const h of full.hunks) for (const l of h.lines) (l[0] === '+' ? added++ : l[0] === '-' ? removed++ : 0);
    expect([round, view.added, view.removed]).toEqual([round, added, removed]);
    const oldLines = before.split('\n');
    const newLines = after.split('\n');
    for (const hunk of view.hunks) {
      for (const line of hunk.lines) {
        if (line.oldNo !== null) expect([round, oldLines[line.oldNo - 1]]).toEqual([round, line.text]);
        if (line.newNo !== null) expect([round, newLines[line.newNo - 1]]).toEqual([round, line.text]);
      }
    }
  }
});

it('cuts a one-line change of a half-million-line file down to its context', () => {
  const half = 'a\n'.repeat(262_143);
  const before = `${half}m0\n${half}`;
  const after = `${half}m1\n${half}`;
  const trimmed = trimCommonLines(before, after, 3);
  expect(trimmed).toEqual({ before: 'a\na\na\nm0\na\na\na\n', after: 'a\na\na\nm1\na\na\na\n', skippedLines: 262_140 });
  const view = compareTexts(before, after);
  expect(view.hunks).toHaveLength(1);
  expect(view.hunks[0].header).toBe('@@ -262141,7 +262141,7 @@');
  expect(view.hunks[0].lines.filter((l) => l.kind !== 'ctx').map((l) => [l.kind, l.oldNo, l.newNo, l.text])).toEqual([
    ['del', 262_144, null, 'm0'],
    ['add', null, 262_144, 'm1'],
  ]);
});
