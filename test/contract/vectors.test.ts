import * as fs from 'fs';
import * as path from 'path';
import { runCommand } from '../../src/contract';
import type { ContractOptions } from '../../src/contract';
import { contractOptions, runAndApply, CONFORMANCE_DIR, treeFrom } from './harness';

interface Vector {
  name: string;
  setup: unknown[];
  input: Record<string, unknown>;
  expect: { is_error: boolean; text: string };
  options?: Partial<ContractOptions>;
}

const vectors: Vector[] = JSON.parse(
  fs.readFileSync(path.join(CONFORMANCE_DIR, 'vectors.json'), 'utf8'),
);
const MUTATING = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

describe('conformance vectors', () => {
  it('loads all 104 vectors', () => {
    expect(vectors).toHaveLength(104);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', async (_name, vector) => {
    const options = contractOptions(vector.options);
    const tree = await treeFrom(vector.setup, options);
    const before = tree.items();

    const outcome = await runAndApply(tree, vector.input, options);

    expect(outcome.text).toBe(vector.expect.text);
    expect(outcome.isError).toBe(vector.expect.is_error);
    if (outcome.isError || !MUTATING.has(String(vector.input.command))) {
      expect(outcome.edits).toBeUndefined();
      expect(tree.items()).toEqual(before);
    } else {
      expect(outcome.edits?.length).toBe(1);
    }
  });
});

describe('large files (spec §6)', () => {
  const options = contractOptions({ maxFileBytes: 4 * 1024 * 1024 });
  const lines = (count: number): string => Array.from({ length: count }, () => 'x').join('\n');

  it('refuses to view a file of 1,000,000 lines', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/huge.txt', file_text: lines(1_000_000) }], options);
    const outcome = await runCommand({ command: 'view', path: '/memories/huge.txt' }, tree, options);
    expect(outcome).toMatchObject({
      isError: true,
      text: 'File /memories/huge.txt exceeds maximum line limit of 999,999 lines.',
    });
  });

  it('views the last of 999,999 lines with view_range [999999, -1]', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/big.txt', file_text: lines(999_999) }], options);
    const outcome = await runCommand(
      { command: 'view', path: '/memories/big.txt', view_range: [999_999, -1] },
      tree,
      options,
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.text).toBe("Here's the content of /memories/big.txt with line numbers:\n999999\tx");
  });
});
