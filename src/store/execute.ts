import { runCommand } from '../contract';
import { newIdProblem } from '../contract/ids';
import { isValidId } from '../contract/paths';
import type { CommandOutcome, ContractOptions, TreeEdit } from '../contract/types';
import { clientTrailers, CommitMeta, KEY_ID_PATTERN } from './commit-message';
import { InvalidToolUseError, ReadOnlyStoreError, SessionKeyError } from './errors';
import { classifyFault, describeError, faultText, isApiMisuse } from './fault';
import { toRepoPath } from './git-reader';
import type { HistoryEntry, HistoryIndex } from './history-index';
import { asMemoryToolUse, isRecord, toolResult } from './sdk-tool';
import type { ObjectStore } from './objects';
import { branchRef, reviewId, type ReviewGate, type ReviewPolicy } from './review';
import type { TreeCache } from './tree-cache';
import { TreeDraft } from './tree-draft';
import type { ExecuteContext, ExecuteOptions, ExecutionReport } from './types';
import type { WriteProtocol } from './write-protocol';

/**
 * One memory call, from its tool_use block to its report: the block, ids and key checked; a `view`
 * answered from HEAD in order with the writes; any other command run by the contract against HEAD and,
 * when it edits the memory, written as one commit through the write protocol; a tool_use id already
 * committed recognised as a retry and answered without writing. Failures after which nothing was applied
 * become the fixed texts the model gets (fault.ts); misuse of the API (a bad block, a closed or read-only
 * store, a foreign key) throws.
 */

export interface CallParts {
  objects: ObjectStore;
  history: HistoryIndex;
  trees: TreeCache;
  protocol: WriteProtocol;
  /** Review before trust: where a session's writes go, and whether a new write is held (src/store/review). */
  review: ReviewGate;
  contractOptions: ContractOptions;
  /** A clone made by `memgit clone` for auditing: every write is refused. */
  readOnly: () => boolean;
  log: (message: string) => void;
}

export class CallExecutor {
  constructor(private readonly parts: CallParts) {}

  async execute(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions): Promise<ExecutionReport> {
    const { protocol, trees, contractOptions } = this.parts;
    const block = asMemoryToolUse(toolUse);
    const id = block.id;
    const fail = (content: string): ExecutionReport => ({
      result: { type: 'tool_result', tool_use_id: typeof id === 'string' ? id : '', content, is_error: true },
      outcome: null,
    });
    if (!isValidId(id)) return fail(`Error: Invalid tool_use id ${JSON.stringify(id)}`);
    // Ids that could be read as a commit id, or of only dots, would shadow commits in every lookup.
    const idProblem = newIdProblem(id);
    if (idProblem) return fail(`Error: Invalid tool_use id ${JSON.stringify(id)}: ${idProblem}`);
    if (!isValidId(context?.session)) return fail(`Error: Invalid session id ${JSON.stringify(context?.session)}`);
    const sessionProblem = newIdProblem(context.session);
    if (sessionProblem) return fail(`Error: Invalid session id ${JSON.stringify(context.session)}: ${sessionProblem}`);
    if (context.key !== undefined && !(typeof context.key === 'string' && KEY_ID_PATTERN.test(context.key))) {
      throw new InvalidToolUseError(`invalid key id ${JSON.stringify(context.key)}`);
    }
    const input = block.input;
    const command = isRecord(input) ? input.command : undefined;
    if (command !== 'view' && this.parts.readOnly()) throw new ReadOnlyStoreError();
    try {
      if (command === 'view') {
        return await protocol.read(async (): Promise<ExecutionReport> => {
          const head = await protocol.refreshHead();
          this.assertSessionKey(context);
          // Read-your-writes: a session with held writes reads its review branch; every other reads main.
          // A dream's calls read its branch (src/store/dream).
          const pending = context.dream === undefined ? this.parts.review.pendingBranch(context.session) : null;
          // Held content is the session's own: another key may neither read nor extend its branch.
          if (pending && context.key !== undefined && (await this.parts.review.keyOf(pending.tip)) !== context.key) throw new SessionKeyError(context.session);
          const at = context.dream !== undefined ? this.dreamTip(context.dream) : (pending?.tip ?? head);
          const outcome = await runCommand(input, trees.readerAt(await trees.commitTree(at)), contractOptions);
          return { result: toolResult(id, outcome), outcome, readAt: at };
        });
      }
      return await protocol.run(() => this.mutate(id, context, input), { acknowledgeEarly: !options.settle });
    } catch (error) {
      if (isApiMisuse(error)) throw error;
      // Reached only by calls that were not applied: once a commit is durable, later failures are
      // repaired instead of reported (see write-protocol.ts). The model gets a fixed text without paths.
      this.parts.log(`${typeof command === 'string' ? command.slice(0, 20) : 'memory'} call ${id} was not applied: ${describeError(error)}`);
      return fail(faultText(classifyFault(error)));
    }
  }

  private dreamTip(dream: string): string {
    const tip = this.parts.review.dreamTip(dream);
    if (!tip) throw new Error(`the branch of dream ${dream} is gone (its review was decided)`);
    return tip;
  }

  /** A call with a key may add to its own sessions only (checked under the write lock for writes). */
  private assertSessionKey(context: ExecuteContext): void {
    if (context.key === undefined) return;
    const first = this.parts.history.firstOfSession(context.session);
    if (first && first.key !== context.key) throw new SessionKeyError(context.session);
  }

  private async mutate(id: string, context: ExecuteContext, input: unknown): Promise<ExecutionReport> {
    const { protocol, trees, objects, history, contractOptions, review } = this.parts;
    const head = await protocol.refreshHead();
    this.assertSessionKey(context);
    const previous = history.byToolUseId(id);
    if (previous) return this.replay(id, previous, input);
    // A dream writes on its own branch; a session with held writes keeps writing on its review branch
    // (what it reads stays consistent). Held content is the session's own: another key may not extend it.
    const branch = context.dream !== undefined ? await review.dreamBranchForWrite(context.dream, id) : await review.branchForWrite(context.session, id);
    if (context.dream !== undefined && !branch) throw new Error(`the branch of dream ${context.dream} is gone (its review was decided)`);
    if (context.dream === undefined && branch && context.key !== undefined && (await review.keyOf(branch.tip)) !== context.key) throw new SessionKeyError(context.session);
    if (branch?.previous) return { ...(await this.replay(id, branch.previous, input)), review: { id: branch.id, state: 'pending' } };
    const base = branch?.tip ?? head;
    const baseTree = await trees.commitTree(base);
    const reader = trees.readerAt(baseTree);
    const outcome = await runCommand(input, reader, contractOptions);
    if (outcome.isError || !outcome.edits) return { result: toolResult(id, outcome), outcome, readAt: base };
    let target = branch ? { ref: branch.ref, id: branch.id } : null;
    if (!target) {
      // Detection decides before the commit picks its branch: a held write forks a review branch from main.
      const held = await review.holds(stricter(review.policy(), context.review), outcome, reader);
      if (held) target = { ref: branchRef(context.session), id: reviewId(context.session, head) };
    }
    const edits = outcome.edits;
    const { commits } = await protocol.commit(
      base,
      async () => {
        const draft = new TreeDraft(objects, baseTree);
        await applyEdits(draft, edits);
        const newTree = await draft.write();
        const meta: CommitMeta = {
          title: id,
          command: outcome.command,
          path: outcome.path,
          newPath: outcome.newPath,
          session: context.session,
          ...clientTrailers(context.client),
          ...(context.key !== undefined ? { key: context.key } : {}),
          ...(context.dream !== undefined ? { dream: context.dream } : {}),
        };
        return { chain: [{ tree: newTree, meta }], value: null };
      },
      target ? { ref: target.ref } : {},
    );
    return { result: toolResult(id, outcome), outcome, commit: commits[0], readAt: base, ...(target ? { review: { id: target.id, state: 'pending' as const } } : {}) };
  }

  /**
   * A tool_use id that is already committed: a client retrying after a crash. Nothing is written; the
   * result is recomputed by running the same input against the memory as it was before that commit.
   */
  private async replay(id: string, previous: HistoryEntry, input: unknown): Promise<ExecutionReport> {
    const { trees, contractOptions } = this.parts;
    const before = previous.parent ? await trees.commitTree(previous.parent) : null;
    const outcome = before ? await runCommand(input, trees.readerAt(before), contractOptions) : null;
    if (!outcome || outcome.isError || !(await this.isSameCall(previous, outcome))) {
      const content = `Error: tool_use id ${id} was already used by an earlier ${previous.command ?? 'memory'} call with different input`;
      return { result: { type: 'tool_result', tool_use_id: id, content, is_error: true }, outcome, commit: previous.commit, replayed: true };
    }
    return { result: toolResult(id, outcome), outcome, commit: previous.commit, replayed: true };
  }

  /**
   * Is the recomputed outcome the call that made `previous`? Same command and paths, and every file it
   * writes holds the committed bytes. Otherwise a reused id with other input would be acknowledged
   * although nothing of it was written.
   */
  private async isSameCall(previous: HistoryEntry, outcome: CommandOutcome): Promise<boolean> {
    const { trees, objects } = this.parts;
    if (outcome.command !== previous.command || outcome.path !== previous.path || outcome.newPath !== previous.newPath) {
      return false;
    }
    const committedTree = await trees.commitTree(previous.commit);
    for (const edit of outcome.edits ?? []) {
      if (edit.op !== 'write') continue;
      const entry = await objects.entryAt(committedTree, toRepoPath(edit.path));
      if (entry?.oid !== (await objects.hashBlob(Buffer.from(edit.content, 'utf8')))) return false;
    }
    return true;
  }
}

/** The stricter of the store's policy and the caller's (a key that always needs review). */
function stricter(policy: ReviewPolicy, caller: ExecuteContext['review']): ReviewPolicy {
  const rank = { off: 0, flagged: 1, all: 2 } as const;
  return caller !== undefined && rank[caller] > rank[policy.review] ? { ...policy, review: caller } : policy;
}

async function applyEdits(draft: TreeDraft, edits: TreeEdit[]): Promise<void> {
  for (const edit of edits) {
    switch (edit.op) {
      case 'write':
        await draft.writeFile(toRepoPath(edit.path), Buffer.from(edit.content, 'utf8'));
        break;
      case 'delete':
        await draft.remove(toRepoPath(edit.path));
        break;
      case 'move':
        await draft.move(toRepoPath(edit.from), toRepoPath(edit.to));
        break;
    }
  }
}
