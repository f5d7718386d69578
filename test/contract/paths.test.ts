import * as fs from 'fs';
import * as path from 'path';
import { isValidId, resolvePath, runCommand, toVirtual } from '../../src/contract';
import { contractOptions, CONFORMANCE_DIR, treeFrom } from './harness';

interface HostilePath {
  path: string;
  expected: string;
}

const hostilePaths: HostilePath[] = JSON.parse(
  fs.readFileSync(path.join(CONFORMANCE_DIR, 'hostile-paths.json'), 'utf8'),
);
const ACCEPT_PREFIX = 'accept-normalized:';
const rejected = hostilePaths.filter((entry) => entry.expected === 'reject');
const accepted = hostilePaths.filter((entry) => entry.expected.startsWith(ACCEPT_PREFIX));

describe('hostile-paths.json', () => {
  it('has only reject and accept-normalized verdicts', () => {
    expect(rejected.length + accepted.length).toBe(hostilePaths.length);
    expect(rejected.length).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(0);
  });

  it.each(rejected.map((entry) => [JSON.stringify(entry.path), entry.path] as const))(
    'rejects %s',
    (_label, hostile) => {
      const resolved = resolvePath(hostile);
      expect(resolved.ok).toBe(false);
      if (!resolved.ok) expect(resolved.error).toMatch(/^Error: (Path |Invalid path )/);
    },
  );

  it.each(accepted.map((entry) => [JSON.stringify(entry.path), entry] as const))(
    'accepts %s',
    (_label, entry) => {
      const resolved = resolvePath(entry.path);
      expect(resolved).toMatchObject({ ok: true, virtual: entry.expected.slice(ACCEPT_PREFIX.length) });
      if (resolved.ok) expect(toVirtual(resolved.rel)).toBe(resolved.virtual);
    },
  );

  // Every command that takes a path must refuse every hostile path without producing an edit.
  const commandsTakingAPath = [
    (p: string) => ({ command: 'view', path: p }),
    (p: string) => ({ command: 'create', path: p, file_text: 'x' }),
    (p: string) => ({ command: 'str_replace', path: p, old_str: 'x', new_str: 'y' }),
    (p: string) => ({ command: 'insert', path: p, insert_line: 0, insert_text: 'y' }),
    (p: string) => ({ command: 'delete', path: p }),
    (p: string) => ({ command: 'rename', old_path: p, new_path: '/memories/target.md' }),
    (p: string) => ({ command: 'rename', old_path: '/memories/source.md', new_path: p }),
  ];
  it('is refused by every command taking a path, with no edits', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/source.md', file_text: 'x' }]);
    for (const entry of rejected) {
      for (const makeInput of commandsTakingAPath) {
        const outcome = await runCommand(makeInput(entry.path), tree, contractOptions());
        expect({ path: entry.path, isError: outcome.isError, edits: outcome.edits }).toEqual({
          path: entry.path,
          isError: true,
          edits: undefined,
        });
      }
    }
  });
});

describe('resolvePath', () => {
  it.each([
    ['/memories', '', '/memories'],
    ['/memories/', '', '/memories'],
    ['/memories/notes/', 'notes', '/memories/notes'],
    ['/memories/a/b.md', 'a/b.md', '/memories/a/b.md'],
    ['/memories/cafe\u0301.md', 'caf\u00e9.md', '/memories/caf\u00e9.md'],
  ])('resolves %j', (given, rel, virtual) => {
    expect(resolvePath(given)).toEqual({ ok: true, rel, virtual, asGiven: given });
  });

  it.each([
    ['/etc/passwd', 'Error: Path must start with /memories, got: /etc/passwd'],
    ['/memories/a/../b', 'Error: Path /memories/a/../b would escape /memories directory'],
    ['/memories/\uFF0E\uFF0E/b', 'Error: Path /memories/\uFF0E\uFF0E/b would escape /memories directory'],
    ['/memories/a\uFF0Fb', 'Error: Path /memories/a\uFF0Fb would escape /memories directory'],
    ['/memories/%41', 'Error: Path /memories/%41 would escape /memories directory'],
    ['/memories/a\u200Bb', 'Error: Invalid path "/memories/a\u200Bb": contains control or invisible characters'],
    ['/memories/a\uFFFD', 'Error: Invalid path "/memories/a\uFFFD": contains control or invisible characters'],
    ['/memories/a\u2028b', 'Error: Invalid path "/memories/a\u2028b": contains control or invisible characters'],
    ['/memories/\uFF0Egit', 'Error: Invalid path "/memories/\uFF0Egit": names starting with "." are reserved'],
    ['/memories/a|b', 'Error: Invalid path "/memories/a|b": contains characters not allowed in file names'],
    [' /x', 'Error: Path must start with /memories, got:  /x'],
    ['/memories/ a.md', 'Error: Invalid path "/memories/ a.md": has a name that starts with a space or ends with "." or a space'],
    ['/memories/LPT\u00B9.txt', 'Error: Invalid path "/memories/LPT\u00B9.txt": uses a reserved device or short name'],
    ['/memories/aux', 'Error: Invalid path "/memories/aux": uses a reserved device or short name'],
    ['/memories/' + 'b'.repeat(256), `Error: Invalid path "/memories/${'b'.repeat(256)}": has a name longer than 255 bytes`],
    ['/memories/' + 'b/'.repeat(400) + 'c', `Error: Invalid path "/memories/${'b/'.repeat(400)}c": has more than 20 segments`],
  ])('rejects %j with the exact text', (given, error) => {
    expect(resolvePath(given)).toEqual({ ok: false, error });
  });

  it('accepts names that merely resemble reserved ones', () => {
    for (const name of ['console.md', 'COM10', 'nul-notes', 'a.b', 'x~y', '%zz']) {
      expect(resolvePath(`/memories/${name}`)).toMatchObject({ ok: true, rel: name });
    }
  });

  it('accepts exactly 1024 bytes and rejects 1025', () => {
    // '/memories/' (10 bytes) + ten 100-byte 'a…a/' segments = 1010 bytes, then a last name.
    const pathOfBytes = (bytes: number): string => '/memories/' + `${'a'.repeat(99)}/`.repeat(10) + 'a'.repeat(bytes - 1010);
    expect(Buffer.byteLength(pathOfBytes(1024))).toBe(1024);
    expect(resolvePath(pathOfBytes(1024)).ok).toBe(true);
    expect(resolvePath(pathOfBytes(1025))).toEqual({
      ok: false,
      error: `Error: Invalid path ${JSON.stringify(pathOfBytes(1025))}: is longer than 1024 bytes`,
    });
  });

  it.each([undefined, null, 42, ['/memories'], { path: '/memories' }])('rejects the non-string %j', (value) => {
    expect(resolvePath(value)).toEqual({ ok: false, error: 'Error: Invalid input: path must be a string' });
    expect(resolvePath(value, 'new_path')).toEqual({
      ok: false,
      error: 'Error: Invalid input: new_path must be a string',
    });
  });
});

describe('isValidId', () => {
  it.each(['toolu_01ABC', 'a', 'x'.repeat(128), 'session:1.2-3'])('accepts %j', (id) => {
    expect(isValidId(id)).toBe(true);
  });
  it.each(['', 'x'.repeat(129), 'a b', 'a\nb', 'a/b', '\u00e9', 42, null, undefined])('rejects %j', (id) => {
    expect(isValidId(id)).toBe(false);
  });
});
