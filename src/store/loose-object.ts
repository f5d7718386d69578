import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/**
 * Git's loose object format, encoded here with node:crypto and node:zlib: the header `type size\0`, the
 * content, its SHA-1 as the object id, and zlib deflate for the file. isomorphic-git hashes through
 * WebCrypto and deflates through a CompressionStream, a stream per object, which was most of the cost of
 * a durable call; these objects are handed to isomorphic-git's writeObject({ format: 'deflated' }) (so it
 * decides where they go) and read back through it. Only loose objects: packs, pack indexes and the index
 * file are isomorphic-git's alone. Tests check every such object with `git fsck --full --strict`.
 */

export type LooseType = 'blob' | 'tree' | 'commit';

export interface EncodedObject {
  oid: string;
  /** The whole loose object file: deflated header + content. */
  deflated: Buffer;
}

/** Level 1: a loose object lives until the next gc repacks it, so speed matters more than size here. */
const DEFLATE_LEVEL = 1;

export function encodeLoose(type: LooseType, content: Uint8Array): EncodedObject {
  const header = Buffer.from(`${type} ${content.byteLength}\0`, 'latin1');
  const oid = createHash('sha1').update(header).update(content).digest('hex');
  const deflated = deflateSync(Buffer.concat([header, content]), { level: DEFLATE_LEVEL });
  return { oid, deflated };
}

/** The id a blob has, without writing it. */
export function blobOid(content: Uint8Array): string {
  return createHash('sha1').update(`blob ${content.byteLength}\0`, 'latin1').update(content).digest('hex');
}

export interface TreeItem {
  mode: string;
  path: string;
  oid: string;
  type: 'blob' | 'tree' | 'commit';
}

/**
 * A tree's content: entries ordered as git orders them (by name bytes, a directory as if its name ended
 * in `/`), each `mode name\0` plus the 20-byte id; directory mode is written `40000`.
 */
export function treeContent(entries: readonly TreeItem[]): Buffer {
  for (const entry of entries) assertSafeName(entry.path);
  const keyed = entries.map((entry) => ({ entry, key: Buffer.from(entry.type === 'tree' ? `${entry.path}/` : entry.path, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  for (let k = 1; k < keyed.length; k++) {
    if (keyed[k].entry.path === keyed[k - 1].entry.path) throw new Error(`duplicate tree entry ${JSON.stringify(keyed[k].entry.path)}`);
  }
  const parts: Buffer[] = [];
  for (const { entry } of keyed) {
    if (!/^[0-9a-f]{40}$/.test(entry.oid)) throw new Error(`bad object id in tree entry ${JSON.stringify(entry.path)}`);
    const mode = entry.type === 'tree' ? '40000' : entry.mode.replace(/^0+/, '');
    if (!/^(100644|100755|120000|160000|40000)$/.test(mode)) throw new Error(`bad mode ${entry.mode} for ${JSON.stringify(entry.path)}`);
    parts.push(Buffer.from(`${mode} ${entry.path}\0`, 'utf8'), Buffer.from(entry.oid, 'hex'));
  }
  return Buffer.concat(parts);
}

/** Names git (and isomorphic-git) refuse in a tree: separators, `.`/`..`, `.git` and its aliases. */
function assertSafeName(name: string): void {
  const folded = name.toLowerCase().replace(/[. ]+$/, '');
  if (
    name === '' ||
    name === '.' ||
    name === '..' ||
    name.includes('/') ||
    name.includes('\\') ||
    name.includes('\0') ||
    folded === '.git' ||
    /^\.?git~[1-9]$/.test(folded)
  ) {
    throw new Error(`unsafe tree entry name ${JSON.stringify(name)}`);
  }
}

export interface Person {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /** Minutes, with the sign of JavaScript's getTimezoneOffset (UTC+2 is -120), as isomorphic-git takes it. */
  timezoneOffset: number;
}

export interface CommitFields {
  tree: string;
  parent: string[];
  author: Person;
  committer: Person;
  message: string;
}

/** A commit's content, byte for byte what isomorphic-git's writeCommit renders for the same fields. */
export function commitContent(commit: CommitFields): Buffer {
  const oidPattern = /^[0-9a-f]{40}$/;
  if (!oidPattern.test(commit.tree) || !commit.parent.every((p) => oidPattern.test(p))) throw new Error('bad object id in commit');
  let headers = `tree ${commit.tree}\n`;
  for (const parent of commit.parent) headers += `parent ${parent}\n`;
  headers += `author ${person(commit.author)}\ncommitter ${person(commit.committer)}\n`;
  return Buffer.from(`${headers}\n${normalizeMessage(commit.message)}`, 'utf8');
}

function person(p: Person): string {
  for (const text of [p.name, p.email]) {
    if (/[<>\n\0]/.test(text)) throw new Error(`unsafe author or committer ${JSON.stringify(text)}`);
  }
  if (!Number.isSafeInteger(p.timestamp)) throw new Error('bad commit timestamp');
  return `${p.name} <${p.email}> ${p.timestamp} ${timezone(p.timezoneOffset)}`;
}

function timezone(minutes: number): string {
  const negated = minutes === 0 ? minutes : -minutes;
  const sign = Math.sign(negated) || (Object.is(negated, -0) ? -1 : 1);
  const abs = Math.abs(minutes);
  const hours = String(Math.floor(abs / 60)).padStart(2, '0');
  const rest = String(abs % 60).padStart(2, '0');
  return `${sign === -1 ? '-' : '+'}${hours}${rest}`;
}

/** As isomorphic-git does: no carriage returns, no leading blank lines, exactly one final newline. */
function normalizeMessage(message: string): string {
  return message.replace(/\r/g, '').replace(/^\n+/, '').replace(/\n+$/, '') + '\n';
}
