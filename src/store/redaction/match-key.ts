import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import type { DurableFs } from '../durable-fs';
import { targetKind, type RedactionTarget } from './matcher';

/**
 * The secret that keys the hash of what a redaction matched. The audit record replicates to every clone
 * and replica; an unkeyed hash there would let anyone holding a copy confirm a guess ("was the erased
 * value +1 555 0100?") offline. Keyed with a secret that stays in this store's `.git/memgit/` (never on a
 * ref, so never pushed or cloned), only the store itself can check a value against its records.
 *
 * A copy without the secret (a clone, a store restored from a replica after the disk was lost) cannot
 * check the records made before: it can still search for a value (`verify-redaction` scans every object),
 * but not confirm that it is the value the record names. Keep a copy of the file with the store's other
 * secrets if that matters.
 */
export const MATCH_KEY_FILE = path.join('memgit', 'redaction-key');

/** How `matched` is written: the record schema of each. */
export const KEYED_PREFIX = 'hmac-sha256:';
const LEGACY_PREFIX = 'sha256:';

export interface MatchKey {
  secret: Buffer;
  /** Names the secret in a record (a hash of it, which tells nothing about the values it keys). */
  id: string;
}

function keyFrom(hex: string): MatchKey | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const secret = Buffer.from(hex, 'hex');
  return { secret, id: createHash('sha256').update('memgit redaction key\0').update(secret).digest('hex').slice(0, 16) };
}

/** This store's key, or null when it has none (never made one, or a copy made without it). */
export function readMatchKey(gitdir: string): MatchKey | null {
  let text: string;
  try {
    text = nodeFs.readFileSync(path.join(gitdir, MATCH_KEY_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const key = keyFrom(text.trim());
  if (!key) throw new Error(`${path.join(gitdir, MATCH_KEY_FILE)} is not a redaction key (64 hex digits)`);
  return key;
}

/**
 * This store's key, made on first need (mode 0600, durable before it returns). Call it under the
 * store's write lock, as a redaction runs, so that two writers never make two keys.
 */
export async function matchKey(gitdir: string, durableFs: DurableFs): Promise<MatchKey> {
  const existing = readMatchKey(gitdir);
  if (existing) return existing;
  const hex = randomBytes(32).toString('hex');
  const file = path.join(gitdir, MATCH_KEY_FILE);
  await nodeFs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await durableFs.writeFile(file, `${hex}\n`, { mode: 0o600 });
  await durableFs.flush();
  return keyFrom(hex)!;
}

function message(target: RedactionTarget): string {
  const kind = targetKind(target);
  return `${kind}\0${String(target[kind])}`;
}

/** What a record keeps of what it matched: an HMAC-SHA256 of the kind and the value under the store's key. */
export function keyedMatchHash(target: RedactionTarget, key: MatchKey): string {
  return `${KEYED_PREFIX}${createHmac('sha256', key.secret).update(message(target)).digest('hex')}`;
}

/**
 * Whether `target` is what a record matched. 'yes' / 'no', or 'unknown' when this store cannot tell: the
 * record is keyed with a secret it does not hold. Records written before keyed hashes (`sha256:`) are
 * checked as they were written.
 */
export function checkMatch(record: { matched: string; matchedKey?: string | null }, target: RedactionTarget, key: MatchKey | null): 'yes' | 'no' | 'unknown' {
  let expected: string;
  if (record.matched.startsWith(LEGACY_PREFIX)) {
    expected = `${LEGACY_PREFIX}${createHash('sha256').update(message(target)).digest('hex')}`;
  } else if (record.matched.startsWith(KEYED_PREFIX)) {
    if (!key || (record.matchedKey && record.matchedKey !== key.id)) return 'unknown';
    expected = keyedMatchHash(target, key);
  } else {
    return 'unknown';
  }
  const a = Buffer.from(expected);
  const b = Buffer.from(record.matched);
  return a.length === b.length && timingSafeEqual(a, b) ? 'yes' : 'no';
}
