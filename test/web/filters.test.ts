import { cutMiddle, encodePath, relativeTime, url, visible } from '../../src/web/filters';
import { compareTexts, MAX_DIFF_LINES, MAX_LINE_CHARS, pairRows } from '../../src/web/services/diff-view';
import { advance } from '../../src/web/services/files';
import { hostName } from '../../src/web/security';
import { LruCache } from '../../src/web/services/context';

describe('visible', () => {
  it('escapes markup and marks invisible and bidi characters', () => {
    expect(visible('<b a="1">&\'</b>').toString()).toBe('&lt;b a=&quot;1&quot;&gt;&amp;&#39;&lt;/b&gt;');
    expect(visible('a\u202Eb').toString()).toBe('a<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>b');
    expect(visible('\u200B\u0000\u{E0041}').toString()).toContain('U+E0041');
    expect(visible('tab\there').toString()).toBe('tab\there');
    expect(visible(null).toString()).toBe('');
  });

  it('highlights matches case-insensitively without unescaping anything', () => {
    expect(visible('<x>Atlas atlas', 'ATLAS').toString()).toBe('&lt;x&gt;<mark>Atlas</mark> <mark>atlas</mark>');
    expect(visible('a<b', '<').toString()).toBe('a<mark>&lt;</mark>b');
  });
});

describe('url helpers', () => {
  it('builds same-origin URLs with every part encoded', () => {
    expect(url('/commits', { session: 'a b&c', before: null, text: '' })).toBe('/commits?session=a%20b%26c');
    expect(encodePath("x' on=1/#h 100%.md")).toBe("x'%20on%3D1/%23h%20100%25.md");
    expect(() => url('//evil.example/')).toThrow();
    expect(() => url('javascript:alert(1)')).toThrow();
  });

  it('reads host names from Host headers', () => {
    expect(hostName('LocalHost:3000')).toBe('localhost');
    expect(hostName('[::1]:80')).toBe('[::1]');
    expect(hostName('a b')).toBeNull();
    expect(hostName(undefined)).toBeNull();
  });

  it('says how long ago', () => {
    expect(relativeTime(1000, 1000)).toBe('just now');
    expect(relativeTime(1000, 1000 + 3 * 60)).toBe('3 minutes ago');
    expect(relativeTime(1000, 1000 + 3600)).toBe('1 hour ago');
  });
});

describe('compareTexts', () => {
  it('numbers lines and pairs removals with additions for side by side', () => {
    const result = compareTexts('a\nb\nc\n', 'a\nB\nc\nd\n');
    expect(result).toMatchObject({ added: 2, removed: 1, truncated: false, tooLarge: false });
    const rows = result.hunks[0].splitRows.map((r) => [r.left?.text ?? null, r.right?.text ?? null]);
    expect(rows).toEqual([['a', 'a'], ['b', 'B'], ['c', 'c'], [null, 'd']]);
    expect(pairRows([])).toEqual([]);
  });

  it('cuts huge diffs and long lines, keeping the counts exact', () => {
    const many = Array.from({ length: MAX_DIFF_LINES + 500 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const result = compareTexts('', many);
    expect(result.added).toBe(MAX_DIFF_LINES + 500);
    expect(result.truncated).toBe(true);
    expect(result.hunks.reduce((n, h) => n + h.lines.length, 0)).toBe(MAX_DIFF_LINES);
    const long = compareTexts('', 'x'.repeat(MAX_LINE_CHARS + 10) + '\n');
    expect(long.hunks[0].lines[0]).toMatchObject({ cut: true, text: 'x'.repeat(MAX_LINE_CHARS) });
  });
});

describe('blame step', () => {
  it('keeps the origin of unchanged lines and gives new lines to the new commit', () => {
    const first = advance({ lines: [], origins: [] }, ['a', 'b', 'c'], 'c1');
    const second = advance(first, ['a', 'x', 'c', 'd'], 'c2');
    expect(second.origins).toEqual(['c1', 'c2', 'c1', 'c2']);
    const third = advance(second, ['d'], 'c3');
    expect(third.origins).toEqual(['c2']);
  });
});

describe('LruCache', () => {
  it('evicts the least recently used entries by count and by weight', () => {
    const byCount = new LruCache<string, number>(2);
    byCount.set('a', 1);
    byCount.set('b', 2);
    byCount.get('a');
    byCount.set('c', 3);
    expect([byCount.get('a'), byCount.get('b'), byCount.get('c')]).toEqual([1, undefined, 3]);
    const byWeight = new LruCache<string, string>(100, (s) => s.length, 10);
    byWeight.set('x', '123456');
    byWeight.set('y', '1234');
    byWeight.set('z', '12');
    expect([byWeight.get('x'), byWeight.get('y'), byWeight.get('z')]).toEqual([undefined, '1234', '12']);
    byWeight.set('huge', '12345678901');
    expect(byWeight.get('huge')).toBeUndefined();
    expect(byWeight.get('y')).toBe('1234');
  });
});

describe('cutMiddle', () => {
  it('keeps the start and the distinguishing end of long ids, and short ids whole', () => {
    expect(cutMiddle('sess_20261202T140312_k3f9')).toBe('sess_20…40312_k3f9');
    expect(cutMiddle('sess_20261202T140312_k3f9').length).toBe(18);
    expect(cutMiddle('sess_20261202T140312_zz01')).not.toBe(cutMiddle('sess_20261202T140312_k3f9'));
    expect(cutMiddle('toolu_01B2OlatoaybhHitbwJuQ5gK')).toBe('toolu_0…itbwJuQ5gK');
    expect(cutMiddle('toolu_01')).toBe('toolu_01');
    expect(cutMiddle('😀'.repeat(30))).toBe(`${'😀'.repeat(7)}…${'😀'.repeat(10)}`);
    expect(cutMiddle(null)).toBe('');
  });
});
