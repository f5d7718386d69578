import { randomBytes } from 'node:crypto';

/**
 * Ids memgit makes for MCP traffic. MCP calls carry no tool_use id, so memgit names each call itself;
 * the name must be unique for ever (a repeated id would be taken for a retry of the earlier call), so it
 * has a millisecond time stamp and 50 random bits. A session id doubles as the HTTP `Mcp-Session-Id`,
 * the only thing tying a request to a session, so it carries 100 random bits.
 */

/** 32 symbols, so every random byte maps to one without bias (`& 31`). */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

function randomChars(count: number): string {
  return [...randomBytes(count)].map((b) => ALPHABET[b & 31]).join('');
}

/** `20261203T075043` (UTC), or with milliseconds `20261203T075043.123`: sorts as the time does. */
function stamp(now: Date, withMilliseconds: boolean): string {
  const iso = now.toISOString().replace(/[-:]/g, ''); // 20261203T075043.123Z
  return withMilliseconds ? iso.slice(0, -1) : iso.slice(0, 15);
}

/** The id of one MCP tool call, e.g. `mcp_20261203T075043.123_k3f9x2mq7a` (the commit's first line). */
export function newMcpCallId(now = new Date()): string {
  return `mcp_${stamp(now, true)}_${randomChars(10)}`;
}

/** The id of one MCP session (its memgit session), e.g. `sess_20261203T075043_` + 20 random characters. */
export function newMcpSessionId(now = new Date()): string {
  return `sess_${stamp(now, false)}_${randomChars(20)}`;
}
