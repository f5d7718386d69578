import { mask, type MemoryStore, oneLine, ReadOnlyStoreError, type RedactionOutcome, RedactionRefusedError, type RedactionTarget } from '../store';
import { InvalidRequestError } from './errors';
import { MAX_REASON_LENGTH } from './rollback';

/**
 * A redaction as an operator asks for it (the UI's form): the request's fields parsed and bounded, and
 * the redaction run (or previewed) on the store with the store's refusals said without the secret.
 *
 * What the operator types to match (a text or a regex) is a secret: it travels only in POST bodies (never
 * a URL) and is never written back into an answer: a refusal that would quote it names it instead.
 */

export type RedactionKind = 'text' | 'regex' | 'path' | 'call';
export const REDACTION_KINDS: readonly RedactionKind[] = ['text', 'regex', 'path', 'call'];
/** Kinds whose value may be the secret itself: never echoed, never prefilled. */
export const SECRET_KINDS: readonly RedactionKind[] = ['text', 'regex'];

export const MAX_VALUE_LENGTH = 1000;
export const MAX_REF_LENGTH = 256;
export { MAX_REASON_LENGTH };

export interface RedactionRequest {
  kind: RedactionKind;
  value: string;
  reason: string;
  from?: string;
  to?: string;
}

/** One text field of a request ('' when absent); refused when repeated or longer than `max`. */
export function requestField(params: Record<string, unknown>, name: string, max: number): string {
  const value = params[name];
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string') throw new InvalidRequestError(`${name} must be given once, as text`);
  if (value.length > max) throw new InvalidRequestError(`${name} is longer than ${max} characters`);
  return value;
}

export function parseRedactionRequest(params: Record<string, unknown>): RedactionRequest {
  const kind = requestField(params, 'kind', 16);
  if (!(REDACTION_KINDS as readonly string[]).includes(kind)) throw new InvalidRequestError(`say what to redact: kind must be one of ${REDACTION_KINDS.join(', ')}`);
  const value = requestField(params, kind, kind === 'call' ? MAX_REF_LENGTH : MAX_VALUE_LENGTH);
  if (value === '') throw new InvalidRequestError(`the ${kind} to redact is empty`);
  const reason = oneLine(requestField(params, 'reason', MAX_REASON_LENGTH));
  if (reason === '') throw new InvalidRequestError('a redaction needs a reason (it is recorded in the audit log)');
  const from = requestField(params, 'from', MAX_REF_LENGTH) || undefined;
  const to = requestField(params, 'to', MAX_REF_LENGTH) || undefined;
  return { kind: kind as RedactionKind, value, reason, from, to };
}

function targetOf(request: RedactionRequest): RedactionTarget {
  return { [request.kind]: request.value };
}

/** A store refusal with the secret (if the operator typed one) cut out, as a refused request. */
function refusal(request: RedactionRequest, detail: string): InvalidRequestError {
  let text = detail.replace(/--(operator|reason)\b/g, '$1');
  if (SECRET_KINDS.includes(request.kind)) text = text.split(request.value).join(`(the ${request.kind})`);
  // A regex's syntax error quotes the pattern as /pattern/flags: drop that part whatever it holds.
  if (request.kind === 'regex') text = text.replace(/Invalid regular expression: .*: /s, 'Invalid regular expression: ');
  return new InvalidRequestError(text);
}

/**
 * Run (or with dryRun, preview) a redaction. The store's refusals (and a read-only store's) become
 * InvalidRequestError without the secret in them; StaleHeadError (the store moved since the preview) goes
 * up as it is.
 */
export async function runRedaction(
  store: MemoryStore,
  request: RedactionRequest,
  operator: string,
  options: { dryRun: boolean; expectHead?: string },
): Promise<RedactionOutcome> {
  try {
    return await store.redact({
      ...targetOf(request),
      at: request.from || request.to ? { from: request.from, to: request.to } : undefined,
      reason: request.reason,
      operator,
      dryRun: options.dryRun,
      expectHead: options.expectHead,
    });
  } catch (error) {
    if (error instanceof RedactionRefusedError || error instanceof ReadOnlyStoreError) throw refusal(request, error.detail);
    throw error;
  }
}

/** What is matched, as it may be shown: a path or call id as is, a text or regex masked. */
export function shownTarget(request: RedactionRequest): string {
  return SECRET_KINDS.includes(request.kind) ? mask(request.value) : request.value;
}
