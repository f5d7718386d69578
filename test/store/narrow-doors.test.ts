/**
 * The narrow doors the store gives its edges instead of its parts (issue 26): the redaction audit log
 * (`store.redactionLog()`, where the UI, the CLI and the read model used to take the redaction port, which
 * can rewrite history) and the personal-data setting of flags (`store.setPersonalDataFlagging()`, where
 * `memgit flags --personal-data` used to write git config and reset the flag index itself). Each answers
 * what the parts answer.
 */
import { execFileSync } from 'node:child_process';
import { historyContext } from '../../src/history/context';
import { flaggedCallCount, flaggedCalls, flagOfCommit } from '../../src/history/flags';
import { listRedactions } from '../../src/store/redaction';
import { MemoryStore } from '../../src/store';
import { makeTempDir, removeDir } from './git-helpers';

const QUIET = { log: () => undefined };
const SECRET = 'payout-account-7d41c9';
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function create(id: string, path: string, text: string) {
  return { type: 'tool_use', id, name: 'memory', input: { command: 'create', path, file_text: text } };
}

test('redactionLog() reads the audit log the redaction port reads, and verifies an erasure', async () => {
  const dir = makeTempDir();
  dirs.push(dir);
  const store = await MemoryStore.open(dir, { ...QUIET, flags: false });
  try {
    await store.execute(create('toolu_door_1', '/memories/a.md', `the account is ${SECRET}\n`), { session: 'sess_door' });
    await store.execute(create('toolu_door_2', '/memories/b.md', 'nothing to hide\n'), { session: 'sess_door' });
    const before = await store.resolve('toolu_door_2');
    expect(await store.redactionLog().records()).toEqual([]);
    expect(await store.redactionLog().ids()).toEqual([]);

    const outcome = await store.redact({ text: SECRET, reason: 'leaked account', operator: 'dana' });
    const log = store.redactionLog();
    const records = await log.records();
    expect(records).toEqual(await listRedactions(store.redaction()));
    expect(records.map((r) => r.id)).toEqual([outcome.id]);
    expect(await log.ids()).toEqual([outcome.id]);

    // A commit named by its id from before the redaction: the commit that replaced it, and by which redaction.
    const after = await store.resolve(before.commit);
    expect(after.commit).not.toBe(before.commit);
    expect(await log.rewrittenFrom(before.commit, after.commit)).toEqual({ old: before.commit, redaction: outcome.id });
    expect(await log.rewrittenFrom(after.commit, after.commit)).toBeNull();

    const report = await log.verify(outcome.id, { text: SECRET });
    expect(report).toMatchObject({ redaction: outcome.id, matchConfirmed: true, objectsWithText: [], filesWithText: [] });
    expect(report.objectsScanned).toBeGreaterThan(0);
  } finally {
    await store.close();
  }
});

test('setPersonalDataFlagging() keeps the setting in the store and scans every call again', async () => {
  const dir = makeTempDir();
  dirs.push(dir);
  const first = await MemoryStore.open(dir, QUIET);
  let commit: string;
  try {
    await first.execute(create('toolu_door_mail', '/memories/c.md', 'write to dana.smith@mail.example.com\n'), { session: 'sess_door' });
    commit = (await first.resolve('toolu_door_mail')).commit;
    const ctx = historyContext(first);
    expect(await flaggedCalls(ctx, { complete: true })).toEqual([]); // personal data is opt-in

    await first.setPersonalDataFlagging(true);
    const flagged = await flaggedCalls(ctx, { complete: true });
    expect(flagged.map((r) => [r.toolUseId, r.findings.map((f) => f.rule)])).toEqual([['toolu_door_mail', ['email']]]);
    expect(flagOfCommit(ctx, commit)?.findings[0].masked).toBe('dan************om (27 chars)');
    expect(flaggedCallCount(ctx)).toBe(1);
    expect(execFileSync('git', ['-C', dir, 'config', 'memgit.flagpersonaldata'], { encoding: 'utf8' }).trim()).toBe('true');
  } finally {
    await first.close();
  }

  // The setting outlives the process; turning it off rescans without personal data.
  const second = await MemoryStore.open(dir, QUIET);
  try {
    const ctx = historyContext(second);
    expect((await flaggedCalls(ctx, { complete: true })).map((r) => r.commit)).toEqual([commit]);
    await second.setPersonalDataFlagging(false);
    expect(await flaggedCalls(ctx, { complete: true })).toEqual([]);
    expect(execFileSync('git', ['-C', dir, 'config', 'memgit.flagpersonaldata'], { encoding: 'utf8' }).trim()).toBe('false');
  } finally {
    await second.close();
  }
});
