import { Command, type AddHelpTextContext } from 'commander';

/**
 * One width for every line of `--help`: commander's own columns, command descriptions and the texts
 * added after them (examples, exit codes) are all wrapped to it. Prose is written in the sources as
 * paragraphs (a blank line between them; hand breaks inside one do not matter), lines that start with
 * a space (examples, lists) are kept as written, and a line ending in ':' ends its paragraph.
 */
export const MAX_HELP_WIDTH = 100;
const MIN_HELP_WIDTH = 60;

/** The help width: the terminal's (within 60–100 columns), else 80, as commander's default. */
export function helpWidth(columns: number | undefined = process.stdout.isTTY ? process.stdout.columns : undefined): number {
  if (!columns) return 80;
  return Math.max(MIN_HELP_WIDTH, Math.min(MAX_HELP_WIDTH, columns));
}

/** Words of `text` in lines of at most `width` columns (a longer word stands alone). */
function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** Re-wrap the prose of a help text to `width`, keeping indented lines and blank lines as they are. */
export function reflow(text: string, width: number): string {
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) out.push(...wrapWords(paragraph.join(' '), width));
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '' || /^\s/.test(line)) {
      flush();
      out.push(line.trimEnd());
      continue;
    }
    paragraph.push(line.trim());
    if (line.trimEnd().endsWith(':')) flush();
  }
  flush();
  return out.join('\n');
}

/**
 * The CLI's commands: every text added to a command's help is reflowed to the help width when shown,
 * and subcommands are made the same way (commander creates them through `createCommand`).
 */
export class MemgitCommand extends Command {
  override createCommand(name?: string): Command {
    return new MemgitCommand(name);
  }

  override addHelpText(position: 'before' | 'after' | 'beforeAll' | 'afterAll', text: string | ((context: AddHelpTextContext) => string)): this {
    return super.addHelpText(position, (context: AddHelpTextContext) => reflow(typeof text === 'function' ? text(context) : text, helpWidth()));
  }
}

/** commander's help settings for the program (inherited by every subcommand): wrap at the help width. */
export function helpSettings() {
  return {
    helpWidth: helpWidth(),
    // Wrap a column's descriptions even when the terms leave it narrow (commander's default: 40).
    minWidthToWrap: 20,
    boxWrap: (str: string, width: number) => reflow(str, width),
  };
}
