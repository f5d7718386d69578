#!/usr/bin/env node
import './threadpool'; // first: sizes libuv's pool before any file system call
import { Command, CommanderError } from 'commander';
import { helpSettings, MemgitCommand } from './help-format';
import { registerChat } from './commands/chat';
import { registerDemo } from './commands/demo';
import { registerSandbox } from './commands/sandbox';
import { registerExec } from './commands/exec';
import { registerLog } from './commands/log';
import { registerShow } from './commands/show';
import { registerServe } from './commands/serve';
import { registerRevert } from './commands/revert';
import { registerRestore } from './commands/restore';
import { registerRollbackSession } from './commands/rollback-session';
import { registerReset } from './commands/reset';
import { registerGc } from './commands/gc';
import { registerMcp } from './commands/mcp';
import { registerServer } from './commands/server';
import { registerKeys } from './commands/keys';
import { registerRemote } from './commands/remote';
import { registerPush } from './commands/push';
import { registerClone } from './commands/clone';
import { registerStatus } from './commands/status';
import { registerRedact } from './commands/redact';
import { registerFlags } from './commands/flags';
import { registerBlame } from './commands/blame';
import { registerImport } from './commands/import';
import { registerCat } from './commands/cat';
import { registerLs } from './commands/ls';
import { registerDiff } from './commands/diff';
import { registerSessions } from './commands/sessions';
import { InvalidPointError, MemgitError } from '../store/errors';
import { EXIT_CODES_HELP, EXIT_ERROR, EXIT_USAGE } from './options';

const { version } = require('../../../package.json') as { version: string };

export function buildProgram(): Command {
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
    .exitOverride(); // inherited by every command: usage errors exit EXIT_USAGE (main below)
  registerExec(program);
  registerLog(program);
  registerShow(program);
  registerCat(program);
  registerLs(program);
  registerDiff(program);
  registerSessions(program);
  registerServe(program);
  registerChat(program);
  registerDemo(program);
  registerSandbox(program);
  registerRevert(program);
  registerRestore(program);
  registerRollbackSession(program);
  registerReset(program);
  registerGc(program);
  registerMcp(program);
  registerServer(program);
  registerKeys(program);
  registerStatus(program);
  registerRemote(program);
  registerPush(program);
  registerClone(program);
  registerRedact(program);
  registerFlags(program);
  registerBlame(program);
  registerImport(program);
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
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      if (stream.listenerCount('error') === 1) process.exit(0);
    };
    stream.on('error', onError);
  }
}

async function main(): Promise<void> {
  stopQuietlyWhenOutputCloses();
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (error) {
    // Commander has printed its message (or the help) already.
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
    if (error instanceof MemgitError) {
      process.stderr.write(`${error.message.startsWith('memgit:') ? '' : 'memgit: '}${error.message}\n`);
      process.exit(error instanceof InvalidPointError ? EXIT_USAGE : EXIT_ERROR);
    }
    throw error;
  }
}

if (require.main === module) void main();
