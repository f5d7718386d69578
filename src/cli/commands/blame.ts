import { Command } from 'commander';
import { MEMORY_REPO_ROOT, MEMORY_ROOT, resolvePath } from '../../contract/paths';
import { CommitNotFoundError } from '../../store';
import { blameAt } from '../../history/blame';
import { historyContext } from '../../history/context';
import { currentHead, entryOf, pointAt } from '../../history/points';
import { fail, openStore, repoOption } from '../options';

/** Stored text is hostile: no escape sequence, bidi or zero-width character reaches the terminal as such. */
const UNSAFE_IN_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
const visible = (text: string) => text.replace(UNSAFE_IN_LINE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);

export function registerBlame(program: Command): void {
  program
    .command('blame')
    .summary('show which call wrote each line of a memory file')
    .description(
      'Print each line of a memory file with the call that wrote it: commit, tool_use id (or the\n' +
        'operator action), session and time. PATH is /memories/..., memories/... or relative to\n' +
        '/memories. --at shows the file as of an earlier point (a tool_use id, a commit id, HEAD~N or an ISO time).',
    )
    .argument('<path>', 'the memory file, e.g. /memories/profile.md')
    .addOption(repoOption())
    .option('--at <ref>', 'as of this point: a tool_use id, a commit id or prefix, HEAD~N, or an ISO time (default: HEAD)')
    .option('--json', 'one JSON object: the path, the commit and every line with its origin')
    .action(async (given: string, options: { repo?: string; at?: string; json?: boolean }) => {
      const resolved = resolvePath(toVirtual(given));
      if (!resolved.ok) fail(resolved.error.replace(/^Error: /, ''));
      if (resolved.rel === '') fail('blame needs a file, not /memories itself');
      const store = await openStore(options.repo, { create: false });
      try {
        const ctx = historyContext(store);
        let at;
        try {
          at = options.at === undefined ? await currentHead(ctx) : await pointAt(ctx, options.at);
        } catch (error) {
          if (error instanceof CommitNotFoundError) fail(error.detail);
          throw error;
        }
        const { revisions, state } = await blameAt(ctx, resolved.virtual, at);
        const last = revisions[revisions.length - 1];
        if (!last) fail(`${resolved.virtual} has no history up to ${at.commit.slice(0, 12)}`);
        if (!last.oid) fail(`${resolved.virtual} does not exist at ${at.commit.slice(0, 12)} (deleted by ${last.entry.toolUseId ?? last.entry.title})`);
        const lines = state.lines.map((text, k) => {
          const origin = entryOf(ctx, state.origins[k])!;
          return {
            line: k + 1,
            text,
            commit: origin.commit,
            toolUseId: origin.toolUseId ?? null,
            title: origin.title,
            session: origin.session ?? null,
            time: new Date(origin.time * 1000).toISOString(),
          };
        });
        if (options.json) {
          process.stdout.write(JSON.stringify({ path: resolved.virtual, at: at.commit, lines }) + '\n');
        } else {
          const width = String(lines.length).length;
          const out = lines.map((l) =>
            [l.commit.slice(0, 12), visible(l.toolUseId ?? l.title), l.session ?? '-', l.time.replace('.000Z', 'Z'), `${String(l.line).padStart(width)})`, visible(l.text)].join('  '),
          );
          if (out.length) process.stdout.write(out.join('\n') + '\n');
          else process.stderr.write(`memgit: ${resolved.virtual} is empty\n`);
        }
      } finally {
        await store.close();
      }
    });
}

/** `/memories/a`, `memories/a` and `a` all name /memories/a. */
function toVirtual(given: string): string {
  if (given === MEMORY_ROOT || given.startsWith(`${MEMORY_ROOT}/`)) return given;
  if (given === MEMORY_REPO_ROOT || given.startsWith(`${MEMORY_REPO_ROOT}/`)) return `/${given}`;
  return given.startsWith('/') ? given : `${MEMORY_ROOT}/${given}`;
}
