import * as readline from 'node:readline';
import { Command, Option } from 'commander';
import { isValidId } from '../../contract/paths';
import { MemgitError, newSessionId } from '../../store';
import { EXIT_ERROR, openStore, repoOption, usage } from '../options';

/** Largest input line accepted; a longer one gets an error line (memory files are capped far below). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export function registerExec(program: Command): void {
  program
    .command('exec')
    .summary('execute memory tool_use blocks from stdin (JSON lines)')
    .description(
      'Read Messages API tool_use blocks for the memory tool from stdin, one JSON\n' +
        'object per line, and write exactly one JSON line per input line to stdout:\n' +
        'the tool_result block to send back. A line that is not valid JSON or not a\n' +
        'memory tool_use gets {"type":"error","error":"<why>"} and the stream goes on; so does a call the\n' +
        'store refused (a read-only clone, a lock held too long), which was not applied.\n' +
        'When stdin ends: exit 0, or 1 when the store refused a call (said on stderr).',
    )
    .addOption(repoOption())
    .option('--session <id>', 'session id recorded on every commit (default: a new sess_… id, printed to stderr)')
    .addOption(new Option('--create-mode <mode>', 'what create does to an existing file').choices(['overwrite', 'error']).default('overwrite'))
    .addHelpText(
      'after',
      '\nExample:\n' +
        `  echo '{"type":"tool_use","id":"toolu_01","name":"memory","input":{"command":"view","path":"/memories"}}' | memgit exec\n`,
    )
    .action(async (options: { repo?: string; session?: string; createMode: 'overwrite' | 'error' }) => {
      const session = options.session ?? newSessionId();
      if (!isValidId(session)) usage(`invalid --session ${JSON.stringify(session)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
      if (!options.session) process.stderr.write(`memgit: session ${session}\n`);
      const store = await openStore(options.repo, { createMode: options.createMode });
      const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
      const refused = new Map<string, number>();
      for await (const line of lines) {
        const { output, refusedBecause } = await executeLine(store, line, session);
        if (refusedBecause) refused.set(refusedBecause, (refused.get(refusedBecause) ?? 0) + 1);
        if (!process.stdout.write(`${JSON.stringify(output)}\n`)) {
          await new Promise((resolve) => process.stdout.once('drain', resolve));
        }
      }
      await store.close();
      for (const [why, count] of refused) process.stderr.write(`memgit: ${count} call${count === 1 ? ' was' : 's were'} not applied: ${why}\n`);
      if (refused.size > 0) process.exitCode = EXIT_ERROR;
    });
}

type Store = Awaited<ReturnType<typeof openStore>>;

/** One line's output; `refusedBecause`: the store refused the call (not applied), and why. */
interface LineResult {
  output: object;
  refusedBecause?: string;
}

async function executeLine(store: Store, line: string, session: string): Promise<LineResult> {
  if (Buffer.byteLength(line) > MAX_LINE_BYTES) return lineError(`line longer than ${MAX_LINE_BYTES} bytes`);
  let block: unknown;
  try {
    block = JSON.parse(line);
  } catch (error) {
    return lineError(`invalid JSON: ${(error as Error).message}`);
  }
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return lineError('expected a JSON object');
  const { type, name } = block as { type?: unknown; name?: unknown };
  if (type !== 'tool_use') return lineError(`expected "type":"tool_use", got ${JSON.stringify(type) ?? 'nothing'}`);
  if (name !== 'memory') return lineError(`expected the memory tool ("name":"memory"), got ${JSON.stringify(name) ?? 'nothing'}`);
  try {
    return { output: await store.execute(block, { session }) };
  } catch (error) {
    // A store-level failure (a read-only clone, another writer holding the lock too long) answers this
    // line; nothing was written, and the stream goes on so later lines still get their one line of output.
    if (!(error instanceof MemgitError)) throw error;
    const why = error.detail;
    return { ...lineError(why), refusedBecause: why };
  }
}

function lineError(error: string): LineResult {
  return { output: { type: 'error', error } };
}
