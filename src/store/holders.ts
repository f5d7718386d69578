import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemgitError, type ErrorCode } from './errors';
import { isProcessAlive } from './process-alive';

/**
 * Processes that keep a store open for a long time (`memgit serve`, `memgit demo`) register here, one file
 * each under `.git/memgit/holders/`, so that whatever would replace the whole store (the demo's rebuild)
 * can see a live holder and refuse instead of pulling the store from under a running server. A holder
 * killed without cleaning up is recognised by its dead pid and ignored (and its file removed).
 */

export interface StoreHolder {
  pid: number;
  host: string;
  /** What holds it, e.g. `memgit serve`. */
  command: string;
  /** Where it serves the store, when it does. */
  url: string | null;
  /** ISO time of registration. */
  since: string;
}

/** A store that another live process holds; nothing was changed. */
export class StoreInUseError extends MemgitError {
  static override readonly code: ErrorCode = 'store_in_use';

  constructor(
    message: string,
    readonly holders: StoreHolder[],
  ) {
    super(message);
  }
}

function holdersDir(gitdir: string): string {
  return path.join(gitdir, 'memgit', 'holders');
}

/** Register this process as a holder of the store; resolves to the function that unregisters it. */
export async function registerHolder(gitdir: string, info: { command: string; url?: string | null }): Promise<() => void> {
  const holder: StoreHolder = { pid: process.pid, host: os.hostname(), command: info.command, url: info.url ?? null, since: new Date().toISOString() };
  const dir = holdersDir(gitdir);
  const file = path.join(dir, `${process.pid}-${encodeURIComponent(holder.host)}.json`);
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
  await fs.promises.writeFile(file, `${JSON.stringify(holder)}\n`, { mode: 0o600 });
  let registered = true;
  // Sync, so that it also runs from an 'exit' handler.
  const unregister = () => {
    if (!registered) return;
    registered = false;
    process.removeListener('exit', unregister);
    fs.rmSync(file, { force: true });
  };
  process.once('exit', unregister);
  return unregister;
}

/** The other processes holding the store now (dead holders on this host are dropped). */
export async function liveHolders(gitdir: string): Promise<StoreHolder[]> {
  const dir = holdersDir(gitdir);
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  const live: StoreHolder[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    const holder = parseHolder(await fs.promises.readFile(file, 'utf8').catch(() => ''));
    if (!holder) continue;
    if (holder.host === os.hostname() && holder.pid === process.pid) continue;
    // A holder on another host (a shared folder) cannot be judged: it counts as live.
    if (holder.host === os.hostname() && !isProcessAlive(holder.pid)) {
      await fs.promises.rm(file, { force: true });
      continue;
    }
    live.push(holder);
  }
  return live;
}

export function describeHolder(holder: StoreHolder): string {
  const where = holder.url ? `, serving ${holder.url}` : '';
  const host = holder.host === os.hostname() ? '' : ` on ${holder.host}`;
  return `${holder.command} (pid ${holder.pid}${host}${where})`;
}

function parseHolder(text: string): StoreHolder | null {
  try {
    const value = JSON.parse(text) as Partial<StoreHolder>;
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== 'string' || typeof value.command !== 'string') return null;
    return { pid: value.pid!, host: value.host, command: value.command, url: typeof value.url === 'string' ? value.url : null, since: String(value.since ?? '') };
  } catch {
    return null; // a file being written, or not ours
  }
}
