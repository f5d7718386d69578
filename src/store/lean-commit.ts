/**
 * The fields of a commit the history index is built from — its tree, parents, committer time and message —
 * read from the commit's bytes, for the rebuild from git (a cold open reads every commit once).
 *
 * isomorphic-git's readCommit parses the whole commit (every header, author and committer with their time
 * zones) and builds its signing payload (a copy of the commit without its signature) on every call;
 * the rebuild uses four of those fields. This reads the same four with the same rules, for the commits
 * memgit writes (and git writes): the headers before the first blank line, one per line; `tree` first, then
 * the run of `parent` lines; the first `committer` (and `author`) after that run, matched as isomorphic-git
 * matches them; the message normalised as isomorphic-git normalises it. Anything else — a header continued
 * on the next line (a signature, a merge tag), a header without a value, no blank line, a person line or
 * time zone isomorphic-git would not parse — answers null, and the caller asks isomorphic-git, so that an
 * unusual commit is read (or refused) exactly as before. test/store/lean-commit.test.ts compares the two.
 */

export interface LeanCommit {
  tree: string;
  parent: string[];
  committer: { timestamp: number };
  message: string;
}

/** isomorphic-git's parseAuthor and parseTimezoneOffset patterns (a line either rejects is left to it). */
const PERSON = /^(.*) <(.*)> (.*) (.*)$/;
const ZONE = /(\+|-)(\d\d)(\d\d)/;

export function parseLeanCommit(bytes: Uint8Array): LeanCommit | null {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const blank = text.indexOf('\n\n');
  if (blank < 0) return null;
  const headers = text.slice(0, blank).split('\n');
  const valueAt = (line: string, key: string): string | null => {
    // isomorphic-git's keyOf / valueOf: the key ends at the first space.
    if (line.length <= key.length || line.charCodeAt(key.length) !== 0x20 || !line.startsWith(key)) return null;
    return line.slice(key.length + 1);
  };
  for (const line of headers) {
    if (line.length === 0 || line.charCodeAt(0) === 0x20 || line.indexOf(' ') <= 0) return null;
  }
  const tree = valueAt(headers[0], 'tree');
  if (tree === null) return null;
  const parent: string[] = [];
  let k = 1;
  for (; k < headers.length; k++) {
    const value = valueAt(headers[k], 'parent');
    if (value === null) break;
    parent.push(value);
  }
  let committer: string | null = null;
  let author: string | null = null;
  for (; k < headers.length; k++) {
    committer ??= valueAt(headers[k], 'committer');
    author ??= valueAt(headers[k], 'author');
  }
  if (committer === null || !personParses(committer) || (author !== null && !personParses(author))) return null;
  const timestamp = Number(PERSON.exec(committer)![3]);
  return { tree, parent, committer: { timestamp }, message: normalizeNewlines(text.slice(blank + 2)) };
}

function personParses(line: string): boolean {
  const match = PERSON.exec(line);
  return match !== null && ZONE.test(match[4]);
}

/** isomorphic-git's normalizeNewlines: no CR, no leading newlines, exactly one trailing newline. */
function normalizeNewlines(text: string): string {
  return text.replace(/\r/g, '').replace(/^\n+/, '').replace(/\n+$/, '') + '\n';
}
