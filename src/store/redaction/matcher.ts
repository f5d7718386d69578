import { RedactionRefusedError } from '../errors';

/** What to erase. Exactly one of text, regex, path or call. */
export interface RedactionTarget {
  /** Every occurrence of this exact text, in every memory file of every version. */
  text?: string;
  /** Every match of this regular expression (JavaScript syntax; applied with the `g` flag). */
  regex?: string;
  /** The whole content of this /memories file, in every version (replaced by the marker). */
  path?: string;
  /** What one call (a tool_use id) wrote: the lines it added, wherever they still stand afterwards. */
  call?: string;
}

export type TargetKind = 'text' | 'regex' | 'path' | 'call';

/** A pure content transform for one redaction: new text for a blob, or null when it holds no match. */
export type Redactor = (repoPath: string, content: string) => string | null;

export function targetKind(target: RedactionTarget): TargetKind {
  const given = (['text', 'regex', 'path', 'call'] as const).filter((k) => target[k] !== undefined);
  if (given.length !== 1) throw new RedactionRefusedError('say what to redact with exactly one of text, regex, path or call');
  return given[0];
}

export function marker(id: string, date: Date): string {
  return `[redacted ${date.toISOString().slice(0, 10)} #${id}]`;
}

export function compileRegex(source: string): RegExp {
  if (source.length === 0 || source.length > 1000) throw new RedactionRefusedError('the regex must be 1 to 1000 characters');
  let regex: RegExp;
  try {
    regex = new RegExp(source, 'gu');
  } catch (error) {
    throw new RedactionRefusedError(`invalid regex: ${(error as Error).message}`);
  }
  if (regex.test('')) throw new RedactionRefusedError('the regex matches the empty string; it would redact everything');
  return regex;
}

export function textRedactor(text: string, mark: string): Redactor {
  if (text.length === 0) throw new RedactionRefusedError('the text to redact is empty');
  if (text.includes('\n')) throw new RedactionRefusedError('redact one line of text at a time (it contains a line break)');
  return (_path, content) => (content.includes(text) ? content.split(text).join(mark) : null);
}

export function regexRedactor(source: string, mark: string): Redactor {
  const regex = compileRegex(source);
  return (_path, content) => {
    regex.lastIndex = 0;
    if (!regex.test(content)) return null;
    regex.lastIndex = 0;
    return content.replace(regex, () => mark);
  };
}

export function pathRedactor(repoPath: string, mark: string): Redactor {
  return (p, content) => (p === repoPath && content !== `${mark}\n` ? `${mark}\n` : null);
}

/** Lines (those with any non-space character) that `after` has and `before` did not. */
export function addedLines(before: string, after: string): Set<string> {
  const old = new Set(before.split('\n'));
  return new Set(after.split('\n').filter((line) => line.trim() !== '' && !old.has(line)));
}

export function linesRedactor(lines: Set<string>, mark: string): Redactor {
  return (_path, content) => {
    let changed = false;
    const out = content.split('\n').map((line) => {
      if (!lines.has(line)) return line;
      changed = true;
      return mark;
    });
    return changed ? out.join('\n') : null;
  };
}
