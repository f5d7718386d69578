/** src/tenancy without HTTP: store ids, the registry's LRU and queue bounds, keys and their patterns. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createKey, keyMatchesStore, KeyRing, listKeys, revokeKey, scopeAllows } from '../../src/tenancy/keys';
import { QueueFullError, StoreFullError, StoreIdTakenError, StoreNotFoundError, StoreRegistry } from '../../src/tenancy/registry';
import { StoreQuotaError } from '../../src/tenancy/creators';
import { checkRootSafety, UnsafeRootError } from '../../src/tenancy/root-safety';
import { SessionKeyError } from '../../src/store/errors';
import { InvalidStoreIdError, isValidStoreId, storeDir } from '../../src/tenancy/store-id';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';

const tempDir = useTempDir();

describe('store ids', () => {
  it.each(['a', 'acme-1', 'A.b_c-d', 'x'.repeat(128), '0'])('accepts %j', (id) => expect(isValidStoreId(id)).toBe(true));
  it.each(['', '.', '..', '...', '.git', '-a', '_a', 'a/b', 'a\\b', '/etc', 'a\u0000b', 'x'.repeat(129), 'café', 'a b', '\u202eab', 7, null])(
    'refuses %j',
    (id) => expect(isValidStoreId(id)).toBe(false),
  );

  it('resolves inside the root and refuses a link that leads out of it', async () => {
    const root = path.join(tempDir(), 'root');
    fs.mkdirSync(root);
    expect(await storeDir(root, 'acme-1')).toBe(path.join(fs.realpathSync(root), 'acme-1'));
    fs.symlinkSync(tempDir(), path.join(root, 'escape'));
    await expect(storeDir(root, 'escape')).rejects.toBeInstanceOf(InvalidStoreIdError);
    await expect(storeDir(root, '..')).rejects.toBeInstanceOf(InvalidStoreIdError);
  });
});

describe('the registry', () => {
  it('creates a store on first use only when allowed, keeps at most maxOpen open, and closes idle ones', async () => {
    const registry = new StoreRegistry({ root: tempDir(), maxOpen: 2, storeOptions: QUIET });
    try {
      await expect(registry.use('s1', { create: false }, async () => 1)).rejects.toBeInstanceOf(StoreNotFoundError);
      expect(fs.existsSync(path.join(tempDir(), 's1'))).toBe(false);
      for (const id of ['s1', 's2', 's3', 's4']) {
        await registry.use(id, { create: true }, (store) => store.execute(toolUse(`toolu_${id}`, { command: 'create', path: '/memories/a.md', file_text: id }), { session: 's' }));
      }
      expect(registry.openCount).toBe(2);
      expect(await registry.list()).toEqual(['s1', 's2', 's3', 's4']);
      const summary = await registry.describe('s1');
      expect(summary).toEqual({
        id: 's1',
        calls: 1,
        sessions: 1,
        lastWrite: expect.stringMatching(/Z$/),
        bytes: expect.any(Number),
        head: expect.stringMatching(/^[0-9a-f]{40}$/),
        flagged: 0,
        replicas: { count: 0, stopped: 0, maxLagCommits: 0 },
      });
      // A call that writes a likely secret is flagged (scanned in the background) and counted in the list.
      await registry.use('s1', { create: false }, async (store) => {
        await store.execute(toolUse('toolu_s1_key', { command: 'create', path: '/memories/k.md', file_text: `gh: ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}\n` }), { session: 's' });
        await store.flags.idle();
      });
      expect((await registry.describe('s1')).flagged).toBe(1);
      expect(await registry.exists('s9')).toBe(false);
      expect(await registry.exists('..')).toBe(false);
      registry.closeIdle(Date.now() + 120_000);
      expect(registry.openCount).toBe(0);
      // A closed store opens again on its next use.
      expect(await registry.use('s2', { create: false }, async (store) => store.history.size)).toBe(2);
    } finally {
      await registry.close();
    }
    expect(registry.openCount).toBe(0);
  });

  it('refuses a call beyond maxQueue at once (QueueFullError) and takes calls again once the queue drains', async () => {
    const registry = new StoreRegistry({ root: tempDir(), maxQueue: 2, storeOptions: QUIET });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    try {
      const busy = [registry.use('q', { create: true }, () => gate), registry.use('q', { create: true }, () => gate)];
      await expect(registry.use('q', { create: true }, async () => 1)).rejects.toBeInstanceOf(QueueFullError);
      release();
      await Promise.all(busy);
      await expect(registry.use('q', { create: true }, async () => 2)).resolves.toBe(2);
    } finally {
      await registry.close();
    }
  });
});

describe('tenants (issue 25)', () => {
  const write = (id: string) => async (store: import('../../src/store/memory-store').MemoryStore) =>
    store.execute(toolUse(`toolu_${id.replace(/[^a-z0-9]/gi, '')}_${Math.random().toString(36).slice(2, 8)}`, { command: 'create', path: '/memories/a.md', file_text: id }), { session: 's' });

  it('creates the root owner-only; a root open to others is refused with the fix in the message', async () => {
    const root = path.join(tempDir(), 'fresh');
    const registry = new StoreRegistry({ root, storeOptions: QUIET });
    await registry.close();
    expect(fs.statSync(root).mode & 0o777).toBe(0o700);
    await expect(checkRootSafety(root)).resolves.toBeUndefined();
    fs.chmodSync(root, 0o775);
    await expect(checkRootSafety(root)).rejects.toThrow(UnsafeRootError);
    await expect(checkRootSafety(root)).rejects.toThrow(/chmod go-w/);
  });

  it('a key creates at most maxStoresPerKey stores, also when its creations race; a removed store stops counting', async () => {
    const root = tempDir();
    const registry = new StoreRegistry({ root, maxStoresPerKey: 2, storeOptions: QUIET });
    try {
      const results = await Promise.allSettled(['k1', 'k2', 'k3', 'k4'].map((id) => registry.use(id, { create: true, key: 'key-a' }, write(id))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(StoreQuotaError);
      expect((await registry.list()).length).toBe(2);
      expect(await registry.storesCreatedBy('key-a')).toBe(2);
      await registry.use('b1', { create: true, key: 'key-b' }, write('b1'));
      const [made] = (await registry.list()).filter((id) => id.startsWith('k'));
      expect(await registry.creatorOf(made)).toBe('key-a');
      registry.closeIdle(Date.now() + 3_600_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      fs.rmSync(path.join(root, made), { recursive: true });
      await registry.use('k5', { create: true, key: 'key-a' }, write('k5'));
    } finally {
      await registry.close();
    }
  });

  it('a .git that is a link or a file makes no store; ids that differ by case or end with a dot are not created', async () => {
    const root = tempDir();
    const registry = new StoreRegistry({ root, storeOptions: QUIET });
    try {
      await registry.use('real', { create: true }, write('real'));
      fs.mkdirSync(path.join(root, 'linked'));
      fs.symlinkSync(path.join(root, 'real', '.git'), path.join(root, 'linked', '.git'));
      fs.mkdirSync(path.join(root, 'gitfile'));
      fs.writeFileSync(path.join(root, 'gitfile', '.git'), 'gitdir: ../real/.git\n');
      expect(await registry.list()).toEqual(['real']);
      for (const id of ['linked', 'gitfile']) {
        expect(await registry.exists(id)).toBe(false);
        await expect(registry.use(id, { create: false }, async () => 1)).rejects.toBeInstanceOf(StoreNotFoundError);
        await expect(registry.use(id, { create: true }, async () => 1)).rejects.toThrow(/not a store/);
      }
      await expect(registry.use('REAL', { create: true }, async () => 1)).rejects.toBeInstanceOf(StoreIdTakenError);
      await expect(registry.use('REAL', { create: false }, async () => 1)).rejects.toBeInstanceOf(StoreNotFoundError);
      await expect(registry.use('dotted.', { create: true }, async () => 1)).rejects.toThrow(/end with a dot/);
      expect(fs.readdirSync(root).sort()).toEqual(['gitfile', 'linked', 'real']);
    } finally {
      await registry.close();
    }
  });

  it('assertRoom refuses a store at maxStoreBytes', async () => {
    const registry = new StoreRegistry({ root: tempDir(), maxStoreBytes: 64 * 1024, storeOptions: QUIET });
    try {
      await registry.use('small', { create: true }, async (store) => {
        await registry.assertRoom('small', store);
        await store.execute(toolUse('toolu_room1', { command: 'create', path: '/memories/big.md', file_text: 'x'.repeat(100 * 1024) }), { session: 's' });
      });
      // Far from its bound, a measured size is trusted for a second; then the store is measured again.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await expect(registry.use('small', { create: false }, (store) => registry.assertRoom('small', store))).rejects.toBeInstanceOf(StoreFullError);
    } finally {
      await registry.close();
    }
  });

  it('a call with a key may not add to a session another key (or a local writer) began', async () => {
    const registry = new StoreRegistry({ root: tempDir(), storeOptions: QUIET });
    try {
      await registry.use('sess', { create: true }, async (store) => {
        const run = (id: string, session: string, key?: string) =>
          store.execute(toolUse(id, { command: 'create', path: `/memories/${id}.md`, file_text: 'x' }), { session, ...(key ? { key } : {}) });
        await run('toolu_o1', 'sess_a', 'aaaa');
        await expect(run('toolu_o2', 'sess_a', 'bbbb')).rejects.toBeInstanceOf(SessionKeyError);
        await expect(store.execute(toolUse('toolu_o3', { command: 'view', path: '/memories' }), { session: 'sess_a', key: 'bbbb' })).rejects.toBeInstanceOf(SessionKeyError);
        await run('toolu_o4', 'sess_local');
        await expect(run('toolu_o5', 'sess_local', 'aaaa')).rejects.toBeInstanceOf(SessionKeyError);
        await run('toolu_o6', 'sess_a', 'aaaa');
        await run('toolu_o7', 'sess_a'); // a local writer (no key) is not refused
        expect(store.history.bySession('sess_a').map((e) => e.key ?? null)).toEqual(['aaaa', 'aaaa', null]);
        await expect(store.execute(toolUse('toolu_o8', { command: 'view', path: '/memories' }), { session: 's', key: 'bad key\nMemory-Key: x' })).rejects.toThrow(/invalid key id/);
      });
    } finally {
      await registry.close();
    }
  });
});

describe('keys', () => {
  it('patterns, scopes, revocation; the file holds hashes only', async () => {
    const root = tempDir();
    const made = await createKey(root, { stores: ['acme-*,beta-?'], scope: 'write' });
    expect(keyMatchesStore(made.info, 'acme-1')).toBe(true);
    expect(keyMatchesStore(made.info, 'acme-')).toBe(true);
    expect(keyMatchesStore(made.info, 'beta-1')).toBe(true);
    expect(keyMatchesStore(made.info, 'beta-12')).toBe(false);
    expect(keyMatchesStore(made.info, 'xacme-1')).toBe(false);
    expect(scopeAllows('operator', 'write')).toBe(true);
    expect(scopeAllows('write', 'operator')).toBe(false);
    expect(scopeAllows('read', 'write')).toBe(false);
    const ring = new KeyRing(root);
    expect((await ring.authenticate(made.key))?.id).toBe(made.info.id);
    expect(await ring.authenticate(made.key.slice(0, -1) + (made.key.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(await ring.authenticate('')).toBeNull();
    expect(fs.readFileSync(path.join(root, '.memgit', 'keys.json'), 'utf8')).not.toContain(made.key.split('_').slice(2).join('_'));
    expect(await revokeKey(root, made.info.id)).toBe(true);
    expect(await ring.authenticate(made.key)).toBeNull();
    expect((await listKeys(root))[0].revoked).toEqual(expect.any(String));
    await expect(createKey(root, { stores: ['../x'], scope: 'write' })).rejects.toThrow(/invalid store pattern/);
  });
});
