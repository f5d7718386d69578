#!/usr/bin/env node
import './threadpool'; // first: sizes libuv's pool before any file system call
import { Command } from 'commander';
import { registerChat } from './commands/chat';
import { registerDemo } from './commands/demo';
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
import { MemgitError } from '../store/errors';

const { version } = require('../../../package.json') as { version: string };

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('memgit')
    .description(
      'A git-backed, versioned memory store for Claude\'s memory tool (memory_20250818).\n' +
        'Every change the agent makes to /memories is one git commit named by its tool_use id.',
    )
    .version(version)
    .showHelpAfterError('(run with --help for usage)');
  registerExec(program);
  registerLog(program);
  registerShow(program);
  registerServe(program);
  registerChat(program);
  registerDemo(program);
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
    '\nThe store defaults to ./memories-repo (or $MEMGIT_REPO); every command takes --repo DIR.\n' +
      'Run `memgit <command> --help` for the details of one command.',
  );
  return program;
}

async function main(): Promise<void> {
  try {
    await buildProgram().parseAsync(process.argv);
  } catch (error) {
    if (error instanceof MemgitError) {
      process.stderr.write(`${error.message.startsWith('memgit:') ? '' : 'memgit: '}${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

if (require.main === module) void main();
