/**
 * Peak memory of `memgit serve` on a store (used by bench/run.ts's read side and bench/memgit-stores.ts):
 * the real CLI as a process, each of the audit UI's heavy pages requested three times over loopback, then
 * its peak RSS (VmHWM) read from /proc before it is stopped.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MemoryStore } from '../src/store/memory-store';
import { factOf, HOT_FILE, sessionOf } from './generate';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ServeMemory {
  openedMb: number;
  peakMb: number;
  pages: number;
}

/** The pages `serveMemory` requests on a generated store of `commits` calls over `files` files. */
export function servedPages(store: MemoryStore, commits: number, files: number): string[] {
  const history = store.history;
  const midCall = Math.floor((commits - 1) / 2);
  const hotRel = HOT_FILE.slice('memories/'.length);
  // A fact written by an edit of an ordinary file, half-way through history.
  let factCall = Math.max(files, midCall);
  while (factCall < commits - 1 && history.at(factCall + 1)?.path === `/${HOT_FILE}`) factCall++;
  const oldCommit = history.at(Math.floor(history.size / 10))!.commit;
  return [
    '/',
    '/commits',
    '/commits?path=/memories/topic-03',
    `/sessions/${sessionOf(midCall)}`,
    `/files/${hotRel}`,
    `/files/${hotRel}?at=${oldCommit}`,
    `/tree?at=${oldCommit}&dir=topic-03`,
    `/search?q=${encodeURIComponent(factOf(factCall))}`,
  ];
}

/** `nodeOptions`: NODE_OPTIONS for the server process (undefined: none, V8's defaults). */
export async function serveMemory(store: string, pages: string[], nodeOptions?: string): Promise<ServeMemory> {
  const cli = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  const child = spawn(process.execPath, [cli, 'serve', '--repo', store, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const m = /at (http:\/\/[^/\s]+)\//.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`memgit serve exited (${code}) before it served`)));
    });
    const pid = child.pid!;
    const status = () => fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN);
    const openedMb = kb(status(), 'VmRSS') / 1024;
    let served = 0;
    for (let round = 0; round < 3; round++) {
      for (const page of pages) {
        const res = await fetch(url + page);
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`memgit serve ${page}: HTTP ${res.status}`);
        served++;
      }
    }
    return { openedMb, peakMb: kb(status(), 'VmHWM') / 1024, pages: served };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
  }
}
