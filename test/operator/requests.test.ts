/**
 * The operator's requests (src/operator): what the UI's rollback and redaction routes and the server's
 * rollback API run, on a real store. Refusals are coded errors the edges map; the secret of a redaction
 * never shows in a refusal.
 */
import * as path from 'node:path';
import { InvalidRequestError, UnknownActionError } from '../../src/operator/errors';
import { parseRedactionRequest, runRedaction } from '../../src/operator/redaction';
import { parseRollbackAction, readReason, rollbackRequest, STALE_REQUEST_MESSAGE } from '../../src/operator/rollback';
import { newOperatorToken, tokenProblem } from '../../src/operator/token';
import { CommitNotFoundError, StaleHeadError } from '../../src/store/errors';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, QUIET, toolUse, useTempDir } from '../store/git-helpers';

const dir = useTempDir();
let store: MemoryStore;

beforeEach(async () => {
  store = await MemoryStore.open(path.join(dir(), 'store'), QUIET);
  await store.execute(toolUse('toolu_o1', { command: 'create', path: '/memories/a.md', file_text: 'one\nsk-secret-value-123\n' }), { session: 'sess_o' });
  await store.execute(toolUse('toolu_o2', { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'ONE' }), { session: 'sess_o' });
});

afterEach(async () => store.close());

it('parses an action from its kind and fields, refusing with codes', () => {
  expect(parseRollbackAction('restore', { path: '/memories/a.md', at: 'toolu_o1' })).toEqual({ kind: 'restore', path: '/memories/a.md', at: 'toolu_o1' });
  expect(() => parseRollbackAction('explode', {})).toThrow(UnknownActionError);
  expect(() => parseRollbackAction('revert', {})).toThrow(expect.objectContaining({ code: 'invalid_request', message: 'ref is required' }));
  expect(() => parseRollbackAction('revert', { ref: 'x'.repeat(3000) })).toThrow(InvalidRequestError);
  expect(() => readReason(7)).toThrow(expect.objectContaining({ code: 'invalid_request', message: 'reason must be text' }));
  expect(readReason('  why\nnot  ')).toBe('why not');
});

it('previews, commits (naming the requester), and refuses a moved expectHead with its own message', async () => {
  const head = store.history.head!.commit;
  const preview = await rollbackRequest(store, 'revert', { ref: 'toolu_o2', dryRun: true }, { operator: 'key:abc' });
  expect([preview.status, preview.truncated, gitReport(store.dir).commits.length]).toEqual(['preview', false, 3]);
  const stale = await rollbackRequest(store, 'revert', { ref: 'toolu_o2', expectHead: '0'.repeat(40) }, { operator: 'key:abc' }).catch((e: unknown) => e);
  expect(stale).toBeInstanceOf(StaleHeadError);
  expect([(stale as StaleHeadError).code, (stale as StaleHeadError).detail]).toEqual(['stale_head', STALE_REQUEST_MESSAGE]);
  const done = await rollbackRequest(store, 'revert', { ref: 'toolu_o2', reason: 'test', expectHead: head }, { operator: 'key:abc', key: 'abc' });
  expect(done.status).toBe('committed');
  const trailers = gitReport(store.dir).commits.at(-1)!.trailers;
  expect(trailers).toContain('Memory-Actor: operator:key:abc\n');
  expect(trailers).toContain('Memory-Key: abc\n');
  await expect(rollbackRequest(store, 'revert', { ref: 'toolu_nope' }, { operator: 'x' })).rejects.toBeInstanceOf(CommitNotFoundError);
});

it('a redaction refused by the store names its secret instead of quoting it', async () => {
  const request = parseRedactionRequest({ kind: 'text', text: 'sk-secret-value-123\nmore', reason: 'leak' });
  const refused = await runRedaction(store, request, 'dana', { dryRun: true }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(InvalidRequestError);
  expect((refused as Error).message).not.toContain('sk-secret-value-123');
  const fine = await runRedaction(store, parseRedactionRequest({ kind: 'text', text: 'sk-secret-value-123', reason: 'leak' }), 'dana', { dryRun: true });
  expect(fine.blobsRedacted).toBeGreaterThan(0);
  expect(() => parseRedactionRequest({ kind: 'text', text: 'x' })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
});

it('makes operator tokens strong enough and refuses weak ones', () => {
  expect(tokenProblem(newOperatorToken())).toBeNull();
  expect(tokenProblem('aaaaaaaaaaaaaaaaaaaa')).toMatch(/too easy to guess/);
  expect(tokenProblem('short')).toMatch(/at least 16 characters/);
});
