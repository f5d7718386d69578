/**
 * The built `memgit` CLI spawned as a process, asynchronously: the scripted Messages API server runs in the
 * test's own process, so a synchronous spawn would block the server it needs.
 */
import { spawn } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from '../support/dist';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user with none of memgit's or the SDK's variables set, plus `extra`. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('ANTHROPIC_') || name.startsWith('MEMGIT_')) delete env[name];
  }
  return { ...env, ...extra };
}

export function runCli(args: string[], options: { env: NodeJS.ProcessEnv; input?: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { env: options.env, cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
