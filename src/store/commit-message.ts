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
  client: 'Memory-Client',
  clientName: 'Memory-Client-Name',
  clientVersion: 'Memory-Client-Version',
  redacted: 'Memory-Redacted',
  key: 'Memory-Key',
  review: 'Memory-Review',
  reviewState: 'Memory-Review-State',
  approvedBy: 'Memory-Approved-By',
  original: 'Memory-Original',
  dream: 'Memory-Dream',
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
  /** How the call reached memgit (`mcp`), and the client program's own name and version, when known. */
  client?: string;
  clientName?: string;
  clientVersion?: string;
  /** Redactions that rewrote this commit (`Memory-Redacted: r7`). */
  redacted?: string[];
  /**
   * The id of the server key the call or rollback came with (`memgit server`): set by the server from the
   * key it checked, never from anything a client sends.
   */
  key?: string;
  /** A call approved from review (`Memory-Review: rv_…`), or a review's archive commit. */
  review?: string;
  /** A review's archive commit: `approved` or `rejected`. */
  reviewState?: string;
  /** Who approved a reviewed call (`Memory-Approved-By`). */
  approvedBy?: string;
  /** The commit the call made on its review branch (`Memory-Original`). */
  original?: string;
  /** A call a dream made on its branch (`Memory-Dream: drm_…`), kept when the call is approved onto main. */
  dream?: string;
}

/** The program that sent a call, as the caller knows it (for MCP: `initialize`'s clientInfo). Hostile text. */
export interface ClientInfo {
  /** The channel, e.g. `mcp`. */
  kind: string;
  name?: unknown;
  version?: unknown;
}

const LONE_SURROGATES = /\p{Cs}/gu;

/**
 * Trailer fields for a call's client. Every value is flattened to one short line (a client names itself
 * whatever it likes) and dropped when nothing is left, so that parsing the message gives back these values.
 */
export function clientTrailers(client: ClientInfo | undefined): Pick<CommitMeta, 'client' | 'clientName' | 'clientVersion'> {
  if (!client) return {};
  const clean = (value: unknown): string | undefined => {
    if (typeof value !== 'string') return undefined;
    // Lone surrogates cannot be stored as UTF-8 (they would come back as U+FFFD), before or after the cut.
    const text = oneLine(value.replace(LONE_SURROGATES, '\uFFFD'), 100).replace(LONE_SURROGATES, '');
    return text === '' ? undefined : text;
  };
  const fields: Pick<CommitMeta, 'client' | 'clientName' | 'clientVersion'> = {};
  const kind = clean(client.kind);
  const name = clean(client.name);
  const version = clean(client.version);
  if (kind !== undefined) fields.client = kind;
  if (name !== undefined) fields.clientName = name;
  if (version !== undefined) fields.clientVersion = version;
  return fields;
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
  add(TRAILER.client, meta.client);
  add(TRAILER.clientName, meta.clientName);
  add(TRAILER.clientVersion, meta.clientVersion);
  for (const id of meta.redacted ?? []) add(TRAILER.redacted, id);
  add(TRAILER.key, meta.key);
  add(TRAILER.review, meta.review);
  add(TRAILER.reviewState, meta.reviewState);
  add(TRAILER.approvedBy, meta.approvedBy);
  add(TRAILER.original, meta.original);
  add(TRAILER.dream, meta.dream);
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
      case TRAILER.client: meta.client = value; break;
      case TRAILER.clientName: meta.clientName = value; break;
      case TRAILER.clientVersion: meta.clientVersion = value; break;
      case TRAILER.redacted: (meta.redacted ??= []).push(value); break;
      case TRAILER.key: meta.key = value; break;
      case TRAILER.review: meta.review = value; break;
      case TRAILER.reviewState: meta.reviewState = value; break;
      case TRAILER.approvedBy: meta.approvedBy = value; break;
      case TRAILER.original: meta.original = value; break;
      case TRAILER.dream: meta.dream = value; break;
    }
  }
  return meta;
}

/** What a key id recorded as `Memory-Key` may look like (`memgit keys` makes 16 hex digits). */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Make free text (an operator's reason) safe for a one-line trailer. */
export function oneLine(text: string, maxLength = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}
