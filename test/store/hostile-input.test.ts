/**
 * Hostile input at the tool boundary (the path rules have their own suite, hostile-paths.test.ts):
 * malformed fields, wrong types, oversized and ill-formed strings, non-objects and prototype-named
 * commands. Each is an error result that writes nothing and commits nothing, through the library and
 * through `memgit exec`, whose process keeps going.
 */
import { spawnSync } from 'node:child_process';
import { DEFAULT_MAX_FILE_BYTES, MemoryStore } from '../../src/store/memory-store';
import { InvalidToolUseError } from '../../src/store/errors';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { gitReport, makeTempDir, removeDir, storeFingerprint } from './git-helpers';

const MAX_FILE_BYTES = 4096;
const A = '/memories/a.md';

/** Inputs that must each be refused with an error result by a store whose file limit is `max` bytes. */
const hostileInputs = (max: number): Array<[string, unknown]> => [
  ['no command', { path: A }],
  ['command null', { command: null, path: A }],
  ['command a number', { command: 7, path: A }],
  ['command an array', { command: ['create'], path: A, file_text: 'x' }],
  ...['valueOf', 'toString', 'constructor', 'hasOwnProperty', '__proto__', '__defineGetter__', 'isPrototypeOf', 'CREATE', 'create ', ''].map(
    (command): [string, unknown] => [`command ${JSON.stringify(command)}`, { command, path: A, file_text: 'x' }],
  ),
  ['create without path', { command: 'create', file_text: 'x' }],
  ['create without file_text', { command: 'create', path: '/memories/b.md' }],
  ['create file_text null', { command: 'create', path: '/memories/b.md', file_text: null }],
  ['create file_text a number', { command: 'create', path: '/memories/b.md', file_text: 12 }],
  ['create file_text an object', { command: 'create', path: '/memories/b.md', file_text: { toString: 'x' } }],
  ['create path a number', { command: 'create', path: 1, file_text: 'x' }],
  ['create path an array', { command: 'create', path: [A], file_text: 'x' }],
  ['create over maxFileBytes', { command: 'create', path: '/memories/b.md', file_text: 'x'.repeat(max + 1) }],
  ['create multibyte over maxFileBytes', { command: 'create', path: '/memories/b.md', file_text: 'é'.repeat(max / 2 + 1) }],
  ['create a lone high surrogate', { command: 'create', path: '/memories/b.md', file_text: 'ok \ud83d' }],
  ['create a lone low surrogate', { command: 'create', path: '/memories/b.md', file_text: '\udc00' }],
  ['str_replace without old_str', { command: 'str_replace', path: A, new_str: 'x' }],
  ['str_replace old_str null', { command: 'str_replace', path: A, old_str: null, new_str: 'x' }],
  ['str_replace new_str null', { command: 'str_replace', path: A, old_str: 'alpha', new_str: null }],
  ['str_replace new_str a number', { command: 'str_replace', path: A, old_str: 'alpha', new_str: 1 }],
  ['str_replace lone surrogate', { command: 'str_replace', path: A, old_str: 'alpha', new_str: '\ud800' }],
  ['str_replace growing over maxFileBytes', { command: 'str_replace', path: A, old_str: 'alpha', new_str: 'y'.repeat(max) }],
  ['insert_line "1"', { command: 'insert', path: A, insert_line: '1', insert_text: 'x\n' }],
  ['insert_line 1.5', { command: 'insert', path: A, insert_line: 1.5, insert_text: 'x\n' }],
  ['insert_line null', { command: 'insert', path: A, insert_line: null, insert_text: 'x\n' }],
  ['insert_line missing', { command: 'insert', path: A, insert_text: 'x\n' }],
  ['insert_line -1', { command: 'insert', path: A, insert_line: -1, insert_text: 'x\n' }],
  ['insert_line NaN-like', { command: 'insert', path: A, insert_line: Number.NaN, insert_text: 'x\n' }],
  ['insert_line Infinity', { command: 'insert', path: A, insert_line: Number.POSITIVE_INFINITY, insert_text: 'x\n' }],
  ['insert_line huge', { command: 'insert', path: A, insert_line: 2 ** 53, insert_text: 'x\n' }],
  ['insert_line true', { command: 'insert', path: A, insert_line: true, insert_text: 'x\n' }],
  ['insert without insert_text', { command: 'insert', path: A, insert_line: 0 }],
  ['insert_text an array', { command: 'insert', path: A, insert_line: 0, insert_text: ['x'] }],
  ['delete path null', { command: 'delete', path: null }],
  ['delete the root', { command: 'delete', path: '/memories' }],
  ['rename without new_path', { command: 'rename', old_path: A }],
  ['rename new_path an object', { command: 'rename', old_path: A, new_path: { path: '/memories/z.md' } }],
  ['view path missing', { command: 'view' }],
  ['input null', null],
  ['input a string', 'create /memories/x.md'],
  ['input a number', 42],
  ['input an array', [{ command: 'create', path: '/memories/b.md', file_text: 'x' }]],
  ['input true', true],
  ['input missing', undefined],
  ['extra fields do not rescue a bad call', { command: 'insert', path: A, insert_line: '0', insert_text: 'x', line: 0, extra: { deep: [1, 2] } }],
  ['a JSON __proto__ key does not supply fields', JSON.parse('{"command":"create","__proto__":{"path":"/memories/b.md","file_text":"x"}}')],
];
const HOSTILE_INPUTS = hostileInputs(MAX_FILE_BYTES);

let repo: string;
let store: MemoryStore;
beforeAll(() => ensureBuilt());
beforeEach(async () => {
  repo = makeTempDir();
  store = await MemoryStore.open(repo, { maxFileBytes: MAX_FILE_BYTES });
  await store.execute({ type: 'tool_use', id: 'toolu_setup', name: 'memory', input: { command: 'create', path: A, file_text: 'alpha\nbeta\n' } }, { session: 'sess_h' });
  await store.settled(); // its working-tree file follows the result; the fingerprints below include it
});
afterEach(async () => {
  await store.close();
  removeDir(repo);
});

test(`${HOSTILE_INPUTS.length} hostile inputs through the library: each an error result, nothing written, no commit`, async () => {
  const before = storeFingerprint(repo);
  for (const [name, input] of HOSTILE_INPUTS) {
    const result = await store.execute({ type: 'tool_use', id: 'toolu_hostile', name: 'memory', input }, { session: 'sess_h' });
    expect({ name, isError: result.is_error, startsWell: typeof result.content === 'string' && result.content.length > 0 }).toEqual({ name, isError: true, startsWell: true });
    expect({ name, fingerprint: storeFingerprint(repo) }).toEqual({ name, fingerprint: before });
  }
  const git = gitReport(repo);
  expect(git.commits).toHaveLength(2);
  expect(git.fsckCode).toBe(0);
  expect(git.status).toBe('');
});

test('extra fields on a valid call are ignored: it does exactly what it would without them', async () => {
  const result = await store.execute(
    { type: 'tool_use', id: 'toolu_extra', name: 'memory', input: { command: 'insert', path: A, insert_line: 0, insert_text: 'zero\n', constructor: 'x', valueOf: 1, extra: [1] } },
    { session: 'sess_h' },
  );
  expect(result.is_error).toBeUndefined();
  const view = await store.execute({ type: 'tool_use', id: 'toolu_view', name: 'memory', input: { command: 'view', path: A } }, { session: 'sess_h' });
  expect(view.content).toContain('zero\n');
});

test('blocks that are not memory tool_use blocks are refused by the library before anything runs', async () => {
  const before = storeFingerprint(repo);
  for (const value of [null, 'x', 5, [], {}, { type: 'tool_use', name: 'other' }, { type: 'text', name: 'memory' }]) {
    await expect(store.execute(value, { session: 'sess_h' })).rejects.toBeInstanceOf(InvalidToolUseError);
  }
  for (const [id, session] of [[undefined, 'sess_h'], [42, 'sess_h'], ['bad id!', 'sess_h'], ['x'.repeat(200), 'sess_h'], ['toolu_ok', 'bad session!'], ['toolu_ok', undefined]] as const) {
    const result = await store.execute({ type: 'tool_use', id, name: 'memory', input: { command: 'create', path: '/memories/b.md', file_text: 'x' } }, { session: session as string });
    expect(result.is_error).toBe(true);
  }
  expect(storeFingerprint(repo)).toBe(before);
});

test('memgit exec answers every hostile line with one error line, keeps going, and commits nothing', () => {
  const before = storeFingerprint(repo);
  // The CLI store has the default file limit.
  const blocks = hostileInputs(DEFAULT_MAX_FILE_BYTES).map(([, input], i) => JSON.stringify({ type: 'tool_use', id: `toolu_cli_${i}`, name: 'memory', input }));
  const lines = [
    ...blocks,
    'not json',
    '{"type":"tool_use","id":"toolu_x","name":"memory","input":{"command":"create","path":"/memories/b.md","file_text":"\\ud83d"}}',
    '[]',
    'null',
    '"a string"',
    '{"type":"tool_use","name":"other","id":"toolu_y","input":{}}',
    '{"type":"tool_use","id":"toolu_z","name":"memory","input":{"command":"__proto__"}}',
    // Over the input-line cap (16 MiB): refused without parsing.
    `{"type":"tool_use","id":"toolu_big","name":"memory","input":{"command":"create","path":"/memories/big.md","file_text":"${'x'.repeat(16 * 1024 * 1024 + 10)}"}}`,
    // Still alive: a last valid view answers normally.
    JSON.stringify({ type: 'tool_use', id: 'toolu_last', name: 'memory', input: { command: 'view', path: A } }),
  ];
  const run = spawnSync(process.execPath, [CLI_MAIN, 'exec', '--repo', repo, '--session', 'sess_cli'], {
    input: `${lines.join('\n')}\n`,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.status).toBe(0);
  const out = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; is_error?: boolean; content?: string; error?: string });
  expect(out).toHaveLength(lines.length);
  for (const [i, line] of out.slice(0, -1).entries()) {
    expect({ i, failed: line.type === 'error' || line.is_error === true }).toEqual({ i, failed: true });
  }
  expect(out[out.length - 2]).toEqual({ type: 'error', error: expect.stringContaining('longer than') });
  expect(out[out.length - 1]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_last', content: expect.stringContaining('alpha') });
  expect(storeFingerprint(repo)).toBe(before);
  expect(gitReport(repo).commits).toHaveLength(2);
}, 60_000);
