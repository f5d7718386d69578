/**
 * Every entry of hostile-paths.json, in every place a command takes a path, through a real store
 * (spec §2): a rejected path is an error result that writes nothing and commits nothing; an accepted one
 * works on its normalised path. Also the id checks of spec §5.
 */
import { MemoryStore, ToolResult } from '../../src/store/memory-store';
import {
  ExpectedCommit,
  expectRepository,
  gitReport,
  headFiles,
  HostilePath,
  loadHostilePaths,
  makeTempDir,
  removeDir,
  storeFingerprint,
  workingTreeFiles,
} from './git-helpers';
import { EmptyStores } from '../support/empty-store';

const SESSION = 'sess_hostile';
const entries = loadHostilePaths();
const rejected = entries.filter((e) => e.expected === 'reject');
const accepted = entries
  .filter((e) => e.expected.startsWith('accept-normalized:'))
  .map((e) => ({ path: e.path, normalised: e.expected.slice('accept-normalized:'.length) }));

const NAME_REASONS = [
  'contains control or invisible characters',
  'is longer than 1024 bytes',
  'has more than 20 segments',
  'has an empty segment',
  'names starting with "." are reserved',
  'contains characters not allowed in file names',
  'has a name that starts with a space or ends with "." or a space',
  'uses a reserved device or short name',
  'has a name longer than 255 bytes',
];

/** The three texts a path rule may answer with (spec §2), for the path as given. */
function ruleTexts(p: string): string[] {
  return [
    `Error: Path must start with /memories, got: ${p}`,
    `Error: Path ${p} would escape /memories directory`,
    ...NAME_REASONS.map((reason) => `Error: Invalid path ${JSON.stringify(p)}: ${reason}`),
  ];
}

/** Every command input that names `p` in one of its path fields; the other fields are valid. */
function inputsNaming(p: string): Array<[string, Record<string, unknown>]> {
  return [
    ['view path', { command: 'view', path: p }],
    ['create path', { command: 'create', path: p, file_text: 'pwned' }],
    ['str_replace path', { command: 'str_replace', path: p, old_str: 'one', new_str: 'pwned' }],
    ['insert path', { command: 'insert', path: p, insert_line: 0, insert_text: 'pwned' }],
    ['delete path', { command: 'delete', path: p }],
    ['rename old_path', { command: 'rename', old_path: p, new_path: '/memories/moved.md' }],
    ['rename new_path', { command: 'rename', old_path: '/memories/notes.md', new_path: p }],
  ];
}

function toolUse(id: unknown, input: unknown) {
  return { type: 'tool_use', id, name: 'memory', input };
}

let counter = 0;
const nextId = (): string => `toolu_hostile_${++counter}`;

describe('rejected hostile paths', () => {
  let dir: string;
  let store: MemoryStore;
  const setupCommits: ExpectedCommit[] = [];

  beforeAll(async () => {
    dir = makeTempDir('memgit-hostile-');
    store = await MemoryStore.open(dir, { log: () => undefined });
    for (const [path, text] of [['/memories/notes.md', 'one\ntwo'], ['/memories/dir/x.md', 'x']]) {
      const id = nextId();
      const result = await store.execute(toolUse(id, { command: 'create', path, file_text: text }), { session: SESSION });
      expect(result.is_error).toBeUndefined();
      setupCommits.push({ id, command: 'create', path, session: SESSION });
    }
    await store.settled(); // the working tree follows an acknowledged call; the fingerprints below include it
  });

  afterAll(async () => {
    await store.close();
    removeDir(dir);
  });

  it('has the rejects of hostile-paths.json', () => {
    expect(rejected.length).toBeGreaterThan(50);
  });

  it.each(rejected.map((entry) => [JSON.stringify(entry.path), entry] as const))(
    '%s is refused by every command and writes nothing',
    async (_label, entry: HostilePath) => {
      const allowed = ruleTexts(entry.path);
      for (const [slot, input] of inputsNaming(entry.path)) {
        const before = storeFingerprint(dir);
        const id = nextId();
        const result = await store.execute(toolUse(id, input), { session: SESSION });
        expect({ slot, result }).toEqual({
          slot,
          result: { type: 'tool_result', tool_use_id: id, content: expect.any(String), is_error: true },
        });
        expect({ slot, allowed: allowed.includes(result.content), content: result.content }).toEqual({
          slot,
          allowed: true,
          content: result.content,
        });
        expect(storeFingerprint(dir)).toBe(before);
      }
      expectRepository(gitReport(dir), setupCommits);
    },
  );
});

describe('accepted hostile paths work on the normalised path', () => {
  // Each path in a fresh store of its own: a copy of one (test/support/empty-store.ts).
  const emptyStores = new EmptyStores();
  afterAll(() => emptyStores.removeAll());
  it.each(accepted.map((entry) => [JSON.stringify(entry.path), entry] as const))('%s', async (_label, { path: p, normalised }) => {
    const dir = await emptyStores.make();
    const store = await MemoryStore.open(dir, { log: () => undefined });
    const commits: ExpectedCommit[] = [];
    const run = async (input: Record<string, unknown>): Promise<{ id: string; result: ToolResult }> => {
      const id = nextId();
      const result = await store.execute(toolUse(id, input), { session: SESSION });
      await store.settled(); // these tests read the working tree, which follows an acknowledged call
      return { id, result };
    };
    const ok = async (input: Record<string, unknown>, text: string, commit?: Omit<ExpectedCommit, 'id' | 'session'>) => {
      const { id, result } = await run(input);
      expect(result).toEqual({ type: 'tool_result', tool_use_id: id, content: text });
      if (commit) commits.push({ ...commit, id, session: SESSION });
    };
    const fails = async (input: Record<string, unknown>, text: string) => {
      const { id, result } = await run(input);
      expect(result).toEqual({ type: 'tool_result', tool_use_id: id, content: text, is_error: true });
    };
    try {
      await ok({ command: 'create', path: '/memories/seed.md', file_text: 'seed' }, 'File created successfully at: /memories/seed.md', {
        command: 'create',
        path: '/memories/seed.md',
      });
      if (normalised === '/memories') {
        await ok(
          { command: 'view', path: p },
          "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories\n4B\t/memories/seed.md",
        );
        await fails({ command: 'create', path: p, file_text: 'x' }, 'Error: File /memories already exists');
        await fails({ command: 'str_replace', path: p, old_str: 'a', new_str: 'b' }, `Error: The path ${p} does not exist. Please provide a valid path.`);
        await fails({ command: 'insert', path: p, insert_line: 0, insert_text: 'x' }, `Error: The path ${p} does not exist`);
        await fails({ command: 'delete', path: p }, 'Error: Cannot delete the /memories directory itself');
        await fails({ command: 'rename', old_path: p, new_path: '/memories/x' }, 'Error: Cannot rename the /memories directory itself');
        await fails({ command: 'rename', old_path: '/memories/seed.md', new_path: p }, `Error: The destination ${p} already exists`);
      } else {
        const moved = '/memories/moved/elsewhere.md';
        await ok({ command: 'create', path: p, file_text: 'alpha\nbeta' }, `File created successfully at: ${p}`, { command: 'create', path: normalised });
        await ok({ command: 'view', path: p }, `Here's the content of ${p} with line numbers:\n     1\talpha\n     2\tbeta`);
        // The normalised spelling names the same file.
        await ok({ command: 'view', path: normalised }, `Here's the content of ${normalised} with line numbers:\n     1\talpha\n     2\tbeta`);
        await ok(
          { command: 'str_replace', path: p, old_str: 'alpha', new_str: 'gamma' },
          'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tgamma\n     2\tbeta',
          { command: 'str_replace', path: normalised },
        );
        await ok({ command: 'insert', path: p, insert_line: 2, insert_text: 'delta' }, `The file ${p} has been edited.`, {
          command: 'insert',
          path: normalised,
        });
        await ok({ command: 'rename', old_path: p, new_path: moved }, `Successfully renamed ${p} to ${moved}`, {
          command: 'rename',
          path: normalised,
          newPath: moved,
        });
        await ok({ command: 'rename', old_path: moved, new_path: p }, `Successfully renamed ${moved} to ${p}`, {
          command: 'rename',
          path: moved,
          newPath: normalised,
        });
        const repoPath = normalised.slice(1);
        expect(headFiles(dir).get(repoPath)?.toString('utf8')).toBe('gamma\nbeta\ndelta');
        expect(workingTreeFiles(dir).get(repoPath)?.toString('utf8')).toBe('gamma\nbeta\ndelta');
        await ok({ command: 'delete', path: p }, `Successfully deleted ${p}`, { command: 'delete', path: normalised });
        await fails({ command: 'view', path: normalised }, `The path ${normalised} does not exist. Please provide a valid path.`);
        expect(headFiles(dir).has(repoPath)).toBe(false);
      }
    } finally {
      await store.close();
    }
    expectRepository(gitReport(dir), commits);
    removeDir(dir);
  });
});

describe('tool_use and session ids (spec §5)', () => {
  let dir: string;
  let store: MemoryStore;
  const commits: ExpectedCommit[] = [];
  const create = { command: 'create', path: '/memories/id-test.md', file_text: 'x' };

  const invalidIds: unknown[] = [
    'has space',
    'new\nline',
    'tab\there',
    'a'.repeat(129),
    '',
    'semi;colon',
    'ünïcode',
    'toolu_01\r',
    '../HEAD',
    42,
    null,
    undefined,
    true,
    { id: 'toolu_01' },
    ['toolu_01'],
  ];

  beforeAll(async () => {
    dir = makeTempDir('memgit-ids-');
    store = await MemoryStore.open(dir, { log: () => undefined });
  });

  afterAll(async () => {
    await store.close();
    removeDir(dir);
  });

  it.each(invalidIds.map((id) => [JSON.stringify(id) ?? 'undefined', id] as const))(
    'an invalid tool_use id %s changes nothing',
    async (_label, id) => {
      const before = storeFingerprint(dir);
      const result = await store.execute(toolUse(id, create), { session: SESSION });
      expect(result.content).toBe(`Error: Invalid tool_use id ${JSON.stringify(id)}`);
      expect(result.is_error).toBe(true);
      expect(result.type).toBe('tool_result');
      expect(result.tool_use_id).toBe(typeof id === 'string' ? id : '');
      expect(storeFingerprint(dir)).toBe(before);
    },
  );

  it.each(invalidIds.map((id) => [JSON.stringify(id) ?? 'undefined', id] as const))(
    'an invalid session id %s changes nothing',
    async (_label, session) => {
      const before = storeFingerprint(dir);
      const id = nextId();
      const result = await store.execute(toolUse(id, create), { session } as { session: string });
      expect(result).toEqual({
        type: 'tool_result',
        tool_use_id: id,
        content: `Error: Invalid session id ${JSON.stringify(session)}`,
        is_error: true,
      });
      expect(storeFingerprint(dir)).toBe(before);
    },
  );

  it('checks the tool_use id before the session id and before the input', async () => {
    const before = storeFingerprint(dir);
    const both = await store.execute(toolUse('bad id', create), { session: 'bad session' });
    expect(both.content).toBe('Error: Invalid tool_use id "bad id"');
    const withBadInput = await store.execute(toolUse('bad id', { command: 'valueOf' }), { session: SESSION });
    expect(withBadInput.content).toBe('Error: Invalid tool_use id "bad id"');
    const sessionFirst = await store.execute(toolUse(nextId(), { command: 'create', path: '/etc/passwd' }), { session: '' });
    expect(sessionFirst.content).toBe('Error: Invalid session id ""');
    const missingContext = await store.execute(toolUse(nextId(), create), undefined as unknown as { session: string });
    expect(missingContext.content).toBe('Error: Invalid session id undefined');
    expect(storeFingerprint(dir)).toBe(before);
  });

  it('accepts the whole id alphabet up to 128 characters and commits with those ids', async () => {
    const id = `A-Za-z0-9_.:${'x'.repeat(116)}`;
    const session = `s.e:s-s_${'9'.repeat(120)}`;
    expect(id).toHaveLength(128);
    expect(session).toHaveLength(128);
    const result = await store.execute(toolUse(id, create), { session });
    expect(result).toEqual({ type: 'tool_result', tool_use_id: id, content: 'File created successfully at: /memories/id-test.md' });
    commits.push({ id, command: 'create', path: '/memories/id-test.md', session });
    await store.settled();
    expectRepository(gitReport(dir), commits);
  });
});
