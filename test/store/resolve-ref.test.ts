import { AmbiguousRefError, CommitNotFoundError } from '../../src/store/errors';
import type { MemoryStore } from '../../src/store/memory-store';
import { call, create, dispose, git, newStore, replace } from '../rollback/helpers';
import { forgeCall } from '../web/hostile-stores';
import { MemoryStore as Store } from '../../src/store/memory-store';

/** Ids that spell commit ids: refused for new calls, and never guessed at in lookups of older stores. */

let store: MemoryStore;
let victim: string;

beforeAll(async () => {
  store = await newStore();
  await call(store, 'toolu_01', create('/memories/a.md', 'one\n'));
  victim = await call(store, 'toolu_victim', replace('/memories/a.md', 'one', 'two'));
});

afterAll(async () => dispose(store));

it('refuses new tool_use and session ids that read as commit ids or are only dots, writing nothing', async () => {
  const head = git(store.dir, 'rev-parse', 'HEAD');
  for (const id of [victim, victim.slice(0, 12), 'beef', '..']) {
    const result = await store.execute({ type: 'tool_use', id, name: 'memory', input: create('/memories/x.md', 'x') }, { session: 'sess_a' });
    expect(result).toMatchObject({ is_error: true, tool_use_id: id });
    expect(result.content).toMatch(new RegExp(`^Error: Invalid tool_use id "${id.replace(/\./g, '\\.')}": `));
  }
  for (const session of ['.', 'cafe1234']) {
    const result = await store.execute({ type: 'tool_use', id: 'toolu_fresh', name: 'memory', input: create('/memories/x.md', 'x') }, { session });
    expect(result.content).toMatch(/^Error: Invalid session id .*: /);
  }
  expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
});

describe('an older store with a call whose id spells another commit id', () => {
  let old: MemoryStore;
  let impostor: string;

  beforeAll(async () => {
    await store.close();
    await forgeCall(store.dir, victim, 'sess_old');
    old = await Store.open(store.dir, { fsync: false, log: () => undefined });
    impostor = git(store.dir, 'rev-parse', 'HEAD');
    await forgeCall(store.dir, victim.slice(0, 12), 'sess_old'); // the short form too
    await old.refreshHead();
  });

  afterAll(async () => {
    await old.close();
    store = await Store.open(store.dir, { fsync: false, log: () => undefined });
  });

  it('resolves by kind: a commit id finds the commit, a call id the call', async () => {
    expect((await old.resolve(victim, 'commit')).commit).toBe(victim);
    expect((await old.resolve(victim, 'call')).commit).toBe(impostor);
    expect((await old.resolve(`commit:${victim}`)).commit).toBe(victim);
    expect((await old.resolve(`call:${victim}`)).commit).toBe(impostor);
    expect((await old.resolve('toolu_victim')).commit).toBe(victim);
  });

  it('refuses an ambiguous ref and lists both candidates', async () => {
    for (const ref of [victim, victim.slice(0, 12)]) {
      const error = await old.resolve(ref).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AmbiguousRefError);
      expect(error).toBeInstanceOf(CommitNotFoundError); // callers that only know "not found" still refuse
      const message = (error as Error).message;
      expect(message).toContain(`commit ${victim}`);
      expect(message).toMatch(/call [0-9a-f]+ \(commit [0-9a-f]{12}\)/);
      expect(message).toContain('commit:<id> or call:<tool_use id>');
    }
  });

  it('a revert by an ambiguous ref writes nothing; by commit: it reverts the real call', async () => {
    const head = git(store.dir, 'rev-parse', 'HEAD');
    await expect(old.revert(victim, { operator: 'ci', dryRun: false })).rejects.toBeInstanceOf(AmbiguousRefError);
    expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
    const preview = await old.revert(`commit:${victim}`, { operator: 'ci', dryRun: true });
    expect(preview.title).toBe('revert toolu_victim');
  });
});
