// What an agent remembered, and when: every session of a store on a memgit server, with the calls that
// wrote its memory, read with memgit's typed client (createMemgitClient; its types come from the server's
// OpenAPI document, docs/openapi.json).
//
//   MEMGIT_KEY=<a key with scope read> node examples/node/read-history.mjs [store] [file]
//
// MEMGIT_URL is the server (default http://127.0.0.1:8080). With a file (a path below /memories), its
// lines follow, each with the call that wrote it.
import { createMemgitClient, MemgitClientError } from 'memgit';

const [storeId = 'acme-1', file] = process.argv.slice(2);
const memgit = createMemgitClient({ url: process.env.MEMGIT_URL ?? 'http://127.0.0.1:8080', key: process.env.MEMGIT_KEY ?? '' });
const store = memgit.store(storeId);

try {
  for (const session of await store.sessions()) {
    console.log(`session ${session.id}: ${session.calls} commit${session.calls === 1 ? "" : "s"}, ${session.first} .. ${session.last}`);
    const { rows } = await store.commits({ session: session.id });
    for (const row of rows.reverse()) {
      console.log(`  ${row.toolUseId} ${row.command} ${row.paths.join(' ')} (+${row.added} -${row.removed}) ${row.commit.slice(0, 10)}`);
    }
  }
  if (file) {
    const page = await store.file(file);
    console.log(`${page.path} at ${page.at.commit.slice(0, 10)}:`);
    for (const line of page.lines) console.log(`  ${page.origins[line.origin]?.toolUseId ?? '(operator)'}\t${line.no}\t${line.text}`);
  }
} catch (error) {
  // The server's refusals carry a stable code: unauthorized, store_not_found, not_found, ...
  if (!(error instanceof MemgitClientError)) throw error;
  console.error(`read-history: ${error.serverCode ?? 'unreachable'}: ${error.message}`);
  process.exitCode = 1;
}
