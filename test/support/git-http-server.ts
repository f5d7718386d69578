/**
 * A real git server for the replication tests: git's own `git http-backend` (a CGI program shipped with
 * git) behind a small Node HTTP wrapper with basic auth, on 127.0.0.1. Every request runs the CGI once.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';

export interface GitHttpServer {
  /** Base URL; a repository `name.git` under the root is at `${url}/name.git`. */
  url: string;
  root: string;
  port: number;
  /** Requests seen (method and path), for tests that check what a client did. */
  requests: Array<{ method: string; path: string; status: number }>;
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  root: string;
  username: string;
  password: string;
  /** Listen on this port (to bring a stopped server back on the same URL). */
  port?: number;
}

/**
 * Create a bare repository the server will accept pushes into, as a user following git's defaults makes
 * it: plain `git init --bare`, whose HEAD names `master` (made explicit here so that a machine with
 * init.defaultBranch set tests the same thing), while memgit pushes `main`. `initialBranch`: as made
 * with `git init --bare -b NAME`.
 */
export function createBareRepository(root: string, name: string, options: { initialBranch?: string } = {}): string {
  const dir = path.join(root, name);
  fs.mkdirSync(root, { recursive: true });
  const run = (...args: string[]) => {
    const result = spawnSync('git', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  };
  run('-c', 'init.defaultBranch=master', 'init', '-q', '--bare', ...(options.initialBranch ? ['-b', options.initialBranch] : []), dir);
  run('-C', dir, 'config', 'http.receivepack', 'true');
  return dir;
}

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const requests: GitHttpServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record = (status: number) => requests.push({ method: req.method ?? '', path: url.pathname + url.search, status });
    if (req.headers.authorization !== expected) {
      record(401);
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      req.resume();
      return;
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: options.root,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: options.username,
        REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ''),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      record(status);
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stderr.resume();
    cgi.on('close', () => {
      if (!headersDone) {
        record(502);
        res.writeHead(502);
      }
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    root: options.root,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
