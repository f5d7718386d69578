import type { Command } from 'commander';
import type { CliServices } from '../services';
import { registerChat } from './chat';
import { registerDemo } from './demo';
import { registerSandbox } from './sandbox';
import { registerExec } from './exec';
import { registerLog } from './log';
import { registerShow } from './show';
import { registerServe } from './serve';
import { registerRevert } from './revert';
import { registerRestore } from './restore';
import { registerRollbackSession } from './rollback-session';
import { registerReset } from './reset';
import { registerGc } from './gc';
import { registerMcp } from './mcp';
import { registerServer } from './server';
import { registerKeys } from './keys';
import { registerRemote } from './remote';
import { registerPush } from './push';
import { registerClone } from './clone';
import { registerStatus } from './status';
import { registerRedact } from './redact';
import { registerFlags } from './flags';
import { registerBlame } from './blame';
import { registerImport } from './import';
import { registerCat } from './cat';
import { registerLs } from './ls';
import { registerDiff } from './diff';
import { registerSessions } from './sessions';
import { registerPolicy } from './policy';
import { registerReview } from './review';
import { registerDream } from './dream';

/** Registers one command (or a few that belong together) on the program. */
export type CommandRegistrar = (program: Command, services: CliServices) => void;

/**
 * The CLI's commands, written once: in this order they are registered, and listed by `memgit --help`.
 * A new command adds its registrar here and nowhere else.
 */
export const COMMANDS: readonly CommandRegistrar[] = [
  registerExec,
  registerLog,
  registerShow,
  registerCat,
  registerLs,
  registerDiff,
  registerSessions,
  registerServe,
  registerChat,
  registerDemo,
  registerSandbox,
  registerRevert,
  registerRestore,
  registerRollbackSession,
  registerReset,
  registerGc,
  registerMcp,
  registerServer,
  registerKeys,
  registerStatus,
  registerRemote,
  registerPush,
  registerClone,
  registerRedact,
  registerFlags,
  registerPolicy,
  registerReview,
  registerDream,
  registerBlame,
  registerImport,
];
