/**
 * Errors with codes: every error class the package exports extends MemgitError and carries a stable code
 * from ERROR_CODES (each its own); every code is some class's; each edge answers every code from its one
 * table (or says, with null, that its documented default answers it); docs/library.md lists every code;
 * and no message carries a `memgit: ` prefix (the CLI adds it when it prints an error), so no edge strips one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as memgit from '../src';
import { exitCodeOf, EXIT_CODES } from '../src/cli/errors';
import { MCP_ANSWERS, MCP_REFUSALS, mcpRefusal, refusalText } from '../src/mcp/errors';
import { InvalidRequestError, UnknownActionError } from '../src/operator/errors';
import { HTTP_ANSWERS, httpErrorOf, refusal, SERVER_REFUSALS } from '../src/server/errors';
import { ERROR_CODES, MemgitError } from '../src/store/errors';
import { WEB_REFUSALS, WEB_STATUS, webAnswer, webRefusalCode } from '../src/web/errors';
import { REPO_ROOT } from './support/dist';

type ErrorClass = (new (...args: never[]) => Error) & { code?: string };

const exported = (Object.entries(memgit) as Array<[string, unknown]>).filter(
  (entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && (entry[1] as ErrorClass).prototype instanceof Error,
);

it('finds the error classes the package exports', () => {
  expect(exported.map(([name]) => name)).toEqual(expect.arrayContaining(['MemgitError', 'PointNotFoundError', 'StoreNotFoundError', 'KeyError', 'HttpMemoryToolError', 'InvalidFilterError']));
  expect(exported.length).toBeGreaterThan(30);
});

it('every exported error class extends MemgitError and has its own code', () => {
  const codes = new Map<string, string>();
  for (const [name, Class] of exported) {
    expect([name, Class === MemgitError || Class.prototype instanceof MemgitError]).toEqual([name, true]);
    expect([name, (ERROR_CODES as readonly string[]).includes(Class.code!)]).toEqual([name, true]);
    // The instance says the same as its class.
    expect((Object.create(Class.prototype) as MemgitError).code).toBe(Class.code);
    expect([name, codes.get(Class.code!)]).toEqual([name, undefined]);
    codes.set(Class.code!, name);
  }
  // And every code is some class's (the operator's two are answered by the edges, not exported).
  for (const Class of [InvalidRequestError, UnknownActionError]) codes.set(Class.code, Class.name);
  expect([...codes.keys()].sort()).toEqual([...ERROR_CODES].sort());
});

it('an error keeps its class, its code and its message; detail is the message', () => {
  const error = new memgit.PointNotFoundError('HEAD~9', 'HEAD~9 goes back further than the first commit');
  expect(error).toBeInstanceOf(memgit.CommitNotFoundError);
  expect([error.code, error.name, error.message, error.detail]).toEqual([
    'point_not_found',
    'PointNotFoundError',
    'HEAD~9 goes back further than the first commit',
    'HEAD~9 goes back further than the first commit',
  ]);
  const busy = new memgit.QueueFullError('acme-1', 3);
  expect([busy.code, busy.detail]).toEqual(['queue_full', busy.message]);
});

it("each edge's table answers every code (null: the edge's documented default)", () => {
  const codes = [...ERROR_CODES].sort();
  for (const table of [WEB_STATUS, HTTP_ANSWERS, MCP_ANSWERS, EXIT_CODES]) expect(Object.keys(table).sort()).toEqual(codes);
});

it('the tables answer as the edges always did', () => {
  const busy = new memgit.QueueFullError('acme-1', 3);
  const http = httpErrorOf(busy)!;
  expect([http.status, http.type, http.headers['Retry-After']]).toEqual([503, 'overloaded_error', '3']);
  expect(httpErrorOf(new memgit.ReadOnlyStoreError())!.message).toMatch(/^this store is a read-only clone .*; nothing was changed$/);
  expect(httpErrorOf(new memgit.StoreCorruptError('HEAD of /home/u/s does not resolve'))).toBeNull();
  expect(webAnswer(new memgit.CommitNotFoundError('x'))).toEqual({ status: 404, message: 'no commit or tool_use id "x" in this store', code: 'commit_not_found' });
  expect(webAnswer(new memgit.StoreCorruptError('broken'))).toBeNull();
  expect(mcpRefusal(new memgit.StoreNotFoundError('acme-1'))).toEqual({ message: 'the memory store does not exist.', absent: true });
  expect(refusalText(mcpRefusal(new memgit.LockTimeoutError('/x/.git/memgit.lock', 10))!)).toBe(
    'Error: the memory store is busy (another writer held it too long). Nothing was written; try again.',
  );
  expect(exitCodeOf('invalid_point')).toBe(64);
  expect(exitCodeOf('commit_not_found')).toBe(1);
});

it("each edge's own refusals have stable snake_case codes, in one table per edge, none a MemgitError's code", () => {
  for (const table of [SERVER_REFUSALS, WEB_REFUSALS, MCP_REFUSALS]) {
    for (const code of Object.keys(table)) {
      expect(code).toMatch(/^[a-z][a-z0-9_]*$/);
      expect([code, (ERROR_CODES as readonly string[]).includes(code)]).toEqual([code, false]);
    }
  }
  // An answer carries its code: a MemgitError's, or the edge's refusal.
  expect(httpErrorOf(new memgit.QueueFullError('acme-1', 3))!.code).toBe('queue_full');
  const tooLarge = refusal('body_too_large', 'too large');
  expect([tooLarge.status, tooLarge.type, tooLarge.code]).toEqual([413, 'request_too_large', 'body_too_large']);
  expect([webRefusalCode(404), webRefusalCode(500), webRefusalCode(418)]).toEqual(['not_found', 'internal_error', 'bad_request']);
  expect(MCP_REFUSALS.session_not_found).toEqual({ rpc: -32001, status: 404 });
});

it('docs/library.md lists every code in its errors table', () => {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'library.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Errors'), doc.indexOf('## Everything else'));
  for (const code of ERROR_CODES) expect([code, section.includes(`\`${code}\``)]).toEqual([code, true]);
});

it('no source file strips a "memgit: " prefix off a message (edges show detail)', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.m?ts$/.test(entry.name) && /replace\(\/\^memgit: \//.test(fs.readFileSync(full, 'utf8'))) offenders.push(path.relative(REPO_ROOT, full));
    }
  };
  walk(path.join(REPO_ROOT, 'src'));
  expect(offenders).toEqual([]);
});

it('no error message begins with "memgit:": each exported class constructed, its message and detail the same', () => {
  // Arguments that suit every constructor: a message or an id first, then an id, a number, a list.
  const made: string[] = [];
  for (const [name, Class] of exported) {
    let error: MemgitError | undefined;
    for (const args of [['acme-1', 'acme-2', 3, []], ['acme-1', [], 3, []]]) {
      try {
        error = new (Class as unknown as new (...args: unknown[]) => MemgitError)(...args);
        break;
      } catch {
        // a constructor that wants other arguments: the next set, or the source scan below
      }
    }
    if (!error) continue;
    made.push(name);
    expect([name, error.message.startsWith('memgit:')]).toEqual([name, false]);
    expect([name, error.detail]).toEqual([name, error.message]);
  }
  // The classes that write their own message are among them.
  expect(made).toEqual(expect.arrayContaining(['StoreClosedError', 'CommitNotFoundError', 'AmbiguousRefError', 'LockTimeoutError', 'StaleHeadError', 'ReplicationStoppedError', 'ReadOnlyStoreError', 'SessionKeyError', 'ReviewNotFoundError', 'DreamNotFoundError', 'DreamRunningError', 'QueueFullError', 'StoreNotFoundError']));
  expect(new memgit.AmbiguousRefError('abc', [{ kind: 'commit', commit: 'a'.repeat(40) }]).message).toMatch(/^"abc" is ambiguous: /);
});

/**
 * Where src/ may still write a string that begins with "memgit: ": none is an error message. The CLI's own
 * lines (src/cli: banners, notes, warnings; its one error printer adds the prefix) and these.
 */
const NOT_MESSAGES: Array<[file: string, text: string, why: string]> = [
  ['src/server/server.ts', "UNEXPECTED_MARK = 'memgit: UNEXPECTED'", 'the server log\'s mark of an unexpected failure'],
  ['src/tenancy/fleet.ts', 'process.stderr.write(`memgit: fleet: ', 'the fleet\'s default log'],
  ['src/compose/server.ts', 'process.stderr.write(`memgit: mcp: ', "MCP's default log"],
  ['src/mcp/http.ts', 'process.stderr.write(`memgit: ${message}', "MCP over HTTP's default log"],
  ['src/mcp/server.ts', 'process.stderr.write(`memgit: ${message}', "the MCP server's default log"],
  ['src/store/options.ts', 'process.stderr.write(`memgit: ${message}', "the store's default log"],
  ['src/store/write-lock.ts', 'emitWarning(`memgit: write lock compromised', 'a process warning'],
  ['src/store/history-index/progress.ts', 'stream.write(`\\rmemgit: ${label}', 'a progress line on a terminal'],
  ['src/store/write-protocol.ts', "message: 'memgit: initialise store\\n'", "the first commit's message (on disk)"],
  ['src/operator/rollback.ts', '\\ memgit: patch', 'a marker inside a patch'],
  ['src/web/auth.ts', ".send(`memgit: ${message}\\n`)", 'a plain-text HTTP answer of the login page'],
  ['src/web/security.ts', ".send('memgit: this server does not answer to that Host header", 'a plain-text HTTP answer (421)'],
];

it('no string in src begins with "memgit: " but the CLI\'s own lines and the few that are not error messages', () => {
  const offenders: string[] = [];
  const used = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.m?ts$/.test(entry.name)) {
        const file = path.relative(REPO_ROOT, full).split(path.sep).join('/');
        const lines = fs.readFileSync(full, 'utf8').split('\n');
        lines.forEach((line, i) => {
          if (/^\s*(\*|\/\/|\/\*)/.test(line) || !/(['"`]|\\r|\\ )memgit: /.test(line)) return;
          // An error built with the prefix is refused wherever it is, the CLI included.
          const building = /new \w*Error\(|super\(|\.message = /.test(line) || /(new \w*Error|super)\(\s*$/.test(lines[i - 1] ?? '');
          const allowed = NOT_MESSAGES.find(([f, text]) => f === file && line.includes(text));
          if (allowed) used.add(allowed[1]);
          if (building || (!allowed && !file.startsWith('src/cli/'))) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  walk(path.join(REPO_ROOT, 'src'));
  expect(offenders).toEqual([]);
  // Every exception listed is still there (a stale entry would hide nothing, but says something false).
  expect(NOT_MESSAGES.map(([, text]) => text).filter((text) => !used.has(text))).toEqual([]);
});
