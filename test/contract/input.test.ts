import { runCommand } from '../../src/contract';
import { contractOptions, treeFrom } from './harness';

/** Every hostile input runs against a store holding one file and one directory. */
async function run(input: unknown) {
  const tree = await treeFrom([
    { command: 'create', path: '/memories/a.md', file_text: 'line 1\nline 2' },
    { command: 'create', path: '/memories/dir/b.md', file_text: 'b' },
  ]);
  const before = tree.items();
  const outcome = await runCommand(input, tree, contractOptions());
  expect(tree.items()).toEqual(before);
  return outcome;
}

function expectError(outcome: Awaited<ReturnType<typeof run>>, text: string): void {
  expect(outcome).toMatchObject({ isError: true, text });
  expect(outcome.edits).toBeUndefined();
}

describe('non-object inputs', () => {
  it.each([null, undefined, 'view', 42, true, [], [{ command: 'view', path: '/memories' }]])(
    'refuses %j',
    async (input) => {
      expectError(await run(input), 'Error: Invalid input: input must be an object');
    },
  );
});

describe('unknown commands', () => {
  it.each(['__proto__', 'valueOf', 'toString', 'constructor', 'hasOwnProperty', 'isPrototypeOf', 'View', ' view', ''])(
    'refuses the name %j',
    async (command) => {
      const outcome = await run({ command, path: '/memories' });
      expectError(outcome, `Error: unknown command ${command}`);
      expect(outcome.command).toBeUndefined();
    },
  );

  it.each([
    [undefined, 'Error: unknown command undefined'],
    [null, 'Error: unknown command null'],
    [7, 'Error: unknown command 7'],
    [['view'], 'Error: unknown command ["view"]'],
    [{ toString: 'view' }, 'Error: unknown command {"toString":"view"}'],
  ])('renders the non-string command %j safely', async (command, text) => {
    expectError(await run({ command, path: '/memories' }), text);
  });

  it('treats a JSON "__proto__" key as data, not as a prototype', async () => {
    const input = JSON.parse('{"__proto__": {"command": "view"}, "path": "/memories"}');
    expectError(await run(input), 'Error: unknown command undefined');
  });

  it('ignores fields inherited through the prototype', async () => {
    const input = Object.create({ command: 'view', path: '/memories' });
    expectError(await run(input), 'Error: unknown command undefined');
  });
});

describe('paths', () => {
  it.each([
    [{ command: 'view' }, 'Error: Invalid input: path must be a string'],
    [{ command: 'delete', path: 42 }, 'Error: Invalid input: path must be a string'],
    [{ command: 'create', path: null, file_text: 'x' }, 'Error: Invalid input: path must be a string'],
    [{ command: 'rename', new_path: '/memories/x' }, 'Error: Invalid input: old_path must be a string'],
    [{ command: 'rename', old_path: '/memories/a.md', new_path: ['/memories/x'] }, 'Error: Invalid input: new_path must be a string'],
  ])('refuses %j', async (input, text) => {
    expectError(await run(input), text);
  });

  it('checks the path before the text fields', async () => {
    expectError(
      await run({ command: 'create', path: '/etc/x', file_text: 5 }),
      'Error: Path must start with /memories, got: /etc/x',
    );
  });
});

describe('text fields', () => {
  it.each([
    [{ command: 'create', path: '/memories/n.md' }, 'file_text'],
    [{ command: 'create', path: '/memories/n.md', file_text: null }, 'file_text'],
    [{ command: 'create', path: '/memories/n.md', file_text: ['x'] }, 'file_text'],
    [{ command: 'str_replace', path: '/memories/a.md', new_str: 'x' }, 'old_str'],
    [{ command: 'str_replace', path: '/memories/a.md', old_str: 'line', new_str: null }, 'new_str'],
    [{ command: 'str_replace', path: '/memories/a.md', old_str: 'line', new_str: 1 }, 'new_str'],
    [{ command: 'insert', path: '/memories/a.md', insert_line: 0 }, 'insert_text'],
    [{ command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: { text: 'x' } }, 'insert_text'],
  ])('refuses %j as not a string', async (input, field) => {
    expectError(await run(input), `Error: Invalid input: ${field} must be a string`);
  });

  it.each([
    [{ command: 'create', path: '/memories/n.md', file_text: 'a\ud800b' }, 'file_text'],
    [{ command: 'create', path: '/memories/n.md', file_text: '\udc00' }, 'file_text'],
    [{ command: 'str_replace', path: '/memories/a.md', old_str: 'line\ud83d', new_str: 'x' }, 'old_str'],
    [{ command: 'str_replace', path: '/memories/a.md', old_str: 'line', new_str: '\ude42x' }, 'new_str'],
    [{ command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: '\ud83d' }, 'insert_text'],
  ])('refuses lone surrogates in %j', async (input, field) => {
    expectError(await run(input), `Error: Invalid input: ${field} must be well-formed Unicode text`);
  });

  it('accepts paired surrogates', async () => {
    const outcome = await run({ command: 'create', path: '/memories/n.md', file_text: '\ud83d\ude42' });
    expect(outcome.isError).toBe(false);
  });

  it('checks text fields before the command checks', async () => {
    expectError(
      await run({ command: 'str_replace', path: '/memories/missing.md', old_str: 3 }),
      'Error: Invalid input: old_str must be a string',
    );
  });
});

describe('insert_line', () => {
  const rangeError = (shown: string) =>
    `Error: Invalid \`insert_line\` parameter: ${shown}. It should be within the range of lines of the file: [0, 2]`;
  it.each([
    ['1', '1'],
    [1.5, '1.5'],
    [null, 'null'],
    [undefined, 'undefined'],
    [true, 'true'],
    [[1], '[1]'],
    [{ valueOf: 1 }, '{"valueOf":1}'],
    [3, '3'],
    [-1, '-1'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
  ])('refuses %j', async (insertLine, shown) => {
    const input = { command: 'insert', path: '/memories/a.md', insert_text: 'x', insert_line: insertLine };
    expectError(await run(input), rangeError(shown));
  });
});

describe('view_range', () => {
  const wholeFile = "Here's the content of /memories/a.md with line numbers:\n     1\tline 1\n     2\tline 2";
  it.each([[[1]], [[1, 2, 3]], [['1', '2']], [[1.5, 2]], [null], ['1,2'], [{ 0: 1, 1: 1, length: 2 }]])(
    'ignores %j',
    async (viewRange) => {
      const outcome = await run({ command: 'view', path: '/memories/a.md', view_range: viewRange });
      expect(outcome).toEqual({ text: wholeFile, isError: false, command: 'view', path: '/memories/a.md' });
    },
  );
});
