/**
 * A rollback plan under a budget (RollbackOptions.budget, what the audit UI's previews pass): a dry run
 * stops, and says where, when the budget is spent; patches stop at their character budget; a commit is
 * planned in full whatever the budget's time. Budgets here are counted in checks, not in milliseconds,
 * so the stops are the same on any machine.
 */
import type { MemoryStore } from '../../src/store/memory-store';
import type { RollbackBudget } from '../../src/store/rollback';
import { call, create, dispose, git, newStore, OPERATOR, replace } from './helpers';

let store: MemoryStore;

/** A budget whose time is spent after `checks` checks. */
function spentAfter(checks: number, rest: Partial<RollbackBudget> = {}): RollbackBudget & { checked: number } {
  return {
    checked: 0,
    get spent() {
      return ++this.checked > checks;
    },
    ...rest,
  };
}

beforeAll(async () => {
  store = await newStore();
  for (let k = 0; k < 12; k++) await call(store, `toolu_s${k}`, create(`/memories/f${k}.md`, `file ${k}\n${'a line of text\n'.repeat(50)}`), 'sess_long');
  await call(store, 'toolu_other', create('/memories/other.md', 'kept\n'), 'sess_other');
  await call(store, 'toolu_other2', replace('/memories/other.md', 'kept', 'kept, edited'), 'sess_other');
});

afterAll(() => dispose(store));

it('a dry run whose time is spent stops between calls, says how far it got, and writes nothing', async () => {
  const head = git(store.dir, 'rev-parse', 'HEAD');
  const outcome = await store.rollbackSession('sess_long', { ...OPERATOR, dryRun: true, budget: spentAfter(4) });
  expect(outcome).toMatchObject({ status: 'stopped', title: 'rollback-session sess_long', files: [], patch: '', commit: null });
  expect(outcome.stopped).toMatchObject({ reason: 'time', of: 12 });
  expect(outcome.stopped!.planned).toBeGreaterThan(0);
  expect(outcome.stopped!.planned).toBeLessThan(12);
  expect(git(store.dir, 'rev-parse', 'HEAD')).toBe(head);
});

it('a dry run of more calls than the budget allows stops before planning any', async () => {
  const outcome = await store.rollbackSession('sess_long', { ...OPERATOR, dryRun: true, budget: { spent: false, calls: 11 } });
  expect(outcome).toMatchObject({ status: 'stopped', stopped: { reason: 'calls', planned: 0, of: 12 } });
  const within = await store.rollbackSession('sess_long', { ...OPERATOR, dryRun: true, budget: { spent: false, calls: 12 } });
  expect(within.status).toBe('preview');
  expect(within.stopped).toBeNull();
});

it('patches stop at their character budget: the files after are listed without a patch', async () => {
  const outcome = await store.rollbackSession('sess_long', { ...OPERATOR, dryRun: true, budget: { spent: false, patchChars: 2000 } });
  expect(outcome.status).toBe('preview');
  expect(outcome.files).toHaveLength(12);
  const cut = outcome.files.filter((f) => f.cut);
  expect(cut.length).toBeGreaterThan(0);
  expect(cut.every((f) => f.patch === '')).toBe(true);
  expect(outcome.patchCut).toBe(true);
  expect(outcome.patch.length).toBeLessThan(2000 + 1000); // the file that crossed the budget is whole
  // Without a budget, every patch.
  const whole = await store.rollbackSession('sess_long', { ...OPERATOR, dryRun: true });
  expect(whole.files.every((f) => !f.cut && f.patch !== '')).toBe(true);
  expect(whole.patchCut).toBe(false);
});

it('a commit is planned in full whatever the budget says of time', async () => {
  const outcome = await store.rollbackSession('sess_long', { ...OPERATOR, budget: spentAfter(0, { patchChars: 2000 }) });
  expect(outcome.status).toBe('committed');
  expect(outcome.reverts).toHaveLength(12);
  expect(git(store.dir, 'ls-tree', '--name-only', 'HEAD', 'memories/')).not.toContain('f5.md');
  expect(outcome.patchCut).toBe(true);
});
