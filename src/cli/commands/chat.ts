import * as readline from 'node:readline';
import { Command } from 'commander';
import { isValidId } from '../../contract/paths';
import { newSessionId } from '../../store';
import { formatContextEvent, formatMemoryCall } from '../../terminal/calls';
import { forTerminal } from '../../terminal/escape';
import { fail, openStore, positiveInteger, repoOption, resolveRepo, usage } from '../options';
import type { ChatOpenOptions, CliServices, Conversation } from '../services';

interface ChatOptions {
  repo?: string;
  session?: string;
  model?: string;
  system?: string;
  maxTokens: number;
  contextEditing?: boolean;
  compaction?: boolean;
  compactionTrigger?: number;
  compactionInstructions?: string;
  stream: boolean;
}

export const MISSING_KEY_MESSAGE =
  'no API key: set ANTHROPIC_API_KEY to talk to Claude (create one at https://console.anthropic.com/settings/keys). ' +
  'To see memgit at work without a key, run `npm start` (or `memgit demo`), or chat with a scripted stand-in: `memgit sandbox`.';

export function registerChat(program: Command, services: CliServices): void {
  const defaults = services.chat.defaults;
  program
    .command('chat')
    .summary('talk to Claude with the store as its memory')
    .description(
      'Talk to Claude through the official SDK\'s tool runner, with memgit as the\n' +
        'memory tool: every change Claude makes to /memories is one commit of the store.\n' +
        'Claude\'s text streams to stdout; each memory call, and each context clear or\n' +
        'compaction summary the API reports, is one line on stderr.\n' +
        'With PROMPT, runs that one turn to the end; without it, a conversation\n' +
        '(one message per line; /exit or Ctrl-D ends it).\n\n' +
        'Environment: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL, MEMGIT_MODEL.\n' +
        'No API key? `memgit sandbox` serves a scripted stand-in for Claude on 127.0.0.1\n' +
        'and prints the ANTHROPIC_BASE_URL to set (any ANTHROPIC_API_KEY value works).',
    )
    .argument('[prompt...]', 'the message to send (omit for an interactive conversation)')
    .addOption(repoOption())
    .option('--session <id>', 'session id recorded on every commit; reuse one to continue it (default: a new sess_… id)')
    .option('--model <model>', `model id (default: $MEMGIT_MODEL or ${defaults.model})`)
    .option('--system <text>', 'system prompt')
    .option('--max-tokens <n>', 'largest reply, in tokens', positiveInteger, defaults.maxTokens)
    .option('--context-editing', 'clear old tool results as the context grows (memory calls are kept); beta context-management-2025-06-27')
    .option(
      '--compaction',
      'let the API summarise older context once the prompt grows (server-side compaction); beta compact-2026-01-12',
    )
    .option('--compaction-trigger <tokens>', `compact once the prompt reaches this many input tokens (API default 150000, at least ${defaults.minCompactionTrigger}); needs --compaction`, positiveInteger)
    .option('--compaction-instructions <text>', 'your instructions for the summary (sent as the edit\'s "instructions"); needs --compaction')
    .option('--no-stream', 'wait for each whole reply instead of streaming it')
    .action(async (promptWords: string[], options: ChatOptions) => {
      const compaction = compactionOptions(options, defaults.minCompactionTrigger);
      if (!process.env.ANTHROPIC_API_KEY && !process.env.ANTHROPIC_AUTH_TOKEN) fail(MISSING_KEY_MESSAGE);
      const session = options.session ?? newSessionId();
      if (!isValidId(session)) usage(`invalid --session ${JSON.stringify(session)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
      const model = options.model || process.env.MEMGIT_MODEL || defaults.model;
      const store = await openStore(options.repo);
      let writes = 0;
      const chat = services.chat.open({
        store,
        session,
        model,
        system: options.system,
        maxTokens: options.maxTokens,
        contextEditing: options.contextEditing,
        compaction,
        stream: options.stream,
        // Claude's text as it is, unless it goes to a terminal, which hostile escape sequences could drive.
        onText: (text) => process.stdout.write(process.stdout.isTTY ? forTerminal(text) : text),
        onMemoryCall: (call) => {
          if (call.commit) writes += 1;
          process.stderr.write(`${formatMemoryCall(call)}\n`);
        },
        onContextEvent: (event) => process.stderr.write(`${formatContextEvent(event)}\n`),
      });
      process.stderr.write(
        `memgit: session ${session} (continue it with --session ${session}), model ${model}, store ${resolveRepo(options.repo)}\n`,
      );
      try {
        const prompt = promptWords.join(' ').trim();
        if (prompt) await chat.send(prompt);
        else await converse(chat);
      } catch (error) {
        const message = chat.describeError(error);
        if (message === null) throw error;
        await store.close();
        const kept = writes > 0 ? ` (the ${writes} memory write${writes === 1 ? '' : 's'} made before it ${writes === 1 ? 'is' : 'are'} committed)` : '';
        fail(`${message}${kept}`);
      }
      await store.close();
    });
}

/** --compaction and its two settings, checked before anything is sent or opened. */
function compactionOptions(options: ChatOptions, minTrigger: number): ChatOpenOptions['compaction'] {
  const { compactionTrigger: trigger, compactionInstructions: instructions } = options;
  if (!options.compaction) {
    if (trigger !== undefined) fail('--compaction-trigger needs --compaction');
    if (instructions !== undefined) fail('--compaction-instructions needs --compaction');
    return undefined;
  }
  if (trigger !== undefined && trigger < minTrigger) {
    fail(`--compaction-trigger must be at least ${minTrigger} input tokens (the API's minimum), got ${trigger}`);
  }
  if (instructions !== undefined && !instructions.trim()) fail('--compaction-instructions is empty');
  return { ...(trigger !== undefined ? { trigger } : {}), ...(instructions !== undefined ? { instructions } : {}) };
}

/** The interactive mode: one user turn per line, until /exit or the end of input. */
async function converse(chat: Conversation): Promise<void> {
  const interactive = Boolean(process.stdin.isTTY);
  const lines = readline.createInterface({ input: process.stdin, output: interactive ? process.stderr : undefined, terminal: interactive });
  if (interactive) process.stderr.write('Type a message and press Enter; /exit or Ctrl-D ends the conversation.\n');
  const prompt = () => interactive && lines.prompt();
  lines.setPrompt('you> ');
  // In a terminal readline turns Ctrl-C into an event (and would only pause); end the program as usual.
  lines.on('SIGINT', () => {
    process.stderr.write('\n');
    process.exit(130);
  });
  prompt();
  try {
    for await (const line of lines) {
      const text = line.trim();
      if (text === '/exit') break;
      if (text) await chat.send(text);
      prompt();
    }
  } finally {
    lines.close();
  }
}
