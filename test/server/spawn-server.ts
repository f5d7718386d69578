/**
 * `memgit server` as users run it: the built CLI spawned on a free port, keys made with `memgit keys`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { CLI_MAIN, REPO_ROOT } from '../support/dist';

export interface SpawnedServer {
  url: string;
  /** Everything the server wrote to stdout so far (one JSON log line per request). */
  stdout: () => string;
  stderr: () => string;
  /** The parsed log lines so far. */
  logLines: () => Array<Record<string, unknown>>;
  pid: number;
  /** SIGTERM, then the exit code. */
  stop: () => Promise<number | null>;
  exited: Promise<number | null>;
}

export function spawnServer(root: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [CLI_MAIN, 'server', '--root', root, '--port', '0', ...extraArgs], { env, cwd: REPO_ROOT });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  return new Promise((resolve, reject) => {
    child.stderr.on('data', () => {
      const match = / at (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (match) {
        resolve({
          url: match[1],
          stdout: () => out,
          stderr: () => err,
          logLines: () => out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
          pid: child.pid!,
          stop,
          exited,
        });
      }
    });
    void exited.then((code) => reject(new Error(`memgit server exited with ${code}: ${err}`)));
  });
}

/** `memgit keys create` through the CLI; returns the key it printed and the id it names. */
export function makeKey(root: string, stores: string, scope: 'read' | 'write' | 'operator', extra: string[] = []): { key: string; id: string } {
  const run = spawnSync(process.execPath, [CLI_MAIN, 'keys', 'create', '--root', root, '--stores', stores, '--scope', scope, '--json', ...extra], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`keys create failed: ${run.stderr}`);
  const made = JSON.parse(run.stdout) as { key: string; info: { id: string } };
  return { key: made.key, id: made.info.id };
}

export function keysCli(args: string[]) {
  return spawnSync(process.execPath, [CLI_MAIN, 'keys', ...args], { cwd: REPO_ROOT, encoding: 'utf8' });
}

/** A tool call over HTTP. */
export async function postToolCall(url: string, store: string, key: string | null, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${url}/api/v1/stores/${store}/tool-calls`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The line the server's process guard writes for an unexpected rejection or exception (src/server/server.ts). */
export const UNEXPECTED_MARK = 'memgit: UNEXPECTED';

/** Fail when the server ever logged an unexpected rejection or exception (it kept serving, but it is a bug). */
export function expectNoUnexpected(server: SpawnedServer | undefined): void {
  if (!server) return;
  const line = server.stderr().split('\n').find((l) => l.startsWith(UNEXPECTED_MARK));
  expect(line).toBeUndefined();
}

/** An Authorization header with the key as the password of Basic auth (what a browser sends). */
export function basicAuth(key: string, user = 'me'): { authorization: string } {
  return { authorization: `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}` };
}
