/**
 * A long seeded random sequence of valid and invalid calls from several sessions, run through a real
 * store and through the in-memory model of the contract (MemoryTree + runCommand + applyEdits). Calls
 * are issued in small concurrent batches, as several sessions would; the store serialises them in call
 * order. The result texts must be identical call by call, and at the end the repository must hold exactly
 * what the model holds, with one correctly described commit per successful mutation.
 */
import { applyEdits, MemoryTree, runCommand } from '../../src/contract';
import type { CommandOutcome, ContractOptions } from '../../src/contract';
import { MemoryStore } from '../../src/store/memory-store';
import {
  ExpectedCommit,
  expectRepository,
  gitReport,
  headFiles,
  makeTempDir,
  MUTATING_COMMANDS,
  normalisedPath,
  removeDir,
  workingTreeFiles,
} from './git-helpers';
import { mulberry32 as seededRandom } from '../support/random';


const SESSIONS = ['sess_alpha', 'sess_beta', 'sess_gamma.2'];
/** A small pool so that calls collide: same files, files under directories, two spellings of one name. */
const NAMES = [
  'a.md',
  'b.txt',
  'notes',
  'notes/x.md',
  'notes/y.md',
  'notes/deep',
  'notes/deep/z.md',
  'proj',
  'proj/plan.md',
  'caf\u00e9.md',
  'cafe\u0301.md',
  '\u65e5\u672c/\u30e1\u30e2.md',
  'a.md/under-a-file.md',
];
const INVALID_PATHS: unknown[] = ['/etc/passwd', '/memories/../x.md', '/memories/.git/config', '/memories/a//b.md', '/memories/x\u202e.md', 42, null];
const WORDS = ['alpha', 'beta', 'gamma', '$&', '$1', 'x', '', '\r', 'caf\u00e9', '\ud83d\ude42', 'tab\there', 'delta delta'];

class Generator {
  private readonly random: () => number;

  constructor(
    seed: number,
    private readonly model: MemoryTree,
  ) {
    this.random = seededRandom(seed);
  }

  private int(n: number): number {
    return Math.floor(this.random() * n);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  private path(): unknown {
    if (this.chance(0.05)) return this.pick(INVALID_PATHS);
    if (this.chance(0.04)) return this.pick(['/memories', '/memories/']);
    const name = this.pick(NAMES);
    return `/memories/${name}${this.chance(0.1) ? '/' : ''}`;
  }

  private text(): string {
    const lines = Array.from({ length: 1 + this.int(5) }, () =>
      Array.from({ length: this.int(4) }, () => this.pick(WORDS)).join(' '),
    );
    return lines.join('\n') + (this.chance(0.3) ? '\n' : '');
  }

  /** Mostly a piece of the file's current content, so that str_replace often succeeds. */
  private async oldStr(path: unknown): Promise<string> {
    const rel = typeof path === 'string' && path.startsWith('/memories/') ? normalisedPath(path).slice('/memories/'.length) : '';
    if (rel && (await this.model.kind(rel)) === 'file' && this.chance(0.8)) {
      const content = await this.model.readText(rel);
      const start = this.int(content.length + 1);
      return content.slice(start, start + 1 + this.int(12));
    }
    return this.pick(WORDS);
  }

  async next(): Promise<unknown> {
    const roll = this.random();
    if (roll < 0.25) {
      return { command: 'create', path: this.path(), file_text: this.chance(0.03) ? 'x'.repeat(3000) : this.text() };
    }
    if (roll < 0.45) {
      const path = this.path();
      const input: Record<string, unknown> = { command: 'str_replace', path, old_str: await this.oldStr(path) };
      if (!this.chance(0.1)) input.new_str = this.text();
      return input;
    }
    if (roll < 0.6) {
      return { command: 'insert', path: this.path(), insert_line: this.int(6) - (this.chance(0.05) ? 3 : 0), insert_text: this.text() };
    }
    if (roll < 0.73) {
      const input: Record<string, unknown> = { command: 'view', path: this.path() };
      if (this.chance(0.3)) input.view_range = [this.int(4), this.pick([-1, 2, 5, -2])];
      return input;
    }
    if (roll < 0.8) return { command: 'delete', path: this.path() };
    if (roll < 0.92) return { command: 'rename', old_path: this.path(), new_path: this.path() };
    // Malformed calls: each must be an error that changes nothing.
    return this.pick<() => unknown>([
      () => ({ command: 'valueOf', path: '/memories/a.md' }),
      () => ({ command: 'create', path: '/memories/a.md' }),
      () => ({ command: 'create', path: '/memories/a.md', file_text: 'lone \ud83d surrogate' }),
      () => ({ command: 'insert', path: '/memories/a.md', insert_line: '1', insert_text: 'x' }),
      () => ({ command: 'str_replace', path: '/memories/a.md', old_str: null }),
      () => ({ path: '/memories/a.md' }),
      () => ['create', '/memories/a.md'],
      () => null,
    ])();
  }
}

interface Run {
  seed: number;
  calls: number;
  options: ContractOptions;
}

const RUNS: Run[] = [
  { seed: 20261202, calls: 400, options: { createMode: 'overwrite', maxFileBytes: 2048 } },
  { seed: 7, calls: 200, options: { createMode: 'error', maxFileBytes: 2048 } },
];

describe.each(RUNS.map((run) => [run.seed, run] as const))('random sequence, seed %i', (_seed, run) => {
  it(`${run.calls} calls give the model's results, files and commits`, async () => {
    const dir = makeTempDir('memgit-random-');
    const store = await MemoryStore.open(dir, { ...run.options, log: () => undefined });
    const model = new MemoryTree();
    const generator = new Generator(run.seed, model);
    const random = seededRandom(run.seed ^ 0x5eed);
    const commits: ExpectedCommit[] = [];
    let successfulMutations = 0;
    let failures = 0;
    try {
      let call = 0;
      while (call < run.calls) {
        // A batch of calls from different sessions is issued at once; the model runs them in call order.
        const batch: Array<{ call: number; id: string; session: string; input: unknown; outcome: CommandOutcome; pending: Promise<unknown> }> = [];
        const size = 1 + Math.floor(random() * 4);
        for (let k = 0; k < size && call < run.calls; k++, call++) {
          const id = `toolu_${run.seed}_${call}`;
          const session = SESSIONS[Math.floor(random() * SESSIONS.length)];
          // The generator reads the model, so the model already includes the earlier calls of the batch.
          const input = await generator.next();
          const pending = store.execute({ type: 'tool_use', id, name: 'memory', input }, { session });
          const outcome = await runCommand(input, model, run.options);
          if (outcome.edits) applyEdits(model, outcome.edits);
          batch.push({ call, id, session, input, outcome, pending });
        }
        const results = await Promise.all(batch.map((b) => b.pending));
        for (const [index, { call: n, id, session, input, outcome }] of batch.entries()) {
          expect({ call: n, input, result: results[index] }).toEqual({
            call: n,
            input,
            result: outcome.isError
              ? { type: 'tool_result', tool_use_id: id, content: outcome.text, is_error: true }
              : { type: 'tool_result', tool_use_id: id, content: outcome.text },
          });
          if (outcome.isError) failures++;
          const record = input as Record<string, string>;
          if (!outcome.isError && MUTATING_COMMANDS.has(record.command)) {
            successfulMutations++;
            commits.push(
              record.command === 'rename'
                ? { id, session, command: 'rename', path: normalisedPath(record.old_path), newPath: normalisedPath(record.new_path) }
                : { id, session, command: record.command, path: normalisedPath(record.path) },
            );
          }
        }
      }
    } finally {
      await store.close();
    }

    // The sequence exercised both outcomes in earnest.
    expect(successfulMutations).toBeGreaterThan(run.calls / 5);
    expect(failures).toBeGreaterThan(run.calls / 10);

    const report = gitReport(dir);
    expectRepository(report, commits);
    expect(report.commits).toHaveLength(1 + successfulMutations);

    // HEAD's tree holds exactly the model's files, byte for byte, and a `.keep` in each empty directory.
    const expected = new Map<string, string>([['.gitattributes', '* -text\n']]);
    const items = model.items();
    if (items.length === 0) expected.set('memories/.keep', '');
    for (const item of items) {
      if (item.kind === 'file') expected.set(`memories/${item.path}`, item.content ?? '');
      else if (!items.some((other) => other.path.startsWith(`${item.path}/`))) expected.set(`memories/${item.path}/.keep`, '');
    }
    const toText = (files: Map<string, Buffer>) => new Map([...files].map(([file, bytes]) => [file, bytes.toString('utf8')]));
    const head = headFiles(dir);
    expect(toText(head)).toEqual(expected);
    for (const [file, bytes] of head) expect(Buffer.compare(bytes, Buffer.from(expected.get(file)!, 'utf8'))).toBe(0);
    // The working tree is HEAD's projection.
    const working = toText(workingTreeFiles(dir));
    expected.delete('.gitattributes');
    expect(working).toEqual(expected);
    removeDir(dir);
  });
});
