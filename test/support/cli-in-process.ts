/**
 * The built `memgit` CLI run inside the test's own process: the program the bin runs (dist/, as built by
 * ensureBuilt) on `args`, with what it writes to stdout and stderr captured and process.exit turned into
 * the run's status. For the pure queries a test asks many of (log, show, cat, ls, diff, sessions, gc,
 * --help), where starting a node process for each adds nothing but time; every command family keeps
 * tests that spawn the CLI as users run it (test/cli/cli.test.ts, test/rollback/cli.test.ts, ...).
 *
 * Not for commands that read stdin (exec), serve, or depend on the working folder: spawn those. One run
 * at a time (stdout, stderr, process.exit and the environment are the process's own).
 */
import * as path from 'node:path';
import { REPO_ROOT } from './dist';

export interface CliRun {
  status: number;
  stdout: string;
  stderr: string;
}

/** What process.exit throws here instead of ending the test's process. */
class ProcessExit extends Error {
  constructor(readonly code: number) {
    super(`memgit called process.exit(${code})`);
  }
}

let running = false;

type Write = typeof process.stdout.write;

function capture(sink: string[]): Write {
  return function write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    sink.push(text);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') process.nextTick(done as () => void);
    return true;
  } as Write;
}

/**
 * Run `memgit <args>` in this process. `env`: variables set for the run (undefined removes one); MEMGIT_*
 * and ANTHROPIC_* variables of the test's own environment are removed for it, as a clean user's shell has none.
 */
export async function memgitInProcess(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  if (running) throw new Error('memgitInProcess: one run at a time');
  const { runCli } = require(path.join(REPO_ROOT, 'dist/src/compose/cli.js')) as { runCli: (argv: string[]) => Promise<void> };
  running = true;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const saved = {
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    exit: process.exit,
    exitCode: process.exitCode,
    stdoutListeners: process.stdout.listeners('error'),
    stderrListeners: process.stderr.listeners('error'),
    env: { ...process.env },
    maxListeners: [process.stdout.getMaxListeners(), process.stderr.getMaxListeners()],
    stdoutTTY: Object.getOwnPropertyDescriptor(process.stdout, 'isTTY'),
    stderrTTY: Object.getOwnPropertyDescriptor(process.stderr, 'isTTY'),
  };
  for (const name of Object.keys(process.env)) {
    if (name.startsWith('MEMGIT_') || name.startsWith('ANTHROPIC_')) delete process.env[name];
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  // Captured output is a pipe, not a terminal (jest in band may run in one): no widths, no progress lines.
  Object.defineProperty(process.stdout, 'isTTY', { value: undefined, configurable: true, writable: true });
  Object.defineProperty(process.stderr, 'isTTY', { value: undefined, configurable: true, writable: true });
  // The worker's streams may carry 'error' listeners of earlier test files (jest keeps one process per
  // worker); node's warning about more than ten would land in the captured stderr of a run that added one.
  // The bound counts from what the run found, so a CLI run that piles up listeners itself is still warned of.
  for (const stream of [process.stdout, process.stderr]) stream.setMaxListeners(stream.listenerCount('error') + 10);
  process.stdout.write = capture(stdout);
  process.stderr.write = capture(stderr);
  process.exit = ((code?: number | string | null) => {
    throw new ProcessExit(Number(code ?? process.exitCode ?? 0));
  }) as typeof process.exit;
  process.exitCode = undefined;
  let status: number;
  try {
    await runCli([process.execPath, 'memgit', ...args]);
    status = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!(error instanceof ProcessExit)) throw error; // the process would have died with it: the test fails
    status = error.code;
  } finally {
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    for (const [stream, descriptor] of [[process.stdout, saved.stdoutTTY], [process.stderr, saved.stderrTTY]] as const) {
      if (descriptor) Object.defineProperty(stream, 'isTTY', descriptor);
      else delete (stream as { isTTY?: boolean }).isTTY;
    }
    // The program's listeners for a closed pipe (program.ts) go with the run.
    for (const [stream, before] of [[process.stdout, saved.stdoutListeners], [process.stderr, saved.stderrListeners]] as const) {
      for (const listener of stream.listeners('error')) if (!before.includes(listener)) stream.off('error', listener as (error: Error) => void);
    }
    process.stdout.setMaxListeners(saved.maxListeners[0]);
    process.stderr.setMaxListeners(saved.maxListeners[1]);
    for (const name of Object.keys(process.env)) if (!(name in saved.env)) delete process.env[name];
    Object.assign(process.env, saved.env);
    running = false;
  }
  return { status, stdout: stdout.join(''), stderr: stderr.join('') };
}
