import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';

/**
 * Every object id the repository holds on disk: loose files, and the ids listed in each pack's index
 * (read, never written: the index's table of names, see gitformat-pack). Used to prove that erased
 * content is gone from every object, reachable or not.
 */
export async function allObjectIds(gitdir: string): Promise<string[]> {
  const ids = new Set<string>();
  const objectsDir = path.join(gitdir, 'objects');
  for (const fan of await nodeFs.promises.readdir(objectsDir).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    for (const name of await nodeFs.promises.readdir(path.join(objectsDir, fan)).catch(() => [] as string[])) {
      if (/^[0-9a-f]{38}$/.test(name)) ids.add(fan + name);
    }
  }
  const packDir = path.join(objectsDir, 'pack');
  for (const name of await nodeFs.promises.readdir(packDir).catch(() => [] as string[])) {
    if (!name.endsWith('.idx')) continue;
    const idx = await nodeFs.promises.readFile(path.join(packDir, name));
    if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error(`${name}: not a version 2 pack index`);
    const count = idx.readUInt32BE(8 + 255 * 4);
    const start = 8 + 256 * 4;
    for (let i = 0; i < count; i++) ids.add(idx.subarray(start + i * 20, start + (i + 1) * 20).toString('hex'));
  }
  return [...ids];
}

/** Does any object in the repository (read through isomorphic-git, inflated) contain `needle`? */
export async function objectsContaining(gitdir: string, needle: (content: Buffer) => boolean): Promise<{ scanned: number; found: string[] }> {
  const ids = await allObjectIds(gitdir);
  const cache = {};
  const found: string[] = [];
  for (const oid of ids) {
    const { object } = await git.readObject({ fs: nodeFs, gitdir, oid, format: 'content', cache });
    if (needle(Buffer.from(object as Uint8Array))) found.push(oid);
  }
  return { scanned: ids.length, found };
}

/** Files under `dir` (not following links), skipping git's object store, for a raw byte search. */
export async function plainFiles(dir: string, skip: (full: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await nodeFs.promises.readdir(current, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(current, entry.name);
      if (skip(full)) continue;
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(full);
    }
  };
  await walk(dir);
  return out;
}
