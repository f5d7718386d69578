import { Command } from 'commander';
import type { DreamRecord } from '../../store';
import { forTerminal, logField } from '../../terminal/escape';
import { EXIT_ERROR, fail, openStore, positiveInteger, repoOption, withStore } from '../options';
import { MISSING_KEY_MESSAGE } from './chat';

/**
 * `memgit dream`: Claude consolidates the store's memory on a branch (docs/dreams.md), and the result waits
 * as a review. `memgit dream list|show|cancel` read and cancel dreams. The runner is src/dream (below the
 * edges); the SDK's client is made here, from the environment, as `memgit chat`'s is.
 */

interface DreamOptions {
  repo?: string;
  session?: string[];
  instructions?: string;
  model?: string;
  maxTurns?: number;
  json?: boolean;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

function dreamLine(d: DreamRecord): string {
  const sessions = d.inputs.reduce((n, i) => n + i.session_ids.length, 0);
  const review = d.outputs[0] ? `  review ${d.outputs[0].review_id} (${d.outputs[0].files_touched.length} file(s))` : '';
  const error = d.error ? `  ${logField(d.error.type, 40)}: ${logField(d.error.message, 200)}` : '';
  return `${d.id}  ${d.status.padEnd(9)}  ${d.created_at}  ${sessions} session(s)  ${logField(d.model, 60)}  in ${d.usage.input_tokens} out ${d.usage.output_tokens}${review}${error}\n`;
}

function detailText(d: DreamRecord): string {
  const lines = [
    dreamLine(d).trimEnd(),
    `  branch ${d.memgit.branch}  forked from ${d.memgit.fork.slice(0, 12)}  ${d.memgit.turns} turn(s)${d.ended_at ? `  ended ${d.ended_at}` : ''}`,
    `  sessions: ${d.inputs.flatMap((i) => i.session_ids).map((s) => logField(s, 80)).join(', ') || '(none)'}`,
    `  usage: input ${d.usage.input_tokens}, output ${d.usage.output_tokens}, cache creation ${d.usage.cache_creation_input_tokens}, cache read ${d.usage.cache_read_input_tokens}`,
  ];
  if (d.instructions) lines.push(`  instructions: ${logField(d.instructions, 4096)}`);
  for (const o of d.outputs) lines.push(`  review ${o.review_id} on ${o.branch}: ${o.files_touched.map((f) => logField(f)).join(', ')}`, `    memgit review show ${o.review_id}`);
  return `${lines.join('\n')}\n`;
}

export function registerDream(program: Command): void {
  const dream = program
    .command('dream')
    .summary('Claude consolidates the memory on a branch; the result waits for review')
    .description(
      'Start a dream: Claude reads the store\'s past sessions (session_list, session_read) and rewrites the\n' +
        'memory on a branch of its own, refs/heads/dream/<id> (each call a commit with a Memory-Dream trailer):\n' +
        'duplicates merged, contradictions resolved toward the latest evidence, stale notes dropped. Main does\n' +
        'not change: the completed dream\'s branch is a review (memgit review show|approve|reject). One dream\n' +
        'at a time per store. Ctrl-C cancels at the next turn. Without --session: the sessions since the last\n' +
        'completed dream (at most 100, the most recent). See docs/dreams.md.\n\n' +
        'Environment: ANTHROPIC_API_KEY (required), ANTHROPIC_BASE_URL, MEMGIT_MODEL.\n\n' +
        'Examples:\n  memgit dream --session sess_a --session sess_b --instructions "prefer the newest"\n' +
        '  memgit dream list\n  memgit dream show drm_0123456789abcdef01234567\n  memgit dream cancel drm_0123456789abcdef01234567',
    )
    .addOption(repoOption())
    .option('--session <id>', 'a session to read (repeat for more)', collect)
    .option('--instructions <text>', 'your instructions for the dream (at most 4,096 characters)')
    .option('--model <model>', 'model id (default: $MEMGIT_MODEL or claude-sonnet-4-5)')
    .option('--max-turns <n>', 'budget of turns (requests); over it the dream fails', positiveInteger)
    .option('--json', 'print the dream object (Anthropic\'s shape) when it ends')
    .action(async (options: DreamOptions) => {
      if (!process.env.ANTHROPIC_API_KEY && !process.env.ANTHROPIC_AUTH_TOKEN) fail(MISSING_KEY_MESSAGE);
      // Loaded on use: every other command starts without the Anthropic SDK.
      const { default: Anthropic } = require('@anthropic-ai/sdk') as typeof import('@anthropic-ai/sdk');
      const { startDream, DEFAULT_DREAM_MODEL } = require('../../dream') as typeof import('../../dream');
      const store = await openStore(options.repo, { create: false });
      try {
        const client = new Anthropic();
        const progress = (text: string) => process.stderr.write(`${forTerminal(text)}\n`);
        const { dream: started, done } = await startDream(store, client, {
          sessions: options.session,
          instructions: options.instructions ?? null,
          model: options.model || process.env.MEMGIT_MODEL || DEFAULT_DREAM_MODEL,
          maxTurns: options.maxTurns,
          onTurn: (d) => progress(`turn ${d.memgit.turns}: ${d.usage.input_tokens} input, ${d.usage.output_tokens} output tokens so far`),
          onMemoryCall: (c) => progress(`  memory ${c.command ?? '-'} ${c.path ?? ''} (${c.id})${c.ok ? '' : ' failed'}`),
        });
        progress(`dream ${started.id} on ${started.memgit.branch}: ${started.inputs[0]?.session_ids.length ?? 0} session(s) (Ctrl-C cancels)`);
        const onSigint = () => {
          progress('canceling at the next turn…');
          store.cancelDream(started.id);
        };
        process.on('SIGINT', onSigint);
        let ended: DreamRecord;
        try {
          ended = await done;
        } finally {
          process.off('SIGINT', onSigint);
        }
        if (options.json) process.stdout.write(`${JSON.stringify(ended)}\n`);
        else process.stdout.write(detailText(ended));
        if (ended.status !== 'completed') process.exitCode = EXIT_ERROR;
      } finally {
        await store.close();
      }
    });

  // `memgit dream list --repo DIR --json`: the dream command's own --repo and --json may take those flags first.
  const parentOptions = () => {
    const { repo, json } = dream.opts<DreamOptions>();
    return { ...(repo !== undefined ? { repo } : {}), ...(json !== undefined ? { json } : {}) };
  };

  dream
    .command('list')
    .description('every dream of the store, newest first (a dream whose process was killed shows failed, "interrupted")')
    .addOption(repoOption())
    .option('--json', 'one dream object per line')
    .action(async (own: { repo?: string; json?: boolean }) => {
      const options = { ...parentOptions(), ...own };
      await withStore(options.repo, async (store) => {
        for (const d of store.dreams()) process.stdout.write(options.json ? `${JSON.stringify(d)}\n` : dreamLine(d));
      });
    });

  dream
    .command('show')
    .description('one dream: status, inputs, instructions, usage, its review')
    .argument('<id>', 'the dream id (drm_...)')
    .addOption(repoOption())
    .option('--json', 'the dream object')
    .action(async (id: string, own: { repo?: string; json?: boolean }) => {
      const options = { ...parentOptions(), ...own };
      await withStore(options.repo, async (store) => {
        const d = store.dream(id);
        process.stdout.write(options.json ? `${JSON.stringify(d)}\n` : detailText(d));
      });
    });

  dream
    .command('cancel')
    .description('stop a pending or running dream at its next turn (its branch is kept)')
    .argument('<id>', 'the dream id (drm_...)')
    .addOption(repoOption())
    .option('--json', 'the dream object')
    .action(async (id: string, own: { repo?: string; json?: boolean }) => {
      const options = { ...parentOptions(), ...own };
      await withStore(options.repo, async (store) => {
        const d = store.cancelDream(id);
        const live = d.status === 'pending' || d.status === 'running';
        process.stdout.write(options.json ? `${JSON.stringify(d)}\n` : live ? `cancel asked for ${d.id}: it stops at its next turn\n` : `${d.id} already ${d.status}; nothing changed\n`);
      });
    });
}
