/**
 * The shell examples of the README and the guides, as test/docs/examples.test.ts runs them.
 *
 * Every fenced block tagged `sh` is an example. Markers are HTML comments (invisible on GitHub) on the
 * lines right before a block (blank lines and other markers may sit between):
 *
 *   <!-- example: skip REASON -->    not run here (a real API key, a public git host, a global install…);
 *                                    the test lists it by name with its reason, and the list is reviewed
 *                                    in the test file: a new skip fails until it is added there.
 *   <!-- example: continues -->      runs in the same sandbox (files, exported variables, current folder
 *                                    and background processes) as the example before it in the file;
 *                                    without it, every example starts in a fresh sandbox.
 *   <!-- example: background PORT --> the block is one long-running command (a server) listening on PORT:
 *                                    the test starts it, waits until PORT answers HTTP, probes it, leaves it
 *                                    running for the examples that continue this one, then stops it with
 *                                    SIGTERM and expects a clean exit. PORT in this block and in the blocks
 *                                    continuing it is replaced by a free port (so tests never collide).
 *
 * And between examples: `<!-- examples: cwd DIR -->` — the examples after it start in DIR (relative to
 * the sandbox; `.` is the sandbox itself, where they start by default).
 *
 * A block whose lines start with `$ ` is a transcript: each `$ ` line (with `\` continuation lines) is one
 * command, and the lines after it, up to the next `$ `, are its output, compared with what the command
 * printed (stdout and stderr together, as a terminal shows them). In shown output `...` stands for any
 * text (as in Python's doctest), and trailing spaces and blank lines are ignored. An output that is not
 * shown is not checked. A command is expected to exit 0 unless its comment says `(exit N)`.
 * A block without `$ ` lines is one script, run with `set -e`: it must exit 0.
 */

export interface Command {
  /** The command as typed (continuation lines joined with their backslash-newlines kept). */
  text: string;
  /** The output the document shows (null: none shown, not checked). */
  expected: string | null;
  exitCode: number;
}

export interface Example {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The nearest heading above the block. */
  heading: string;
  /** `file › heading › first command`: stable across edits elsewhere in the file. */
  name: string;
  body: string;
  skip: string | null;
  continues: boolean;
  /** The port of a `background` block. */
  background: number | null;
  /** Transcript commands; empty for a plain script. */
  commands: Command[];
  /** The file's starting folder (`<!-- examples: cwd DIR -->`), relative to the sandbox. */
  cwd: string;
}

/** Blocks tagged with another shell name would escape the test: every shell example is `sh`. */
export const OTHER_SHELL_TAGS = ['bash', 'shell', 'console', 'zsh', 'shell-session', 'shellsession'];

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;
const MARKER = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/;
const FILE_MARKER = /^\s*<!--\s*examples:\s*cwd\s+(\S+)\s*-->\s*$/;

export interface ExtractResult {
  examples: Example[];
  /** Fenced blocks tagged with another shell name (bash, console, …), by line: an error in the document. */
  untagged: number[];
  /** Markers that are not followed by an sh block or are malformed, by line: an error in the document. */
  strayMarkers: Array<{ line: number; text: string }>;
}

export function extractExamples(file: string, markdown: string): ExtractResult {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  const untagged: number[] = [];
  const strayMarkers: Array<{ line: number; text: string }> = [];
  let heading = '(top)';
  let cwd = '.';
  let pending: Array<{ line: number; text: string }> = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const fileMarker = FILE_MARKER.exec(line);
    if (fileMarker) {
      cwd = fileMarker[1];
      continue;
    }
    const marker = MARKER.exec(line);
    if (marker) {
      pending.push({ line: i + 1, text: marker[1] });
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent, ticks, tag] = fence;
      const start = i;
      const body: string[] = [];
      for (i += 1; i < lines.length; i += 1) {
        const closing = new RegExp(`^\\s*${ticks[0] === '`' ? '`' : '~'}{${ticks.length},}\\s*$`);
        if (closing.test(lines[i])) break;
        body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart());
      }
      if (tag === 'sh') {
        examples.push(toExample(file, start + 1, heading, cwd, body.join('\n'), pending, strayMarkers));
      } else {
        if (OTHER_SHELL_TAGS.includes(tag.toLowerCase())) untagged.push(start + 1);
        strayMarkers.push(...pending);
      }
      pending = [];
      continue;
    }
    const title = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (title) heading = title[1].replace(/`/g, '');
    if (line.trim() !== '') {
      strayMarkers.push(...pending);
      pending = [];
    }
  }
  strayMarkers.push(...pending);
  return { examples, untagged, strayMarkers };
}

function toExample(
  file: string,
  line: number,
  heading: string,
  cwd: string,
  body: string,
  markers: Array<{ line: number; text: string }>,
  stray: Array<{ line: number; text: string }>,
): Example {
  let skip: string | null = null;
  let continues = false;
  let background: number | null = null;
  for (const marker of markers) {
    const skipMatch = /^skip\s+(\S.*)$/.exec(marker.text);
    const backgroundMatch = /^background\s+(\d+)$/.exec(marker.text);
    if (skipMatch) skip = skipMatch[1];
    else if (marker.text === 'continues') continues = true;
    else if (backgroundMatch) background = Number(backgroundMatch[1]);
    else stray.push(marker);
  }
  const commands = parseTranscript(body);
  const first = commands[0]?.text ?? body.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#')) ?? '';
  const shortFirst = first.split('\n')[0].replace(/\s+#.*$/, '').trim();
  return {
    file,
    line,
    heading,
    name: `${file} › ${heading} › ${shortFirst.length > 90 ? `${shortFirst.slice(0, 89)}…` : shortFirst}`,
    body,
    skip,
    continues,
    background,
    commands,
    cwd,
  };
}

/** The commands and shown outputs of a transcript block (`$ ` lines); empty for a plain script. */
export function parseTranscript(body: string): Command[] {
  const lines = body.split('\n');
  if (!lines.some((l) => l.startsWith('$ '))) return [];
  const commands: Command[] = [];
  let i = 0;
  while (i < lines.length && !lines[i].startsWith('$ ')) {
    if (lines[i].trim() !== '') throw new Error(`a transcript starts with a "$ " line, not ${JSON.stringify(lines[i])}`);
    i += 1;
  }
  while (i < lines.length) {
    const parts = [lines[i].slice(2)];
    while (parts[parts.length - 1].endsWith('\\') && i + 1 < lines.length) {
      i += 1;
      parts.push(lines[i]);
    }
    i += 1;
    const output: string[] = [];
    while (i < lines.length && !lines[i].startsWith('$ ')) output.push(lines[i]), (i += 1);
    const text = parts.join('\n');
    const shown = trimOutput(output.join('\n'));
    const exit = /#.*\(exit (\d+)\)/.exec(parts[parts.length - 1]) ?? /#.*\(exit (\d+)\)/.exec(parts[0]);
    commands.push({ text, expected: shown === '' ? null : shown, exitCode: exit ? Number(exit[1]) : 0 });
  }
  return commands;
}

/** Trailing spaces of every line and trailing blank lines removed. */
export function trimOutput(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n+$/, '')
    .replace(/^\n+/, '');
}

/** Does `actual` match the shown output, where `...` stands for any text? */
export function outputMatches(expected: string, actual: string): boolean {
  const pattern = trimOutput(expected)
    .split('...')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(trimOutput(actual));
}
