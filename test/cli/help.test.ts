/**
 * `--help` reads as one text: every line of prose is wrapped to the same width (80 when the output is
 * not a terminal), with no line broken early where the next word would have fit; examples (indented
 * lines) are kept as written.
 */
import { spawnSync } from 'node:child_process';
import { reflow } from '../../src/cli/help-format';
import { memgitInProcess } from '../support/cli-in-process';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

const WIDTH = 80;

/** `memgit <args> --help` as the CLI process prints it (a pipe: width 80), run in this process (test/support/cli-in-process.ts). */
async function help(args: string[]): Promise<string> {
  const result = await memgitInProcess([...args, '--help']);
  expect([args.join(' '), result.status]).toEqual([args.join(' '), 0]);
  return result.stdout;
}

/** The program's own help from the CLI process, as users see it. */
function helpFromProcess(): string {
  const result = spawnSync(process.execPath, [CLI_MAIN, '--help'], { encoding: 'utf8', cwd: REPO_ROOT });
  expect(result.status).toBe(0);
  return result.stdout;
}

/** Problems of a help text: prose lines over the width, and lines broken before a word that fitted. */
function raggedness(text: string): string[] {
  const lines = text.split('\n');
  const problems: string[] = [];
  lines.forEach((line, i) => {
    if (/^\s/.test(line) || line === '') return; // examples and commander's columns keep their own layout
    if ([...line].length > WIDTH) problems.push(`over ${WIDTH}: ${line}`);
    const next = lines[i + 1];
    if (next === undefined || next === '' || /^\s/.test(next) || line.endsWith(':')) return;
    const word = next.split(' ')[0];
    if ([...line].length + 1 + [...word].length <= WIDTH) problems.push(`broken early before "${word}": ${line}`);
  });
  return problems;
}

beforeAll(async () => {
  await ensureBuilt();
});

test('reflow joins a paragraph and re-wraps it; indented lines, blank lines and a line ending in ":" stay', () => {
  expect(reflow('one two\nthree four five\n\nExample:\n  memgit a very long example line that stays\nlast', 10)).toBe(
    'one two\nthree four\nfive\n\nExample:\n  memgit a very long example line that stays\nlast',
  );
});

test('every command\'s --help is wrapped to one width, never broken early', async () => {
  const program = helpFromProcess();
  expect(await help([])).toBe(program); // in this process, the same text

  const commands = [...program.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]).filter((c) => c !== 'help');
  expect(commands.length).toBeGreaterThan(25);
  const problems: Record<string, string[]> = {};
  const check = (args: string[], text: string) => {
    const found = raggedness(text);
    if (found.length) problems[args.join(' ') || 'memgit'] = found;
  };
  check([], program);
  for (const command of commands) {
    const text = await help([command]);
    check([command], text);
    for (const sub of [...text.matchAll(/^Commands:\n((?: {2}.*\n)+)/gm)].flatMap((m) => [...m[1].matchAll(/^ {2}([a-z-]+) /gm)].map((s) => s[1]))) {
      if (sub !== 'help') check([command, sub], await help([command, sub]));
    }
  }
  expect(problems).toEqual({});
});
