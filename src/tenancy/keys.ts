import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { MemgitError, type ErrorCode } from '../store';
import { trustProblem, UnsafeRootError } from './root-safety';

/**
 * API keys of a server root. A key is shown once, when it is made; the root keeps only the SHA-256 of
 * its 256 random bits (a hash is enough for a random secret: there is nothing to guess from), in
 * `<root>/.memgit/keys.json`, mode 0600. A key is `mgk_<key id>_<secret>`: the id finds the record, the
 * secret is compared in constant time. A key reaches only the stores its patterns match.
 *
 * Scopes nest: `read` reads history through the JSON API, `write` also calls the memory tool, `operator`
 * also rolls back.
 */

export const SCOPES = ['read', 'write', 'operator'] as const;
export type Scope = (typeof SCOPES)[number];

export interface KeyRecord {
  id: string;
  /** hex SHA-256 of the secret part. */
  hash: string;
  /** Store id patterns: `*` matches any run of id characters, `?` one. */
  stores: string[];
  scope: Scope;
  /** Whether a write with this key may create a store that does not exist yet. */
  create: boolean;
  created: string;
  revoked: string | null;
  note: string | null;
  /**
   * Every write with this key waits for review (`flagged`: when the detectors hold it; `all`: always),
   * whatever the store's own policy (the stricter applies). Absent: the store's policy alone.
   */
  review?: 'flagged' | 'all';
}

/** What callers may see of a key: everything but its hash. */
export type KeyInfo = Omit<KeyRecord, 'hash'>;

interface KeyFile {
  version: 1;
  keys: KeyRecord[];
}

export class KeyError extends MemgitError {
  static override readonly code: ErrorCode = 'key_invalid';

  constructor(message: string) {
    super(message);
  }
}

const KEY_PATTERN = /^mgk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const STORE_PATTERN = /^[A-Za-z0-9_.*?-]{1,128}$/;
const MAX_NOTE = 200;

export function keysFile(root: string): string {
  return path.join(root, '.memgit', 'keys.json');
}

export function scopeAllows(have: Scope, need: Scope): boolean {
  return SCOPES.indexOf(have) >= SCOPES.indexOf(need);
}

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Parse `acme-*,beta-?` into validated patterns. */
export function parseStorePatterns(value: string): string[] {
  const patterns = value.split(',').map((p) => p.trim());
  for (const p of patterns) {
    if (!STORE_PATTERN.test(p)) throw new KeyError(`invalid store pattern ${JSON.stringify(p)}: use store id characters (A-Z a-z 0-9 _ . -) with * and ?`);
  }
  return patterns;
}

function patternRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.*?-]/g, (c) => (c === '*' ? '[A-Za-z0-9_.-]*' : c === '?' ? '[A-Za-z0-9_.-]' : `\\${c}`));
  return new RegExp(`^${body}$`);
}

export function keyMatchesStore(key: Pick<KeyRecord, 'stores'>, storeId: string): boolean {
  return key.stores.some((p) => patternRegExp(p).test(storeId));
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function info(record: KeyRecord): KeyInfo {
  const { hash: _hash, ...rest } = record;
  return rest;
}

async function readFile(root: string): Promise<KeyFile> {
  let text: string;
  try {
    text = await fs.promises.readFile(keysFile(root), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: [] };
    throw error;
  }
  const parsed = JSON.parse(text) as KeyFile;
  if (parsed?.version !== 1 || !Array.isArray(parsed.keys)) throw new KeyError(`${keysFile(root)} is not a memgit key file (version 1)`);
  return parsed;
}

/** Read-modify-write of the key file under a lock, written to a temporary file and renamed into place. */
async function updateFile<T>(root: string, change: (file: KeyFile) => T): Promise<T> {
  const dir = path.dirname(keysFile(root));
  await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
  const release = await lockfile.lock(dir, { lockfilePath: path.join(dir, 'keys.lock'), retries: { retries: 50, minTimeout: 20, maxTimeout: 200 } });
  try {
    const file = await readFile(root);
    const result = change(file);
    const temp = `${keysFile(root)}.${process.pid}.tmp`;
    const handle = await fs.promises.open(temp, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temp, keysFile(root));
    return result;
  } finally {
    await release();
  }
}

export interface CreateKeyOptions {
  stores: string[];
  scope: Scope;
  create?: boolean;
  note?: string;
  /** Writes with this key need review (docs/review.md): `flagged` or `all`; `off`/absent: the store's policy. */
  review?: 'off' | 'flagged' | 'all';
}

/** Make a key; the returned `key` is the only copy of the secret. */
export async function createKey(root: string, options: CreateKeyOptions): Promise<{ key: string; info: KeyInfo }> {
  if (!isScope(options.scope)) throw new KeyError(`scope must be one of ${SCOPES.join(', ')}, got ${JSON.stringify(options.scope)}`);
  const stores = options.stores.flatMap((s) => parseStorePatterns(s));
  if (stores.length === 0) throw new KeyError('a key needs at least one store pattern');
  const note = options.note ?? null;
  if (note !== null && (note.length > MAX_NOTE || /[\u0000-\u001f\u007f]/.test(note))) throw new KeyError(`a note is one line of at most ${MAX_NOTE} characters`);
  if (options.review !== undefined && !['off', 'flagged', 'all'].includes(options.review)) {
    throw new KeyError(`review must be one of off, flagged, all, got ${JSON.stringify(String(options.review)).slice(0, 40)}`);
  }
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const record: KeyRecord = {
    id,
    hash: hashSecret(secret),
    stores,
    scope: options.scope,
    create: options.create ?? options.scope !== 'read',
    created: new Date().toISOString(),
    revoked: null,
    note,
    ...(options.review === 'flagged' || options.review === 'all' ? { review: options.review } : {}),
  };
  await updateFile(root, (file) => file.keys.push(record));
  return { key: `mgk_${id}_${secret}`, info: info(record) };
}

export async function listKeys(root: string): Promise<KeyInfo[]> {
  return (await readFile(root)).keys.map(info);
}

/** Revoke a key by id; true when it was live. */
export async function revokeKey(root: string, id: string): Promise<boolean> {
  return updateFile(root, (file) => {
    const record = file.keys.find((k) => k.id === id);
    if (!record) throw new KeyError(`no key with id ${JSON.stringify(id.slice(0, 40))}`);
    if (record.revoked) return false;
    record.revoked = new Date().toISOString();
    return true;
  });
}

/**
 * The server's view of the keys: re-reads the file when it changed (so `memgit keys revoke` takes effect
 * on a running server at its next request) and checks presented keys in constant time.
 */
export class KeyRing {
  private byId = new Map<string, KeyRecord>();
  private stamp = '';

  constructor(readonly root: string) {}

  async authenticate(presented: string | null | undefined): Promise<KeyInfo | null> {
    await this.reloadIfChanged();
    const match = KEY_PATTERN.exec(presented ?? '');
    // Hash even when there is no such key, so timing does not tell ids apart.
    const given = Buffer.from(hashSecret(match ? match[2] : ''), 'hex');
    const record = match ? this.byId.get(match[1]) : undefined;
    const expected = Buffer.from(record?.hash ?? '0'.repeat(64), 'hex');
    const same = timingSafeEqual(given, expected);
    if (!record || !same || record.revoked) return null;
    return info(record);
  }

  /** Whether key `id` exists and is not revoked, as the key file says now (for sessions held open by a key). */
  async isLive(id: string): Promise<boolean> {
    await this.reloadIfChanged();
    const record = this.byId.get(id);
    return record !== undefined && !record.revoked;
  }

  private async reloadIfChanged(): Promise<void> {
    const stat = await fs.promises.lstat(keysFile(this.root)).catch(() => null);
    const stamp = stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}:${stat.uid}` : 'none';
    if (stamp === this.stamp) return;
    // A key file another local user could have written is not read at all (every request fails closed).
    if (stat?.isSymbolicLink()) throw new UnsafeRootError(`the key file ${keysFile(this.root)} is a symbolic link; no key is accepted until it is a real file`);
    const problem = stat ? trustProblem(keysFile(this.root), stat, 'the key file') : null;
    if (problem) throw new UnsafeRootError(`${problem}; no key is accepted until then`);
    const file = await readFile(this.root);
    this.byId = new Map(file.keys.map((k) => [k.id, k]));
    this.stamp = stamp;
  }
}
