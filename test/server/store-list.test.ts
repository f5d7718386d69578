/**
 * Issue 25, item 1, in process: the store list at `/` over the real CLI composition of the audit UI, with a
 * store whose queue is full (the registry's own queue, held by a call in flight). The list must answer,
 * show that store as unavailable and other stores as usual, and no promise may be left to reject unseen.
 */
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as path from 'node:path';
import pino from 'pino';
import { storeUi } from '../../src/compose/store-ui';
import { createServerApp } from '../../src/server/app';
import { Authorizer } from '../../src/server/auth';
import { createKey, KeyRing } from '../../src/tenancy/keys';
import { StoreRegistry } from '../../src/tenancy/registry';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';
import { checkResponsesAgainstOpenApi } from '../support/openapi-contract';

checkResponsesAgainstOpenApi();

const tempDir = useTempDir();

test('a store whose queue is full is listed as unavailable; the page and the other stores are served', async () => {
  const root = path.join(tempDir(), 'root');
  fs.mkdirSync(root, { mode: 0o700 });
  const reader = await createKey(root, { stores: ['acme-*'], scope: 'read' });
  const registry = new StoreRegistry({ root, maxQueue: 1, storeOptions: QUIET });
  const unseen: unknown[] = [];
  const onRejection = (reason: unknown) => unseen.push(reason);
  process.on('unhandledRejection', onRejection);
  const app = createServerApp({
    registry,
    authorizer: new Authorizer(new KeyRing(root)),
    logger: pino({ level: 'silent' }),
    ui: storeUi('an-operator-token-that-is-long-enough-1234', ['127.0.0.1']),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  try {
    for (const id of ['acme-busy', 'acme-calm']) {
      await registry.use(id, { create: true }, (store) => store.execute(toolUse(`toolu_${id}`, { command: 'create', path: '/memories/a.md', file_text: 'a' }), { session: 's' }));
    }
    const held = registry.use('acme-busy', { create: false }, () => gate);
    const answer = await fetch(`${url}/`, {
      headers: { authorization: `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}` },
      signal: AbortSignal.timeout(20_000),
    });
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).toMatch(/<span class="path">acme-busy<\/span>\s*<\/td>\s*<td colspan="6"><strong class="warn-inline">unavailable<\/strong>: busy/);
    expect(html).toContain('href="/stores/acme-calm/"');
    release();
    await held;
    const again = await (await fetch(`${url}/`, { headers: { authorization: `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}` } })).text();
    expect(again).toContain('href="/stores/acme-busy/"');
    // Give any dropped promise a turn to reject.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unseen).toEqual([]);
  } finally {
    release();
    process.off('unhandledRejection', onRejection);
    await new Promise((resolve) => server.close(resolve));
    await registry.close();
  }
});
