/**
 * `memgit server` as users run it: the built CLI spawned on a free port, keys made as `memgit keys create` makes them.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { createKey } from '../../src/tenancy/keys';
import { CLI_MAIN, REPO_ROOT } from '../support/dist';
import { checkResponsesAgainstOpenApi } from '../support/openapi-contract';

// Every test that spawns `memgit server` checks each response it fetches against docs/openapi.json.
checkResponsesAgainstOpenApi();

export interface SpawnedServer {
  url: string;
  /** Everything the server wrote to stdout so far (one JSON log line per request). */
  stdout: () => string;
  /**
   * stdout once it matches `pattern` (a log line is written after the response it describes, so a test
   * that just got its answer may not have the line yet), or as it is when the server exits or 10 s pass.
   */
  stdoutMatching: (pattern: RegExp) => Promise<string>;
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
  const stdoutMatching = (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      if (pattern.test(out) || child.exitCode !== null) return resolve(out);
      const done = () => {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.off('exit', done);
        resolve(out);
      };
      const onData = () => {
        if (pattern.test(out)) done();
      };
      const timer = setTimeout(done, 10_000);
      child.stdout.on('data', onData);
      child.once('exit', done);
    });
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
          stdoutMatching,
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

/**
 * A key as `memgit keys create` makes it: the function that command runs (src/tenancy/keys.ts), called
 * here rather than through a process of its own for each of the ~50 keys the server tests make (the
 * command itself, its flags and output are tested by test/cli/keys.test.ts and keysCli below).
 * `extra`: the command's own flags, --no-create, --note and --review.
 */
export async function makeKey(root: string, stores: string, scope: 'read' | 'write' | 'operator', extra: string[] = []): Promise<{ key: string; id: string }> {
  const flag = (name: string) => {
    const at = extra.indexOf(name);
    return at < 0 ? undefined : extra[at + 1];
  };
  const unknown = extra.filter((arg) => arg.startsWith('--') && !['--no-create', '--note', '--review'].includes(arg));
  if (unknown.length) throw new Error(`makeKey: no such flag of keys create here: ${unknown.join(' ')}`);
  const made = await createKey(path.resolve(root), {
    stores: [stores],
    scope,
    create: scope === 'read' ? false : !extra.includes('--no-create'),
    note: flag('--note'),
    review: flag('--review') as 'off' | 'flagged' | 'all' | undefined,
  });
  return { key: made.key, id: made.info.id };
}

export function keysCli(args: string[]) {
  return spawnSync(process.execPath, [CLI_MAIN, 'keys', ...args], { cwd: REPO_ROOT, encoding: 'utf8' });
}

/** A tool call over HTTP. */
export async function postToolCall(
  url: string,
  store: string,
  key: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
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
