import { Command, CommanderError } from 'commander';
import { MemgitError } from '../store';
import { COMMANDS } from './commands';
import { exitCodeOf } from './errors';
import { helpSettings, MemgitCommand } from './help-format';
import { EXIT_CODES_HELP, EXIT_USAGE, fail } from './options';
import type { CliServices } from './services';

const { version } = require('../../../package.json') as { version: string };

/** The `memgit` program: every command of COMMANDS, with what they run from other edges (`services`). */
export function buildProgram(services: CliServices): Command {
  const program = new MemgitCommand();
  program
    .name('memgit')
    .description(
      'A git-backed, versioned memory store for Claude\'s memory tool (memory_20250818).\n' +
        'Every change the agent makes to /memories is one git commit named by its tool_use id.',
    )
    .version(version)
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp(helpSettings())
    .exitOverride(); // inherited by every command: usage errors exit EXIT_USAGE (runProgram below)
  for (const register of COMMANDS) register(program, services);
  program.addHelpText(
    'after',
    '\nEvery command takes --repo DIR; without it the store is $MEMGIT_REPO, else the store the current\n' +
      'folder is in (as git finds its repository), else ./memories-repo.\n\n' +
      'A point in history (--at, --to, show, diff, revert) is a tool_use id, a commit id or prefix, HEAD,\n' +
      'HEAD~N, or an ISO time such as 2026-12-02T15:30Z (the memory as it was then).\n\n' +
      'Run `memgit <command> --help` for the details of one command.\n' +
      EXIT_CODES_HELP,
  );
  for (const command of program.commands) command.addHelpText('after', EXIT_CODES_HELP);
  return program;
}

/**
 * A reader that stopped reading (`memgit --help | head -1`, `memgit log | head`) is no error: stop quietly,
 * exit 0, as the output was not wanted any more. Writes to a closed pipe fail with EPIPE after the write
 * returned, as an 'error' event that would otherwise crash with a stack trace. A command that handles its
 * output's errors itself (`memgit mcp` shuts down cleanly) has its own listener and is left to it.
 */
function stopQuietlyWhenOutputCloses(): void {
  for (const stream of [process.stdout, process.stderr]) {
    // Once per stream, however often a process runs the CLI (a library caller, the tests): the listener is
    // kept on the stream itself, under a global symbol, so that another copy of this module finds it too.
    const holder = stream as unknown as Record<symbol, ((error: NodeJS.ErrnoException) => void) | undefined>;
    const installed = holder[QUIET_ON_CLOSE];
    if (installed && stream.listeners('error').includes(installed)) continue;
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (stream.listenerCount('error') === 1) process.exit(0);
    };
    holder[QUIET_ON_CLOSE] = onError;
    stream.on('error', onError);
  }
}

const QUIET_ON_CLOSE = Symbol.for('memgit.cli.stopQuietlyWhenOutputCloses');

/** Run the CLI on `argv`: a coded error no command handled is printed `memgit: <message>` (options.ts's printError) and exits by errors.ts. */
export async function runProgram(argv: string[], services: CliServices): Promise<void> {
  stopQuietlyWhenOutputCloses();
  try {
    await buildProgram(services).parseAsync(argv);
  } catch (error) {
    // Commander has printed its message (or the help) already.
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    if (error instanceof MemgitError) fail(error.message, exitCodeOf(error.code));
    throw error;
  }
}
