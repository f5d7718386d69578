/**
 * The read model's records say where a held call stands (issue 27): call records carry `review`
 * (held → approved with its commit on main, or rejected), an approved commit's record carries its review,
 * approver and original; an approved call is one call record, not two; both conform to the schema.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listCalls } from '../../src/history/calls';
import { commitRecord } from '../../src/history/records';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir } from '../store/git-helpers';

const schema = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../docs/records.schema.json'), 'utf8')) as { $defs: Record<string, { required: string[]; properties: Record<string, unknown> }> };

function conforms(record: object, def: string): void {
  const { required, properties } = schema.$defs[def];
  expect(Object.keys(record).sort()).toEqual([...required].sort());
  for (const key of Object.keys(record)) expect(key in properties).toBe(true);
}

const call = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use', id, name: 'memory', input });

it('call and commit records carry review: held, approved (one record, with its commit on main), rejected', async () => {
  const dir = makeTempDir('memgit-review-records-');
  const store = await MemoryStore.open(dir, { log: () => undefined });
  try {
    await store.execute(call('toolu_0', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's0' });
    await store.setReviewPolicy({ review: 'all' });
    const a = await store.executeWithReport(call('toolu_a', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }), { session: 's1' });
    const r = await store.executeWithReport(call('toolu_r', { command: 'create', path: '/memories/c.md', file_text: 'c\n' }), { session: 's2' });
    await store.execute(call('toolu_v', { command: 'view', path: '/memories' }), { session: 's1' });

    let calls = await listCalls(store);
    const byId = (id: string) => calls.filter((c) => c.id === id);
    expect(byId('toolu_a').map((c) => c.review)).toEqual([{ id: a.review!.id, state: 'held', approvedAs: null }]);
    expect(byId('toolu_0')[0].review).toBeNull();
    expect(byId('toolu_v')[0].review).toBeNull();

    const { commits } = await store.approveReview(a.review!.id, { operator: 'alice' });
    await store.rejectReview(r.review!.id, { operator: 'bob' });
    calls = await listCalls(store);
    expect(byId('toolu_a').map((c) => c.review)).toEqual([{ id: a.review!.id, state: 'approved', approvedAs: commits[0] }]);
    expect(byId('toolu_r').map((c) => c.review)).toEqual([{ id: r.review!.id, state: 'rejected', approvedAs: null }]);
    for (const c of calls) conforms(c, 'call');

    const approved = commitRecord(store.history.head!);
    expect(approved).toMatchObject({ toolUseId: 'toolu_a', session: 's1', review: { id: a.review!.id, approvedBy: 'alice', original: a.commit } });
    conforms(approved, 'commit');
    expect(commitRecord(store.history.at(1)!).review).toBeNull();
  } finally {
    await store.close();
    removeDir(dir);
  }
});
