/**
 * Shared by the MCP tests: every call of the conformance vectors and of hostile-paths.json as one long
 * sequence, run through an MCP client and, with the same ids, on a reference store through
 * `store.execute`; the results must be equal byte for byte, and so must the two repositories.
 */
import { spawnSync } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MemoryStore } from '../../src/store/memory-store';
import { loadHostilePaths, loadVectors } from '../store/git-helpers';

export const MUTATING = new Set(['create', 'str_replace', 'insert', 'delete', 'rename']);

/** Every input a path field can carry `p` in; the other fields are valid. */
function inputsNaming(p: string): Array<Record<string, unknown>> {
  return [
    { command: 'view', path: p },
    { command: 'create', path: p, file_text: 'pwned' },
    { command: 'str_replace', path: p, old_str: 'one', new_str: 'pwned' },
    { command: 'insert', path: p, insert_line: 0, insert_text: 'pwned' },
    { command: 'delete', path: p },
    { command: 'rename', old_path: p, new_path: '/memories/moved.md' },
    { command: 'rename', old_path: '/memories/notes.md', new_path: p },
  ];
}

/**
 * The vectors' setups and inputs (those without store options), then every hostile path in every slot
 * (with /memories/notes.md there for them to work on), then a few inputs no schema would let through.
 */
export function callSequence(): unknown[] {
  const calls: unknown[] = [];
  for (const vector of loadVectors()) {
    if (vector.options) continue;
    calls.push(...vector.setup, vector.input);
  }
  // notes.md as the slots expect it. A rejected path writes nothing, so only an accepted one (which may
  // delete notes.md or move it away) needs it made again.
  const notes = { command: 'create', path: '/memories/notes.md', file_text: 'one\ntwo' };
  calls.push(notes);
  for (const entry of loadHostilePaths()) {
    if (entry.expected !== 'reject') calls.push(notes);
    calls.push(...inputsNaming(entry.path));
  }
  calls.push(
    { command: 'view', path: 7 },
    { command: 'create', path: '/memories/n.md', file_text: null },
    { command: 'insert', path: '/memories/notes.md', insert_line: '1', insert_text: 'x' },
    { command: 'view', path: '/memories/notes.md', view_range: 'all' },
    { command: ['view'] },
    { command: 'view', path: '/memories', extra: { nested: true } },
  );
  return calls;
}

export interface CallRecord {
  input: unknown;
  id: string;
  text: string;
  isError: boolean;
}

/** The one text item of a memory tool result, its error flag and the id memgit gave the call. */
export function unpack(result: CallToolResult): { text: string; isError: boolean; id: string; commit?: string } {
  expect(result.content).toHaveLength(1);
  const [item] = result.content;
  if (item.type !== 'text') throw new Error(`expected a text item, got ${item.type}`);
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  expect(meta['memgit/call-id']).toMatch(/^mcp_\d{8}T\d{6}\.\d{3}_[a-z2-7]{10}$/);
  return { text: item.text, isError: result.isError === true, id: String(meta['memgit/call-id']), commit: meta['memgit/commit'] as string | undefined };
}

/** Run `calls` through the client, in order. */
export async function runThroughClient(client: Client, calls: readonly unknown[]): Promise<CallRecord[]> {
  const records: CallRecord[] = [];
  for (const input of calls) {
    const result = (await client.callTool({ name: 'memory', arguments: input as Record<string, unknown> })) as CallToolResult;
    const { text, isError, id } = unpack(result);
    records.push({ input, id, text, isError });
  }
  return records;
}

/**
 * Feed the same calls, with the same ids, session and client, to a reference store through
 * `store.execute`, and expect exactly the same texts and error flags.
 */
export async function expectSameAsReference(
  referenceDir: string,
  records: readonly CallRecord[],
  context: { session: string; clientName: string; clientVersion: string },
): Promise<void> {
  const reference = await MemoryStore.open(referenceDir, { fsync: false, log: () => undefined });
  try {
    const mismatches: unknown[] = [];
    for (const record of records) {
      const result = await reference.execute(
        { type: 'tool_use', id: record.id, name: 'memory', input: record.input },
        { session: context.session, client: { kind: 'mcp', name: context.clientName, version: context.clientVersion } },
      );
      if (result.content !== record.text || (result.is_error === true) !== record.isError) {
        mismatches.push({ input: record.input, mcp: record.text, reference: result.content });
      }
    }
    expect(mismatches).toEqual([]);
  } finally {
    await reference.close();
  }
}

/** Messages, oldest first, and HEAD's tree, from the git CLI. */
export function gitHistory(dir: string): { messages: string[]; tree: string; fsck: string; fsckCode: number; status: string } {
  const log = spawnSync('git', ['-C', dir, 'log', '--reverse', '--format=%B%x00'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const tree = spawnSync('git', ['-C', dir, 'rev-parse', 'HEAD^{tree}'], { encoding: 'utf8' });
  const fsck = spawnSync('git', ['-C', dir, 'fsck', '--full'], { encoding: 'utf8' });
  const status = spawnSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' });
  return {
    messages: log.stdout.split('\0\n').slice(0, -1),
    tree: tree.stdout.trim(),
    fsck: fsck.stdout + fsck.stderr,
    fsckCode: fsck.status ?? -1,
    status: status.stdout,
  };
}

/** One trailer's values in each commit, oldest first (`git log --format=%(trailers:key=K,valueonly)`). */
export function trailerValues(dir: string, key: string): string[] {
  const run = spawnSync('git', ['-C', dir, 'log', '--reverse', `--format=%(trailers:key=${key},valueonly,separator=|)%x00`], { encoding: 'utf8' });
  return run.stdout.split('\0\n').slice(0, -1);
}
