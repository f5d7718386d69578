import { applyEdits, MemoryTree, runCommand } from '../../src/contract';
import type { DirEntry, MemoryReader } from '../../src/contract';
import { contractOptions, runAndApply, treeFrom } from './harness';

const LISTING_HEADER = (dir: string) =>
  `Here're the files and directories up to 2 levels deep in ${dir}, excluding hidden items and node_modules:`;

describe('insert results', () => {
  it.each([
    ['Line 1\nLine 2', 1, 'Inserted Line', 'Line 1\nInserted Line\nLine 2'],
    ['Line 1\nLine 2', 0, 'First Line', 'First Line\nLine 1\nLine 2'],
    ['Line 1\nLine 2', 2, 'Last Line', 'Line 1\nLine 2\nLast Line'],
    ['a\nb', 1, 'X\n\n', 'a\nX\n\nb'],
    ['a\nb', 1, 'X\nY\n', 'a\nX\nY\nb'],
    ['a\nb\n', 2, 'c', 'a\nb\nc\n'],
    ['a\nb\n', 3, 'c', 'a\nb\n\nc'],
    ['', 0, 'only', 'only\n'],
  ])('inserting into %j at %d gives the expected file', async (content, insertLine, insertText, expected) => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/i.txt', file_text: content }]);
    const outcome = await runAndApply(tree, {
      command: 'insert',
      path: '/memories/i.txt',
      insert_line: insertLine,
      insert_text: insertText,
    });
    expect(outcome.edits).toEqual([{ op: 'write', path: 'i.txt', content: expected }]);
    expect(await tree.readText('i.txt')).toBe(expected);
  });
});

describe('str_replace', () => {
  it('treats an empty old_str in a one-line file as ambiguous', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/p.txt', file_text: 'abc' }]);
    const outcome = await runCommand({ command: 'str_replace', path: '/memories/p.txt', old_str: '' }, tree, contractOptions());
    expect(outcome).toEqual({
      text: 'No replacement was performed. Multiple occurrences of old_str `` in lines: 1. Please ensure it is unique',
      isError: true,
      command: 'str_replace',
    });
  });

  it('counts non-overlapping occurrences', async () => {
    const tree = await treeFrom([
      { command: 'create', path: '/memories/three.txt', file_text: 'aaa' },
      { command: 'create', path: '/memories/four.txt', file_text: 'aaaa' },
    ]);
    const four = await runAndApply(tree, { command: 'str_replace', path: '/memories/four.txt', old_str: 'aa', new_str: 'b' });
    expect(four.text).toBe('No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1. Please ensure it is unique');
    const three = await runAndApply(tree, { command: 'str_replace', path: '/memories/three.txt', old_str: 'aa', new_str: 'b' });
    expect(three.isError).toBe(false);
    expect(await tree.readText('three.txt')).toBe('ba');
  });

  it('still edits when old_str equals new_str (the call is recorded)', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/p.txt', file_text: 'same' }]);
    const outcome = await runAndApply(tree, { command: 'str_replace', path: '/memories/p.txt', old_str: 'same', new_str: 'same' });
    expect(outcome.edits).toEqual([{ op: 'write', path: 'p.txt', content: 'same' }]);
  });
});

describe('maxFileBytes', () => {
  const options = contractOptions({ maxFileBytes: 10 });

  it('allows exactly the limit and refuses one byte more', async () => {
    const tree = await treeFrom([], options);
    expect((await runAndApply(tree, { command: 'create', path: '/memories/f.md', file_text: '0123456789' }, options)).isError).toBe(false);
    const outcome = await runAndApply(tree, { command: 'create', path: '/memories/g.md', file_text: '\u00e90123456789' }, options);
    expect(outcome).toMatchObject({
      isError: true,
      text: 'Error: File /memories/g.md would be 12 bytes; the limit for one memory file is 10 bytes',
    });
    expect(outcome.edits).toBeUndefined();
  });

  it('applies to str_replace and insert results', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/f.md', file_text: 'abc' }], options);
    const replaced = await runAndApply(tree, { command: 'str_replace', path: '/memories/f.md', old_str: 'b', new_str: 'bbbbbbbbb' }, options);
    expect(replaced.text).toBe('Error: File /memories/f.md would be 11 bytes; the limit for one memory file is 10 bytes');
    const inserted = await runAndApply(tree, { command: 'insert', path: '/memories/f.md', insert_line: 1, insert_text: '1234567' }, options);
    expect(inserted.text).toBe('Error: File /memories/f.md would be 11 bytes; the limit for one memory file is 10 bytes');
    expect(await tree.readText('f.md')).toBe('abc');
  });
});

describe('create', () => {
  it('names the root canonically whatever spelling was used', async () => {
    const outcome = await runCommand({ command: 'create', path: '/memories/', file_text: 'x' }, new MemoryTree(), contractOptions());
    expect(outcome).toMatchObject({ isError: true, text: 'Error: File /memories already exists' });
  });

  it('refuses a directory in strict mode too', async () => {
    const options = contractOptions({ createMode: 'error' });
    const tree = await treeFrom([{ command: 'create', path: '/memories/d/f.md', file_text: 'x' }], options);
    const outcome = await runCommand({ command: 'create', path: '/memories/d/', file_text: 'x' }, tree, options);
    expect(outcome.text).toBe('Error: File /memories/d/ already exists');
  });

  it('names a deeper file ancestor in its normalised form', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/cafe\u0301', file_text: 'x' }]);
    const outcome = await runCommand({ command: 'create', path: '/memories/cafe\u0301/a/b.md', file_text: 'y' }, tree, contractOptions());
    expect(outcome.text).toBe('Error: Cannot create /memories/cafe\u0301/a/b.md: /memories/caf\u00e9 is not a directory');
  });
});

describe('outcome metadata', () => {
  it('reports the command and normalised paths on success', async () => {
    const tree = await treeFrom([{ command: 'create', path: '/memories/cafe\u0301.md', file_text: 'x' }]);
    const outcome = await runAndApply(tree, { command: 'rename', old_path: '/memories/cafe\u0301.md', new_path: '/memories/dir/' });
    expect(outcome).toEqual({
      text: 'Successfully renamed /memories/cafe\u0301.md to /memories/dir/',
      isError: false,
      command: 'rename',
      path: '/memories/caf\u00e9.md',
      newPath: '/memories/dir',
      edits: [{ op: 'move', from: 'caf\u00e9.md', to: 'dir' }],
    });
  });

  it('reports the command but no paths or edits on failure', async () => {
    const outcome = await runCommand({ command: 'delete', path: '/memories/none' }, new MemoryTree(), contractOptions());
    expect(outcome).toEqual({ text: 'Error: The path /memories/none does not exist', isError: true, command: 'delete' });
  });
});

describe('view listing', () => {
  /** A reader that, like the git store, shows `.keep` placeholders in every directory listing. */
  function withKeepFiles(tree: MemoryTree): MemoryReader {
    return {
      kind: (p) => tree.kind(p),
      readText: (p) => tree.readText(p),
      list: async (p): Promise<DirEntry[]> => [...(await tree.list(p)), { name: '.keep', kind: 'file', size: 0 }],
    };
  }

  it('hides .keep placeholders, keeping a directory that only holds one', async () => {
    const tree = await treeFrom([
      { command: 'create', path: '/memories/empty/x.md', file_text: 'x' },
      { command: 'delete', path: '/memories/empty/x.md' },
      { command: 'create', path: '/memories/full/y.md', file_text: 'yy' },
    ]);
    const outcome = await runCommand({ command: 'view', path: '/memories' }, withKeepFiles(tree), contractOptions());
    expect(outcome.text).toBe(
      [LISTING_HEADER('/memories'), '4K\t/memories', '4K\t/memories/empty/', '4K\t/memories/full/', '2B\t/memories/full/y.md'].join('\n'),
    );
  });

  it('skips a file named node_modules and keeps the caller spelling of the directory', async () => {
    const tree = await treeFrom([
      { command: 'create', path: '/memories/caf\u00e9/node_modules', file_text: 'x' },
      { command: 'create', path: '/memories/caf\u00e9/Z.md', file_text: '' },
    ]);
    const outcome = await runCommand({ command: 'view', path: '/memories/cafe\u0301/' }, tree, contractOptions());
    expect(outcome.text).toBe([LISTING_HEADER('/memories/cafe\u0301'), '4K\t/memories/cafe\u0301', '0B\t/memories/cafe\u0301/Z.md'].join('\n'));
  });
});

describe('applyEdits on MemoryTree', () => {
  it('keeps emptied directories and creates parents of moves', () => {
    const tree = new MemoryTree();
    applyEdits(tree, [
      { op: 'write', path: 'a/b/c.md', content: 'c' },
      { op: 'delete', path: 'a/b/c.md' },
      { op: 'write', path: 'f.md', content: 'f' },
      { op: 'move', from: 'f.md', to: 'x/y/f.md' },
    ]);
    expect(tree.items()).toEqual([
      { path: 'a', kind: 'dir' },
      { path: 'a/b', kind: 'dir' },
      { path: 'x', kind: 'dir' },
      { path: 'x/y', kind: 'dir' },
      { path: 'x/y/f.md', kind: 'file', content: 'f' },
    ]);
  });

  it.each([
    [[{ op: 'delete', path: 'missing' }]],
    [[{ op: 'delete', path: '' }]],
    [[{ op: 'write', path: 'd', content: 'x' }]],
    [[{ op: 'write', path: 'd/f.md/g', content: 'x' }]],
    [[{ op: 'move', from: 'd', to: 'd/e' }]],
    [[{ op: 'move', from: 'd', to: 'd/f.md' }]],
    [[{ op: 'move', from: 'missing', to: 'z' }]],
  ] as const)('throws on an impossible edit %j', (edits) => {
    const tree = new MemoryTree();
    applyEdits(tree, [{ op: 'write', path: 'd/f.md', content: 'f' }]);
    expect(() => applyEdits(tree, edits)).toThrow();
  });
});
