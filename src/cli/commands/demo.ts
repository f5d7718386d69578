import * as net from 'node:net';
import * as path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MemoryStore } from '../../store';
import { formatContextEvent, formatMemoryCall } from '../../terminal/calls';
import { toLine } from './log';
import { fail } from '../options';
import type { CliServices } from '../services';
import { listenFailure, serveUntilStopped } from './serve';
import { historyContext } from '../../history/context';
import { queryLog } from '../../history/log';
import { historySummary } from '../../history/summary';

interface DemoOptions {
  dir: string;
  port: number;
  host: string;
  serve: boolean;
  review?: 'off' | 'flagged' | 'all';
}

export function registerDemo(program: Command, services: CliServices): void {
  program
    .command('demo')
    .summary('build a demo store from recorded conversations and serve the audit UI (no API key)')
    .description(
      'Build a fresh demo store by replaying a bundled, recorded transcript (a support\n' +
        'assistant getting to know one customer over three sessions) through a local\n' +
        'scripted Messages API server and the SDK\'s tool runner, the same path as\n' +
        '`memgit chat`; then serve the audit UI on it. No API key, no network.\n' +
        'In the third session a pasted ticket plants a false "fact" in memory:\n' +
        'find it, and roll it back.',
    )
    .option('--dir <dir>', 'where to build the demo store (rebuilt on every run)', services.demo.defaultDir)
    .option('--port <n>', 'port of the audit UI (0 picks a free one)', parsePort, 3000)
    .option('--host <host>', 'interface the audit UI binds to', '127.0.0.1')
    .option('--no-serve', 'build the store, print how to look at it, and exit')
    .addOption(new Option('--review <policy>', 'the store\'s review policy during the replay: with flagged, the planted "fact" waits for review (docs/review.md)').choices(['off', 'flagged', 'all']))
    .action(async (options: DemoOptions) => {
      const out = (line = '') => process.stdout.write(`${line}\n`);
      const dir = path.resolve(options.dir);
      // Before anything is rebuilt: the port must be free (a busy port used to fail only after the rebuild
      // had replaced the store a running demo was serving), and no other process may hold the store.
      if (options.serve) await assertCanListen(options.host, options.port);
      const release = await services.demo.lockDir(dir);
      try {
        await buildAndServe(dir, options, out, services);
      } finally {
        await release(); // once the server is registered as the store's holder (or the demo is done)
      }
    });
}

async function buildAndServe(
  dir: string,
  options: DemoOptions,
  out: (line?: string) => void,
  services: CliServices,
): Promise<void> {
  const { injectedSession: INJECTED_SESSION, injectedToolUseId: INJECTED_TOOL_USE_ID, compactedSession: COMPACTED_SESSION } = services.demo.story;
  out(`memgit demo: building a fresh demo store in ${dir}`);
  out('Replaying 3 recorded support conversations through the SDK tool runner (scripted server: no API key, no network).');
  const built = await services.demo.build(dir, {
    locked: true,
    review: options.review,
    onSession: (session) => out(`\n${session.id}  ${session.speaker}`),
    onMemoryCall: (call) => out(`  ${formatMemoryCall(call)}`),
    onContextEvent: (event) => out(`  ${formatContextEvent(event)}`),
  });
  const store = await MemoryStore.open(dir);
  const ctx = historyContext(store);
  // The store's commits are counted as everywhere (memgit log, memgit status, the UI's overview): all of
  // them, the store's first commit included.
  out(
    `\nBuilt in ${(built.millis / 1000).toFixed(1)} s: ${historySummary(ctx).commits} commits in ${built.sessions.length} sessions ` +
      `(${built.commits} written by the agent's memory calls, after the store's first commit).\n`,
  );
  out(`$ memgit log --repo ${displayPath(dir)}`);
  out((await queryLog(ctx, {})).map((row) => toLine(row.entry)).join('\n'));
  const cli = selfCommand();
  // The review policy's held session (--review flagged), not the dream's review (below).
  const pending = (await store.reviews()).filter((r) => r.state === 'pending' && r.dream === undefined);
  if (pending.length > 0) {
    out(
      `\nIn session ${INJECTED_SESSION} a pasted helpdesk ticket told the assistant to remember that Acme's refunds\n` +
        `are pre-approved without verification (tool_use ${INJECTED_TOOL_USE_ID}). The store's review policy held it:\n` +
        `it and the session's later writes wait on review ${pending.map((r) => r.id).join(', ')}, and no other session sees them.\n` +
        `  look at it:    ${cli} review show ${pending[0].id} --repo ${displayPath(dir)}\n` +
        `  decide:        ${cli} review approve ${pending[0].id} --calls <the good calls> --repo ${displayPath(dir)}  (the rest is rejected)\n` +
        `                 ${cli} review reject ${pending[0].id} --repo ${displayPath(dir)}`,
    );
  } else out(
    `\nIn session ${INJECTED_SESSION} a pasted helpdesk ticket told the assistant to remember that Acme's refunds\n` +
      `are pre-approved without verification, and it did: tool_use ${INJECTED_TOOL_USE_ID}.\n` +
      `  see it:        ${cli} show ${INJECTED_TOOL_USE_ID} --repo ${displayPath(dir)}\n` +
      `  roll it back:  ${cli} revert ${INJECTED_TOOL_USE_ID} --repo ${displayPath(dir)} --dry-run  (later good writes stay)`,
  );
  out(
    `In session ${COMPACTED_SESSION} the API cleared old tool results and summarised the context (server-side\n` +
      `compaction): the session page shows the summary between the calls, as what the assistant knew from then on.`,
  );
  const dreamReview = built.dream?.outputs[0];
  if (built.dream && dreamReview) {
    out(
      `A dream (${built.dream.id}, scripted) then read the three sessions and tidied the memory on its own branch,\n` +
        `main untouched: it dropped the planted refund terms and linked the setup to the webhook playbook. Its result\n` +
        `waits as review ${dreamReview.review_id} (${dreamReview.files_touched.length} files; the UI's Dreams page shows both):\n` +
        `  look at it:    ${cli} review show ${dreamReview.review_id} --repo ${displayPath(dir)}\n` +
        `  decide:        ${cli} review approve ${dreamReview.review_id} --repo ${displayPath(dir)}  (or review reject)`,
    );
  }
  if (!options.serve) {
    await store.close();
    return;
  }
  out();
  await serveUntilStopped(store, { ...options, command: 'memgit demo' }, services.storeUi);
}

/** Listen on the port once and let it go: refuses a busy port (or a host that cannot be bound) up front. */
async function assertCanListen(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => {
    probe.once('error', (error: NodeJS.ErrnoException) => fail(`${listenFailure(host, port, error)}; nothing was rebuilt`));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected a port number (0-65535)');
  return port;
}

/** How to run memgit again the way it was run now: the installed `memgit`, or `node <script>` from a clone. */
function selfCommand(): string {
  const script = process.argv[1] ?? 'memgit';
  if (path.basename(script) === 'memgit') return 'memgit';
  return `node ${displayPath(script)}`;
}

function displayPath(target: string): string {
  const relative = path.relative(process.cwd(), target);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : target;
}
