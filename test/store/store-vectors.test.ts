/**
 * Every conformance vector (spec §6) through a real store: fresh repository per vector (a copy of one
 * fresh store, test/support/empty-store.ts), setup through `store.execute`, the input compared byte for byte, and the repository checked with the git CLI.
 */
import { MemoryStore, StoreOptions } from '../../src/store/memory-store';
import {
  ExpectedCommit,
  expectRepository,
  gitReport,
  loadVectors,
  MUTATING_COMMANDS,
  normalisedPath,
  removeDir,
} from './git-helpers';
import { EmptyStores } from '../support/empty-store';

const SESSION = 'sess_vectors-1';
const vectors = loadVectors();
const emptyStores = new EmptyStores();
afterAll(() => emptyStores.removeAll());

/** The commit a successful mutating call must make (spec §5). */
function commitFor(id: string, input: Record<string, unknown>): ExpectedCommit {
  const command = String(input.command);
  if (command === 'rename') {
    return {
      id,
      command,
      path: normalisedPath(String(input.old_path)),
      newPath: normalisedPath(String(input.new_path)),
      session: SESSION,
    };
  }
  return { id, command, path: normalisedPath(String(input.path)), session: SESSION };
}

interface Case {
  setup: Array<Record<string, unknown>>;
  input: Record<string, unknown>;
  expect: { is_error: boolean; text: string };
  options?: StoreOptions;
}

/** Runs one case in a fresh store and checks the result and the repository. */
async function runCase(testCase: Case): Promise<void> {
  const dir = await emptyStores.make();
  try {
    const store = await MemoryStore.open(dir, { ...testCase.options, log: () => undefined });
    const commits: ExpectedCommit[] = [];
    try {
      for (const [index, command] of testCase.setup.entries()) {
        const id = `toolu_setup_${index}`;
        const result = await store.execute({ type: 'tool_use', id, name: 'memory', input: command }, { session: SESSION });
        expect({ command, result }).toEqual({ command, result: { type: 'tool_result', tool_use_id: id, content: expect.any(String) } });
        if (MUTATING_COMMANDS.has(String(command.command))) commits.push(commitFor(id, command));
      }

      const id = 'toolu_01VectorInput';
      const result = await store.execute({ type: 'tool_use', id, name: 'memory', input: testCase.input }, { session: SESSION });
      expect(result.type).toBe('tool_result');
      expect(result.tool_use_id).toBe(id);
      expect(result.content).toBe(testCase.expect.text);
      expect(result.is_error === true).toBe(testCase.expect.is_error);
      // `is_error` is present exactly on failures (never `is_error: false`).
      expect(Object.keys(result).sort()).toEqual(
        testCase.expect.is_error ? ['content', 'is_error', 'tool_use_id', 'type'] : ['content', 'tool_use_id', 'type'],
      );
      if (!testCase.expect.is_error && MUTATING_COMMANDS.has(String(testCase.input.command))) {
        commits.push(commitFor(id, testCase.input));
      }
    } finally {
      await store.close();
    }
    expectRepository(gitReport(dir), commits);
  } finally {
    removeDir(dir);
  }
}

describe('conformance vectors through MemoryStore.execute', () => {
  it('has all 104 vectors', () => {
    expect(vectors).toHaveLength(104);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', async (_name, vector) => {
    await runCase(vector);
  });
});

describe('large files through the store (spec §6)', () => {
  const options: StoreOptions = { maxFileBytes: 4 * 1024 * 1024 };
  const lines = (count: number): string => Array.from({ length: count }, () => 'x').join('\n');

  it('refuses to view a file of 1,000,000 lines', async () => {
    await runCase({
      options,
      setup: [{ command: 'create', path: '/memories/huge.txt', file_text: lines(1_000_000) }],
      input: { command: 'view', path: '/memories/huge.txt' },
      expect: { is_error: true, text: 'File /memories/huge.txt exceeds maximum line limit of 999,999 lines.' },
    });
  });

  it('views the last of 999,999 lines with view_range [999999, -1]', async () => {
    await runCase({
      options,
      setup: [{ command: 'create', path: '/memories/huge.txt', file_text: lines(999_999) }],
      input: { command: 'view', path: '/memories/huge.txt', view_range: [999_999, -1] },
      expect: { is_error: false, text: "Here's the content of /memories/huge.txt with line numbers:\n999999\tx" },
    });
  });
});
