/**
 * The audit UI of memgit server shares one template environment between stores (issue 25, item 7: memory
 * does not grow with the stores a key opens), while route modules set globals from the store's state (a
 * read-only clone offers no rollback or redaction). A writable store and a read-only one served side by
 * side, opened in either order, must each show their own actions, and each page names its own store.
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
import { git } from '../rollback/helpers';
import { QUIET, toolUse, useTempDir } from '../store/git-helpers';
import { checkResponsesAgainstOpenApi } from '../support/openapi-contract';

checkResponsesAgainstOpenApi();

const tempDir = useTempDir();

test('a writable and a read-only store under one server each show their own actions', async () => {
  const root = path.join(tempDir(), 'root');
  fs.mkdirSync(root, { mode: 0o700 });
  const reader = await createKey(root, { stores: ['acme-*'], scope: 'read' });
  const registry = new StoreRegistry({ root, storeOptions: QUIET });
  const commits: Record<string, string> = {};
  for (const id of ['acme-ro', 'acme-rw']) {
    await registry.use(id, { create: true }, async (store) => {
      await store.execute(toolUse(`toolu_${id}_1`, { command: 'create', path: '/memories/a.md', file_text: 'one\n' }), { session: 's' });
      const report = await store.executeWithReport(toolUse(`toolu_${id}_2`, { command: 'create', path: '/memories/b.md', file_text: 'two\n' }), { session: 's' });
      commits[id] = report.commit!;
    });
  }
  // Closed and marked read-only, as `memgit clone` marks a clone; the registry opens it again as such.
  await registry.close();
  git(path.join(root, 'acme-ro'), 'config', 'memgit.readonly', 'true');
  const open = new StoreRegistry({ root, storeOptions: QUIET });
  const app = createServerApp({
    registry: open,
    authorizer: new Authorizer(new KeyRing(root)),
    logger: pino({ level: 'silent' }),
    ui: storeUi('an-operator-token-that-is-long-enough-1234', ['127.0.0.1']),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const page = async (id: string) => {
    const answer = await fetch(`${url}/stores/${id}/commits/${commits[id]}`, {
      headers: { authorization: `Basic ${Buffer.from(`me:${reader.key}`).toString('base64')}` },
      signal: AbortSignal.timeout(20_000),
    });
    expect(answer.status).toBe(200);
    return answer.text();
  };
  try {
    for (const order of [['acme-ro', 'acme-rw'], ['acme-rw', 'acme-ro']]) {
      for (const id of order) {
        const html = await page(id);
        expect(html).toContain(id);
        if (id === 'acme-ro') {
          expect(html).not.toMatch(/Revert this|Redact what this call wrote/);
          expect(html).toMatch(/read-only clone: rollbacks and redaction are not offered here/);
        } else {
          expect(html).toMatch(/Revert this call/);
          expect(html).toMatch(/Redact what this call wrote/);
          expect(html).not.toMatch(/read-only clone: rollbacks and redaction are not offered here/);
        }
      }
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await open.close();
  }
});
