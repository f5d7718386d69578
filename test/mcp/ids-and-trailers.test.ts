/** The ids memgit makes for MCP traffic, and the client trailers: hostile client text cannot forge or break a trailer. */
import { isValidId } from '../../src/contract/paths';
import { newMcpCallId, newMcpSessionId } from '../../src/mcp/ids';
import { relPathOfUri, resourceUri } from '../../src/mcp/resources';
import { clientTrailers, formatCommitMessage, parseCommitMessage, type CommitMeta } from '../../src/store/commit-message';

describe('MCP ids', () => {
  it('are valid memgit ids, unique, and sort by time', () => {
    const calls = Array.from({ length: 2000 }, () => newMcpCallId());
    expect(calls.every((id) => isValidId(id) && /^mcp_\d{8}T\d{6}\.\d{3}_[a-z2-7]{10}$/.test(id))).toBe(true);
    expect(new Set(calls).size).toBe(calls.length);
    const earlier = newMcpCallId(new Date('2026-12-03T07:59:59.999Z'));
    const later = newMcpCallId(new Date('2026-12-03T08:00:00.000Z'));
    expect(earlier.startsWith('mcp_20261203T075959.999_')).toBe(true);
    expect(earlier < later).toBe(true);
    const session = newMcpSessionId(new Date('2026-12-03T08:00:00.000Z'));
    expect(session).toMatch(/^sess_20261203T080000_[a-z2-7]{20}$/);
    expect(isValidId(session)).toBe(true);
  });
});

describe('client trailers', () => {
  const roundTrip = (meta: CommitMeta) => parseCommitMessage(formatCommitMessage(meta));

  it.each([
    ['plain', 'claude-code', '2.1.0', 'claude-code', '2.1.0'],
    ['a forged trailer on a new line', 'x\nMemory-Session: sess_forged\nMemory-Command: delete', '1', 'x Memory-Session: sess_forged Memory-Command: delete', '1'],
    ['carriage returns, NUL, line separators', 'a\r\u0000\u2028b', '\u0085v1', 'a b', 'v1'],
    ['nothing but control characters', '\n\r\t', '', undefined, undefined],
    ['a lone surrogate', 'a\ud800b', 'x\udc00', 'a\ufffdb', 'x\ufffd'],
    ['a very long name cut within a surrogate pair', `${'n'.repeat(98)}😀😀`, '1', `${'n'.repeat(98)}…`, '1'],
  ])('%s', (_label, name, version, expectedName, expectedVersion) => {
    const fields = clientTrailers({ kind: 'mcp', name, version });
    expect(fields).toEqual({
      client: 'mcp',
      ...(expectedName === undefined ? {} : { clientName: expectedName }),
      ...(expectedVersion === undefined ? {} : { clientVersion: expectedVersion }),
    });
    const meta: CommitMeta = { title: 'mcp_20261203T080000.000_aaaaaaaaaa', command: 'create', path: '/memories/a.md', session: 'sess_x', ...fields };
    const message = formatCommitMessage(meta);
    expect(message.split('\n').filter((line) => line.startsWith('Memory-Session:'))).toEqual(['Memory-Session: sess_x']);
    expect(message.split('\n').filter((line) => line.startsWith('Memory-Command:'))).toEqual(['Memory-Command: create']);
    // What the history index reads back from git is what was written.
    expect(roundTrip(meta)).toEqual(meta);
  });

  it('ignores values that are not strings', () => {
    expect(clientTrailers({ kind: 'mcp', name: { toString: () => 'x' }, version: 7 })).toEqual({ client: 'mcp' });
    expect(clientTrailers(undefined)).toEqual({});
  });
});

describe('memory:// resource URIs', () => {
  it('round-trip every memory path and refuse anything outside /memories', () => {
    for (const rel of ['notes.md', 'projects/100% done.md', 'a/b/café.txt', 'q#&+=;.md']) {
      expect(relPathOfUri(resourceUri(rel))).toBe(rel);
    }
    expect(resourceUri('projects/100% done.md')).toBe('memory:///memories/projects/100%25%20done.md');
    for (const uri of [
      'memory:///memories/../x',
      'memory:///memories/%2e%2e/x',
      'memory:///memories/a/%2F..%2F..%2Fx',
      'memory:///etc/passwd',
      'file:///memories/a.md',
      'memory:///memories/%E0%A4%A',
      'memory:///memories/.git/config',
      'memory:///memories/a%00.md',
    ]) {
      expect({ uri, rel: relPathOfUri(uri) }).toEqual({ uri, rel: null });
    }
  });
});
