/**
 * DurableFs's staged writes: a call's objects are created first and fsynced together, in chunks, so that a
 * rewrite staging more objects than the process may hold descriptors (a redaction of a long history)
 * still flushes.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DurableFs } from '../../src/store/durable-fs';
import { useTempDir } from './git-helpers';

const tempDir = useTempDir();

test('a flush of more staged files than the descriptor limit writes every one of them', async () => {
  const limit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  expect(Number.isSafeInteger(limit) && limit > 0).toBe(true);
  const count = Math.min(limit + 500, 100_000);
  const dir = tempDir();
  const durable = new DurableFs({ fsync: false });
  for (let i = 0; i < count; i++) {
    const name = i.toString(16).padStart(6, '0');
    durable.stage(path.join(dir, 'objects', name.slice(0, 2), name.slice(2)), Buffer.from(`object ${i}\n`));
  }
  await durable.flush();
  let found = 0;
  for (const sub of fs.readdirSync(path.join(dir, 'objects'))) found += fs.readdirSync(path.join(dir, 'objects', sub)).length;
  expect(found).toBe(count);
  expect(fs.readFileSync(path.join(dir, 'objects', '00', '0001'), 'utf8')).toBe('object 1\n');
  const last = (count - 1).toString(16).padStart(6, '0');
  expect(fs.readFileSync(path.join(dir, 'objects', last.slice(0, 2), last.slice(2)), 'utf8')).toBe(`object ${count - 1}\n`);
});
