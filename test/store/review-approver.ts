/**
 * The process review-crash.test.ts kills: opens a store, says so on stdout, approves one review and says
 * so again. Usage: node dist/test/store/review-approver.js <repo> <review id>
 */
import * as fs from 'node:fs';
import { MemoryStore } from '../../src/store/memory-store';

async function main(): Promise<void> {
  const [repo, id] = process.argv.slice(2);
  const store = await MemoryStore.open(repo, { replicate: false, log: (m) => process.stderr.write(`memgit: ${m}\n`) });
  fs.writeSync(1, 'opened\n');
  const { commits } = await store.approveReview(id, { operator: 'crash-test' });
  fs.writeSync(1, `approved ${commits.length}\n`);
  await store.close();
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
