import { Command, Option } from 'commander';
import { isValidId } from '../../contract/paths';
import { fail, openStore, repoOption } from '../options';
import type { CliServices } from '../services';

export function registerMcp(program: Command, services: CliServices): void {
  program
    .command('mcp')
    .summary('serve the memory tool to an MCP client (Claude Code, Claude Desktop) over stdio')
    .description(
      "Run an MCP server on stdin/stdout offering one tool, `memory` (the memory tool's six commands on " +
        '/memories), and the memory files as read-only memory:// resources. Every write is one commit whose ' +
        'first line is the call\'s id (mcp_<time>_<random>) and whose trailers name the session (one per ' +
        'process), `Memory-Client: mcp` and the client\'s name and version. The store is created on first ' +
        'use. stdout carries only the protocol; messages go to stderr.',
    )
    .addOption(repoOption())
    .option('--session <id>', 'session id recorded on every commit (default: a new sess_… id per process)')
    .addOption(new Option('--create-mode <mode>', 'what create does to an existing file').choices(['overwrite', 'error']).default('overwrite'))
    .option('--no-resources', 'do not offer the memory files as memory:// resources')
    .addHelpText(
      'after',
      '\nClaude Code (absolute paths):\n' +
        '  claude mcp add memgit -- node /path/to/memgit/dist/src/cli/main.js mcp --repo /path/to/store\n' +
        'Claude Desktop: see docs/mcp.md.',
    )
    .action(async (options: { repo?: string; session?: string; createMode: 'overwrite' | 'error'; resources: boolean }) => {
      if (options.session !== undefined && !isValidId(options.session)) {
        fail(`invalid --session ${JSON.stringify(options.session)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
      }
      const store = await openStore(options.repo, { createMode: options.createMode });
      const running = await services.mcp.serve(store, { session: options.session, resources: options.resources });
      process.stderr.write(`memgit: MCP server on stdio for ${store.dir}, session ${running.session}\n`);
      const stop = async () => {
        await running.close();
        await store.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void stop());
      process.once('SIGTERM', () => void stop());
      await running.closed;
      await store.close();
      process.exit(0);
    });
}
