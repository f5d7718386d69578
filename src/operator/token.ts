import { randomBytes } from 'node:crypto';

/**
 * The operator token: the secret that lets a person log in to an audit UI to roll back or redact. Made
 * here, checked here, for every edge that takes one (`memgit serve`, `memgit server`, the UI's login).
 */

export const MIN_TOKEN_LENGTH = 16;
/** Estimated bits an operator token must carry (a generated token has 192). */
export const MIN_TOKEN_BITS = 128;

/** A fresh operator token: 192 random bits. */
export function newOperatorToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * A conservative estimate of a token's entropy: its length times log2 of the alphabet its characters
 * come from (hex counts as 16; otherwise lower, upper, digits and others as 26, 26, 10 and 32), and no
 * credit at all when it repeats a few characters (fewer distinct characters than a third of what a random
 * string of that length would show).
 */
export function estimateTokenBits(token: string): number {
  const chars = [...token];
  if (chars.length === 0) return 0;
  const pool = /^[0-9a-f]+$|^[0-9A-F]+$/.test(token)
    ? 16
    : (/[a-z]/.test(token) ? 26 : 0) + (/[A-Z]/.test(token) ? 26 : 0) + (/[0-9]/.test(token) ? 10 : 0) + (/[^a-zA-Z0-9]/.test(token) ? 32 : 0);
  const distinct = new Set(chars).size;
  if (distinct < Math.min(pool, chars.length) / 3) return 0;
  return Math.floor(chars.length * Math.log2(pool));
}

/** Why `token` may not be the operator token, or null. */
export function tokenProblem(token: unknown): string | null {
  if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH) return `the operator token must be at least ${MIN_TOKEN_LENGTH} characters`;
  const bits = estimateTokenBits(token);
  if (bits < MIN_TOKEN_BITS) {
    return `the operator token is too easy to guess (about ${bits} bits; at least ${MIN_TOKEN_BITS} needed): use a random string such as the output of \`openssl rand -base64 24\``;
  }
  return null;
}
