import { encodePath, pathText, relativeTime, url, visible } from '../../src/web/filters';
import { compareTexts, MAX_DIFF_LINES, MAX_LINE_CHARS, pairRows } from '../../src/web/services/diff-view';
import { advance } from '../../src/web/services/files';
import { hostName } from '../../src/web/security';
import { blameStateBytes, CACHE_BUDGETS, createAuditContext, LruCache, stringBytes } from '../../src/web/services/context';

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

  it('carries the shared head and tail of a long file past the diff', () => {
    const lines = Array.from({ length: 200_001 }, () => 'a');
    lines[100_000] = 'm0';
    const first = advance({ lines: [], origins: [] }, lines, 'c1');
    const next = [...lines];
    next[100_000] = 'm1';
    next.push('tail');
    const second = advance(first, next, 'c2');
    expect(second.origins).toHaveLength(200_002);
    expect(second.origins[100_000]).toBe('c2');
    expect(second.origins[200_001]).toBe('c2');
    expect(second.origins.filter((o) => o === 'c1')).toHaveLength(200_000);
    // Too many edits for the diff's bound: the changed middle goes to the new commit, the ends keep theirs.
    const churn = [...next];
    for (let k = 1000; k < 9000; k++) churn[k] = `x${k}`;
    const third = advance(second, churn, 'c3');
    expect(third.origins.slice(0, 1000).every((o) => o === 'c1')).toBe(true);
    expect(third.origins.slice(1000, 9000).every((o) => o === 'c3')).toBe(true);
    expect(third.origins[200_001]).toBe('c2');
    expect(third.origins).toHaveLength(200_002);
  });
});

describe('runs of invisible characters', () => {
  it('collapses a run of the same code point into one counted mark', () => {
    const html = visible('a' + '\u200B'.repeat(3999) + 'b\u202E\u202Ec').toString();
    expect(html).toBe(
      'a<span class="ctl" title="U+200B ZERO WIDTH SPACE, 3999 in a row">U+200B \u00d73999</span>b' +
        '<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE, 2 in a row">U+202E \u00d72</span>c',
    );
  });

  it('keeps a megabyte of zero-width spaces within a few hundred bytes of markup', () => {
    const text = '\u200B'.repeat(1024 * 1024);
    expect(visible(text).toString().length).toBeLessThan(200);
    // Different characters in a row stay distinct marks.
    expect(visible('\u200B\u200C\u200B').toString().match(/class="ctl"/g)).toHaveLength(3);
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

describe('cache budgets', () => {
  it('never stores an entry above the per-entry cap, and keeps the total under its budget', () => {
    const cache = new LruCache<string, string>(1000, stringBytes, 1000, 300);
    cache.set('big', 'x'.repeat(200)); // 424 estimated bytes > 300
    expect(cache.get('big')).toBeUndefined();
    for (let k = 0; k < 50; k++) cache.set(`k${k}`, 'y'.repeat(100));
    expect(cache.weight).toBeLessThanOrEqual(1000);
    expect(cache.get('k49')).toBe('y'.repeat(100));
    expect(cache.get('k0')).toBeUndefined();
  });

  it('weighs a blame state by its lines, so a state of a huge file is not cached', () => {
    const lines = Array.from({ length: 300_000 }, (_, k) => `line ${k}`);
    const state = { lines, origins: lines.map(() => 'c'.repeat(40)) };
    expect(blameStateBytes(state)).toBeGreaterThan(CACHE_BUDGETS.blames.entry);
    const ctx = createAuditContext({} as never);
    ctx.blames.set('huge', state);
    expect(ctx.blames.get('huge')).toBeUndefined();
    ctx.blames.set('small', { lines: lines.slice(0, 10), origins: state.origins.slice(0, 10) });
    expect(ctx.blames.get('small')?.lines).toHaveLength(10);
  });
});

describe('pathText', () => {
  it('splits a path into segments that end with their "/", escaped, with break opportunities between them only', () => {
    expect(String(pathText('/memories/customers/acme-logistics/profile.md'))).toBe(
      '<span class="seg">/memories/</span><wbr><span class="seg">customers/</span><wbr><span class="seg">acme-logistics/</span><wbr><span class="seg">profile.md</span>',
    );
    expect(String(pathText('/memories/a<b>/"x"\u202e.md'))).toBe(
      '<span class="seg">/memories/</span><wbr><span class="seg">a&lt;b&gt;/</span><wbr><span class="seg">&quot;x&quot;<span class="ctl" title="U+202E RIGHT-TO-LEFT OVERRIDE">U+202E</span>.md</span>',
    );
    expect(String(pathText('notes.md'))).toBe('notes.md');
    expect(String(pathText(''))).toBe('');
    expect(String(pathText(null))).toBe('');
    // The text is the path, whatever its slashes.
    for (const p of ['/', '//a//b/', 'a/', '/memories/dir/']) expect(String(pathText(p)).replace(/<[^>]+>/g, '')).toBe(p);
  });
});
