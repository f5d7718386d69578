#!/usr/bin/env node
// A local smart-HTTP git server for memgit replicas: git's own `git http-backend` (a CGI program that
// ships with git) behind node:http, with no dependency. For trying replication on one machine or a LAN;
// in production put `git http-backend` behind nginx or Apache with TLS (docs/replication.md).
//
//   node examples/git-http-server/server.mjs --root ~/git [--port 8081] [--host 127.0.0.1]
//
// Every bare repository below --root is served at http://HOST:PORT/<name>.git (pushes need
// `git config http.receivepack true` in the repository). With GIT_HTTP_PASSWORD set, every request
// needs HTTP basic auth with that password (any user name): memgit sends its --token-env token so.
import { spawn } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    port: { type: 'string', default: '8081' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
if (!values.root) {
  process.stderr.write('usage: node server.mjs --root DIR [--port 8081] [--host 127.0.0.1]\n');
  process.exit(64);
}
const root = fs.realpathSync(path.resolve(values.root));
const password = process.env.GIT_HTTP_PASSWORD ?? '';
const digest = (text) => createHash('sha256').update(text).digest();

/** Basic auth with the password (compared in constant time), or nothing when no password is set. */
function authorised(req) {
  if (!password) return true;
  const match = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const given = decoded.slice(decoded.indexOf(':') + 1);
  return timingSafeEqual(digest(given), digest(password));
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (!authorised(req)) {
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
    res.end('authentication required\n');
    req.resume();
    return;
  }
  const cgi = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: 'memgit',
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    },
  });
  req.pipe(cgi.stdin);
  cgi.stderr.pipe(process.stderr);
  // The CGI answers with headers (a `Status:` line among them), a blank line, then the body.
  let head = Buffer.alloc(0);
  let started = false;
  cgi.stdout.on('data', (chunk) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    started = true;
    let status = 200;
    const headers = {};
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    res.write(head.subarray(end + 4));
  });
  cgi.on('close', () => {
    if (!started) res.writeHead(502);
    res.end();
  });
});

server.listen(Number(values.port), values.host, () => {
  const { port } = server.address();
  process.stdout.write(`git http server for ${root} at http://${values.host}:${port}/ (Ctrl-C to stop)\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
