import * as fs from 'node:fs';
import * as path from 'node:path';
import { oneLine } from '../commit-message';
import type { DurableFs } from '../durable-fs';
import { InvalidReviewPolicyError } from '../errors';

/**
 * A store's review policy (`.git/memgit/review-policy.json`): whether agent writes wait for review
 * (`off`: never; `flagged`: a write the detectors hold; `all`: every write), with its options, and every
 * change on the record (who, when, why, old → new). A store without the file is `off`.
 */

export const REVIEW_MODES = ['off', 'flagged', 'all'] as const;
export type ReviewMode = (typeof REVIEW_MODES)[number];

export interface ReviewPolicy {
  review: ReviewMode;
  /** A likely secret (secretlint) holds a write on its own. Default true. */
  secretsHold: boolean;
  /** Report personal data among a write's findings (never a reason to hold on its own). Default false. */
  personalData: boolean;
}

export interface PolicyChange {
  /** ISO 8601 time of the change. */
  time: string;
  operator: string;
  reason: string | null;
  from: ReviewPolicy;
  to: ReviewPolicy;
}

export interface PolicyRecord {
  policy: ReviewPolicy;
  /** Every change, oldest first. */
  audit: PolicyChange[];
}

export const DEFAULT_POLICY: ReviewPolicy = Object.freeze({ review: 'off', secretsHold: true, personalData: false });
const FILE_VERSION = 1;
const MAX_AUDIT = 10_000;

export function policyFile(gitdir: string): string {
  return path.join(gitdir, 'memgit', 'review-policy.json');
}

function checkPolicy(value: unknown): ReviewPolicy {
  const v = value as Partial<ReviewPolicy> | null;
  if (!v || typeof v !== 'object') throw new InvalidReviewPolicyError('a review policy must be an object');
  if (!REVIEW_MODES.includes(v.review as ReviewMode)) {
    throw new InvalidReviewPolicyError(`review must be one of ${REVIEW_MODES.join(', ')} (got ${JSON.stringify(String(v.review)).slice(0, 40)})`);
  }
  for (const key of ['secretsHold', 'personalData'] as const) {
    if (v[key] !== undefined && typeof v[key] !== 'boolean') throw new InvalidReviewPolicyError(`${key} must be true or false`);
  }
  return { review: v.review as ReviewMode, secretsHold: v.secretsHold ?? true, personalData: v.personalData ?? false };
}

/** The policy on disk (the default when there is none). A file that does not parse is refused, not guessed. */
export function readPolicyRecord(gitdir: string): PolicyRecord {
  let text: string;
  try {
    text = fs.readFileSync(policyFile(gitdir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { policy: { ...DEFAULT_POLICY }, audit: [] };
    throw error;
  }
  let parsed: { version?: unknown; policy?: unknown; audit?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    throw new InvalidReviewPolicyError(`${policyFile(gitdir)} is not valid JSON`);
  }
  if (parsed.version !== FILE_VERSION) throw new InvalidReviewPolicyError(`${policyFile(gitdir)} has an unknown version`);
  return { policy: checkPolicy(parsed.policy), audit: Array.isArray(parsed.audit) ? (parsed.audit as PolicyChange[]) : [] };
}

export interface PolicyUpdate {
  review?: unknown;
  secretsHold?: unknown;
  personalData?: unknown;
  operator?: unknown;
  reason?: unknown;
}

/** The record after `update` (checked; nothing is written here), or the same record when nothing changes. */
export function updatedRecord(record: PolicyRecord, update: PolicyUpdate, now: number): { record: PolicyRecord; changed: boolean } {
  const to = checkPolicy({
    review: update.review ?? record.policy.review,
    secretsHold: update.secretsHold ?? record.policy.secretsHold,
    personalData: update.personalData ?? record.policy.personalData,
  });
  if (update.operator !== undefined && typeof update.operator !== 'string') throw new InvalidReviewPolicyError('operator must be a string');
  if (update.reason !== undefined && update.reason !== null && typeof update.reason !== 'string') throw new InvalidReviewPolicyError('reason must be a string');
  const operator = oneLine((update.operator as string | undefined) ?? 'operator', 100) || 'operator';
  const reason = typeof update.reason === 'string' && oneLine(update.reason) !== '' ? oneLine(update.reason) : null;
  const from = record.policy;
  const changed = from.review !== to.review || from.secretsHold !== to.secretsHold || from.personalData !== to.personalData;
  if (!changed) return { record, changed };
  const audit = [...record.audit, { time: new Date(now).toISOString(), operator, reason, from, to }].slice(-MAX_AUDIT);
  return { record: { policy: to, audit }, changed };
}

export async function writePolicyRecord(durableFs: DurableFs, gitdir: string, record: PolicyRecord): Promise<void> {
  await fs.promises.mkdir(path.dirname(policyFile(gitdir)), { recursive: true, mode: 0o700 });
  await durableFs.writeFile(policyFile(gitdir), `${JSON.stringify({ version: FILE_VERSION, ...record }, null, 2)}\n`, { mode: 0o600 });
}
