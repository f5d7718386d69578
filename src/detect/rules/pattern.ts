import type { FindingKind, Strength } from '../types';

/**
 * A rule that is one regular expression over folded text (src/detect/text.ts: lower case, hidden
 * characters removed, one space between words).
 *
 * Linear time by construction, checked by test/detect/detect-hostile.test.ts: patterns are made of
 * literal alternations, word boundaries and gaps of bounded length (`{0,40}`); no `*`, `+` or `{n,}`,
 * and no quantified group that holds a quantifier. The work at one start position is therefore bounded
 * by a constant (the product of the bounds), and a scan by that constant times the text's length.
 */
export interface PatternRule {
  kind: FindingKind;
  rule: string;
  strength: Exclude<Strength, 'info'>;
  reason: string;
  /** Global and unicode (`gu`); matched against folded text, which is lower case. */
  pattern: RegExp;
  /** A negation (not, never, nicht, jamais, nunca...) just before the match, in the same clause, cancels it. */
  negatable?: boolean;
  /** Tested on the match's clause: when it matches, the finding is one step stronger (medium becomes strong). */
  escalateIf?: RegExp;
  /** Tested on the matched text: when it matches, the finding is one step weaker (strong becomes medium). */
  softenIf?: RegExp;
}

/** Start and end of a word, for any script with spaces (JavaScript's `\b` knows only ASCII letters). */
export const B = '(?<![\\p{L}\\p{N}_])';
export const E = '(?![\\p{L}\\p{N}_])';

/** Up to n characters inside one sentence. */
export function gap(n: number): string {
  return `[^.!?\\n]{0,${n}}`;
}

/** Up to n characters inside one sentence, where a dot inside a word (a domain, "e.g") does not end it. */
export function gapDots(n: number): string {
  return `(?:[^.!?\\n]|\\.(?=[^\\s.])){0,${n}}`;
}

export function alt(...alternatives: string[]): string {
  return `(?:${alternatives.join('|')})`;
}

/** A whole-word alternation. */
export function words(...alternatives: string[]): string {
  return `${B}${alt(...alternatives)}${E}`;
}

export function rx(...parts: string[]): RegExp {
  return new RegExp(parts.join(''), 'gu');
}

/** For `.test()`: not global, so no `lastIndex` carried from one call to the next. */
export function rxTest(...parts: string[]): RegExp {
  return new RegExp(parts.join(''), 'u');
}

const NEGATION = new RegExp(
  words(
    'not', 'never', 'no', "don't", 'dont', "doesn't", "mustn't", "shouldn't", "can't", 'cannot', "won't", 'forbidden', 'prohibited', 'nobody',
    'nicht', 'nie', 'niemals', 'kein', 'keine', 'keinen', 'verboten',
    'jamais', 'pas', 'ne', 'interdit',
    'nunca', 'prohibido', 'jamás',
    'non', 'mai', 'vietato',
    'não', 'nunca',
    'niet', 'nooit', 'nie', 'nigdy', 'не', 'никогда',
  ),
  'u',
);

/** Whether the clause before `index` (at most 40 characters, back to . ! ? ; or a line break) holds a negation. */
export function negatedBefore(text: string, index: number): boolean {
  let start = Math.max(0, index - 40);
  const window = text.slice(start, index);
  const cut = Math.max(window.lastIndexOf('.'), window.lastIndexOf('!'), window.lastIndexOf('?'), window.lastIndexOf(';'), window.lastIndexOf('\n'));
  if (cut >= 0) start += cut + 1;
  return NEGATION.test(text.slice(start, index));
}

/** The sentence around a match (at most 160 characters each side), for `escalateIf`. */
export function clauseAround(text: string, start: number, end: number): string {
  const from = Math.max(0, start - 160);
  const to = Math.min(text.length, end + 160);
  const before = text.slice(from, start);
  const after = text.slice(end, to);
  const cutBefore = Math.max(before.lastIndexOf('.'), before.lastIndexOf('!'), before.lastIndexOf('?'), before.lastIndexOf('\n'));
  const ends = ['.', '!', '?', '\n'].map((c) => after.indexOf(c)).filter((i) => i >= 0);
  const cutAfter = ends.length ? Math.min(...ends) : after.length;
  return before.slice(cutBefore + 1) + text.slice(start, end) + after.slice(0, cutAfter);
}

/** Money and identity: what turns a "don't ask for confirmation" from a preference into a fraud enabler. */
export const MONEY_OR_IDENTITY = rxTest(
  words(
    'refunds?', 'payments?', 'payouts?', 'transfers?', 'wires?', 'invoices?', 'bank', 'iban', 'accounts?', 'identity', 'id', 'passwords?', 'credentials?', 'admin', 'access',
    'money', 'funds', 'credit', 'charges?', 'chargebacks?', 'withdrawals?', 'orders?', 'discounts?', 'vouchers?', 'gift cards?', 'caller', 'requester',
    'rückerstattung(?:en)?', 'zahlung(?:en)?', 'überweisung(?:en)?', 'rechnung(?:en)?', 'konto', 'remboursements?', 'paiements?', 'virements?', 'factures?', 'compte',
    'reembolsos?', 'pagos?', 'transferencias?', 'facturas?', 'cuenta', 'rimborsi', 'rimborso', 'pagamenti', 'pagamento', 'bonifico', 'reembolso', 'terugbetaling',
  ),
);
