/**
 * The CLI prints an error as `memgit: <message>` with the prefix exactly once: error messages carry none
 * (test/errors.test.ts), and the CLI's one error printer (printError in src/cli/options.ts) adds it, for a
 * MemgitError no command handled (program.ts), a command's own refusal (fail) and a refused approval
 * (review.ts). Each line is the one users saw before the messages lost their prefix.
 */
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { CliRun, memgitInProcess } from '../support/cli-in-process';
import { ensureBuilt } from '../support/dist';

jest.setTimeout(120_000);

let root = '';
let repo = '';

beforeAll(async () => {
  await ensureBuilt();
  root = makeTempDir('memgit-error-prefix-');
  repo = path.join(root, 'store');
  const store = await MemoryStore.open(repo, QUIET);
  expect((await store.execute(toolUse('toolu_a', { command: 'create', path: '/memories/a.md', file_text: 'hi\n' }), { session: 'sess_a' })).is_error).toBeUndefined();
  await store.close();
}, 300_000);

afterAll(() => removeDir(root));

const run = (...args: string[]): Promise<CliRun> => memgitInProcess([...args, '--repo', repo], { USER: 'dana' });

/** One stderr line, `memgit: ` once at its start and nowhere else; each further line is the error's own detail. */
function expectOnePrefix(result: CliRun): void {
  const [first, ...rest] = result.stderr.split('\n');
  expect(first).toMatch(/^memgit: /);
  expect(first.slice('memgit: '.length)).not.toMatch(/memgit:/);
  for (const line of rest) expect(line).not.toMatch(/^memgit:/);
}

test.each([
  // A MemgitError no command handled: program.ts prints it.
  [['show', 'nope'], 1, 'memgit: no commit or tool_use id "nope" in this store\n'],
  [['revert', 'HEAD~1', '--operator', 'dana'], 1, 'memgit: the first commit initialises the store and cannot be reverted; use reset\n'],
  [['ls', '--at', 'HEAD~9'], 1, 'memgit: HEAD~9 goes back further than the first commit (the store has 2 commits)\n'],
  [['remote', 'add', 'bad name', 'https://x/y.git'], 1, 'memgit: "bad name" is not a remote name (letters, digits, ., _, -; at most 64)\n'],
  [['redact', '--text', '', '--operator', 'dana', '--reason', 'r'], 1, 'memgit: the text to redact is empty\n'],
  [['dream', 'show', 'nope'], 1, 'memgit: no dream "nope" in this store\n'],
  [['review', 'show', 'nope'], 1, 'memgit: no review "nope" in this store\n'],
  [['push', 'origin'], 1, 'memgit: no remote named "origin" (memgit remote add origin URL)\n'],
  [['verify-redaction', 'r9', '--text', 'x'], 1, "memgit: no redaction r9 in this store's audit log\n"],
  [['import', path.join(path.sep, 'nonexistent-memgit-import')], 1, `memgit: ${path.join(path.sep, 'nonexistent-memgit-import')} holds no memories/ folder (give the folder given to BetaLocalFilesystemMemoryTool, or its memories/ folder)\n`],
  // A command's own refusal of a library error's message (fail): options.ts, cat.
  [['cat', '/memories'], 1, /^memgit: \/memories is a directory at toolu_a \(commit [0-9a-f]{12}\) \(memgit ls lists it\)\n$/],
  [['cat', '/memories/zz.md'], 1, /^memgit: \/memories\/zz\.md does not exist at toolu_a \(commit [0-9a-f]{12}\)\n$/],
  // A command's own usage error.
  [['log', '--since', '2026-02-30'], 64, 'memgit: --since must be a date that exists: "2026-02-30" is not one, 2026-02 has no day 30 (it has 28 days)\n'],
] as Array<[string[], number, string | RegExp]>)('memgit %j: exit %i, one prefix', async (args, status, stderr) => {
  const result = await run(...args);
  expect(result.status).toBe(status);
  if (typeof stderr === 'string') expect(result.stderr).toBe(stderr);
  else expect(result.stderr).toMatch(stderr);
  expectOnePrefix(result);
});

test('a store that is not there: the path in the message, the prefix once', async () => {
  const missing = path.join(root, 'nostore');
  const result = await memgitInProcess(['show', 'HEAD', '--repo', missing]);
  expect(result.status).toBe(1);
  expect(result.stderr).toBe(`memgit: there is no memgit store at ${missing} (pass --repo DIR or set MEMGIT_REPO; \`memgit exec\` creates one)\n`);
  expectOnePrefix(result);
});

test('a refused approval (review.ts) prints its message once prefixed, as text and beside its JSON', async () => {
  expect((await run('policy', '--review', 'all', '--reason', 'audit')).status).toBe(0);
  const store = await MemoryStore.open(repo, QUIET);
  expect((await store.execute(toolUse('toolu_held', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 'sess_held' })).is_error).toBeUndefined();
  await store.close();
  const list = await run('review', 'list', '--json');
  const [review] = list.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; state: string });
  expect(review.state).toBe('pending');
  expect((await run('review', 'reject', review.id, '--reason', 'no')).status).toBe(0);

  const again = await run('review', 'approve', review.id);
  expect(again.status).toBe(2);
  expect(again.stderr).toBe(`memgit: review ${review.id} was already rejected; nothing was changed\n`);
  expectOnePrefix(again);
  const json = await run('review', 'approve', review.id, '--json');
  expect(json.status).toBe(2);
  // The JSON carries the message as the library gives it: no prefix there either.
  expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'review_refused', message: `review ${review.id} was already rejected; nothing was changed`, conflicts: [] } });
  expect(json.stderr).toBe(again.stderr);
});
