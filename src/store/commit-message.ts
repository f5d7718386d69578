/**
 * The commit message format (spec §5): the first line is the tool_use id alone, then a blank line and
 * trailers. Only validated ids, command names and normalised paths ever reach a message — nothing the
 * agent wrote as content.
 */

export const TRAILER = {
  command: 'Memory-Command',
  path: 'Memory-Path',
  newPath: 'Memory-New-Path',
  session: 'Memory-Session',
  actor: 'Memory-Actor',
  reverts: 'Memory-Reverts',
  reason: 'Memory-Reason',
  redacted: 'Memory-Redacted',
} as const;

export interface CommitMeta {
  /** First line: the tool_use id for agent calls, a summary such as `revert toolu_…` for operator actions. */
  title: string;
  command?: string;
  path?: string;
  newPath?: string;
  session?: string;
  actor?: string;
  reverts?: string[];
  reason?: string;
  /** Redactions that rewrote this commit (`Memory-Redacted: r7`). */
  redacted?: string[];
}

export function formatCommitMessage(meta: CommitMeta): string {
  const trailers: string[] = [];
  const add = (key: string, value: string | undefined) => {
    if (value !== undefined) trailers.push(`${key}: ${value}`);
  };
  add(TRAILER.command, meta.command);
  add(TRAILER.path, meta.path);
  add(TRAILER.newPath, meta.newPath);
  add(TRAILER.session, meta.session);
  add(TRAILER.actor, meta.actor);
  for (const reverted of meta.reverts ?? []) add(TRAILER.reverts, reverted);
  add(TRAILER.reason, meta.reason);
  for (const id of meta.redacted ?? []) add(TRAILER.redacted, id);
  return trailers.length ? `${meta.title}\n\n${trailers.join('\n')}\n` : `${meta.title}\n`;
}

export function parseCommitMessage(message: string): CommitMeta {
  const lines = message.split('\n');
  const meta: CommitMeta = { title: lines[0] ?? '' };
  for (const line of lines.slice(1)) {
    const match = /^(Memory-[A-Za-z-]+): (.*)$/.exec(line);
    if (!match) continue;
    const [, key, value] = match;
    switch (key) {
      case TRAILER.command: meta.command = value; break;
      case TRAILER.path: meta.path = value; break;
      case TRAILER.newPath: meta.newPath = value; break;
      case TRAILER.session: meta.session = value; break;
      case TRAILER.actor: meta.actor = value; break;
      case TRAILER.reverts: (meta.reverts ??= []).push(value); break;
      case TRAILER.reason: meta.reason = value; break;
      case TRAILER.redacted: (meta.redacted ??= []).push(value); break;
    }
  }
  return meta;
}

/** Make free text (an operator's reason) safe for a one-line trailer. */
export function oneLine(text: string, maxLength = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}
