import { destinationFindings, type FileHistory, type RawFinding, type ScanLine } from './destinations';
import { DomainKnowledge } from './domains';
import { findEncoded, isProse } from './encoded';
import { findPersonalData, mask } from './personal-data';
import { ADDRESSED_RULES } from './rules/addressed';
import { COMMAND_RULES } from './rules/commands';
import { clauseAround, negatedBefore, rxTest, words, type PatternRule } from './rules/pattern';
import { PROPAGATION_RULES, SECRECY_RULES } from './rules/secrecy';
import { TRUST_RULES } from './rules/trust';
import { excerpt, foldLine, scanHidden, stripHidden, type HiddenHit } from './text';
import type { Detection, DetectOptions, DetectorFinding, ProposedWrite, ScanSecrets, Strength } from './types';

/** Every pattern rule, in the order findings are reported. */
export const PATTERN_RULES: readonly PatternRule[] = Object.freeze([...ADDRESSED_RULES, ...TRUST_RULES, ...COMMAND_RULES, ...SECRECY_RULES, ...PROPAGATION_RULES]);

export const DEFAULT_MAX_SCANNED_CHARS = 256 * 1024;
export const WEIGHT: Readonly<Record<Strength, number>> = Object.freeze({ strong: 4, medium: 2, weak: 1, info: 0 });
export const HOLD_AT = 4;
/** Findings of one rule in one file, at most (the verdict counts a rule once anyway). */
const PER_RULE = 3;

const HIDDEN: Record<HiddenHit['rule'], { strength: Exclude<Strength, 'info'>; reason: string }> = {
  'bidi-control': { strength: 'strong', reason: 'bidirectional override characters: the text a reviewer sees is not the order the model reads' },
  'bidi-mark': { strength: 'weak', reason: 'invisible left-to-right or right-to-left marks' },
  'zero-width': { strength: 'weak', reason: 'a zero-width character (often a copy-paste leftover)' },
  'zero-width-run': { strength: 'strong', reason: 'many zero-width characters: enough to hide a message or split words past a filter' },
  'tag-characters': { strength: 'strong', reason: 'Unicode tag characters (U+E0000 block): invisible text that a model reads as ASCII' },
  'variation-selector-run': { strength: 'strong', reason: 'runs of variation selectors: invisible bytes smuggled after a visible character' },
  'invisible-character': { strength: 'medium', reason: 'characters that render as nothing (invisible operators, Hangul fillers)' },
  'control-character': { strength: 'medium', reason: 'control characters (terminal escapes and the like) in a note' },
};

/** What a safeguard looks like in a line the call removes. */
const SAFEGUARD = rxTest(
  words(
    'verify', 'verified', 'verification', 'confirm', 'confirmation', 'approval', 'approve', 'approved by', '2fa', 'mfa', 'two-factor', 'identity', 'four-eyes', 'call back', 'callback',
    'double-check', 'sign-off', 'do not', "don't", 'never', 'must not', 'only after', 'only if', 'requires?', 'prüfen', 'prüfung', 'freigabe', 'bestätigung', 'vérifier', 'vérification',
    'validation', 'verificar', 'verificación', 'aprobación', 'confirmación', 'verifica', 'conferma',
  ),
);

interface FileLines {
  path: string;
  added: ScanLine[];
  removed: ScanLine[];
  before: string;
}

/** Lines of `after` that `before` does not have (as a multiset), and the lines of `before` that went. */
function diffLines(before: string | null, after: string | null): { added: Array<{ text: string; line: number }>; removed: Array<{ text: string; line: number }> } {
  const old = before === null ? [] : before.split('\n');
  const now = after === null ? [] : after.split('\n');
  const count = new Map<string, number>();
  for (const l of old) count.set(l, (count.get(l) ?? 0) + 1);
  const added: Array<{ text: string; line: number }> = [];
  now.forEach((text, i) => {
    const n = count.get(text) ?? 0;
    if (n > 0) count.set(text, n - 1);
    else if (text.trim() !== '') added.push({ text, line: i + 1 });
  });
  const removed: Array<{ text: string; line: number }> = [];
  old.forEach((text, i) => {
    const n = count.get(text) ?? 0;
    if (n > 0 && text.trim() !== '') {
      count.set(text, n - 1);
      removed.push({ text, line: i + 1 });
    }
  });
  return { added, removed };
}

const plain = stripHidden;

function toScanLine(path: string, text: string, line: number, code = false): ScanLine {
  return { path, line, plain: plain(text), folded: foldLine(text), code };
}

/** For each line of a markdown text, whether it is code: inside a ``` or ~~~ fence, or indented four spaces after a blank line. */
function codeLines(text: string | null): boolean[] {
  if (text === null) return [];
  const out: boolean[] = [];
  let fence: string | null = null;
  let previousBlank = true;
  let indented = false;
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      out.push(true);
      if (marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && line.trim() === marker[1]) fence = null;
    } else if (marker) {
      fence = marker[1];
      out.push(true);
    } else {
      indented = /^(?: {4}|\t)/.test(line) && (previousBlank || indented) && line.trim() !== '';
      out.push(indented);
    }
    previousBlank = line.trim() === '';
  }
  return out;
}

/** Pattern rules over a block of folded lines (joined with newlines); `lineAt` maps an offset to its line. */
function matchRules(
  rules: readonly PatternRule[],
  text: string,
  where: (offset: number) => { path: string; line: number | null; original: string; at: number },
  out: RawFinding[],
  excerpts: Map<RawFinding, string>,
): void {
  for (const rule of rules) {
    rule.pattern.lastIndex = 0;
    let found = 0;
    for (const m of text.matchAll(rule.pattern)) {
      if (rule.negatable && negatedBefore(text, m.index!)) continue;
      let strength = rule.strength;
      if (rule.escalateIf && strength !== 'strong' && rule.escalateIf.test(clauseAround(text, m.index!, m.index! + m[0].length))) strength = strength === 'weak' ? 'medium' : 'strong';
      else if (rule.softenIf && rule.softenIf.test(m[0])) strength = strength === 'strong' ? 'medium' : 'weak';
      const place = where(m.index!);
      const finding: RawFinding = { kind: rule.kind, rule: rule.rule, strength, reason: rule.reason, path: place.path, line: place.line, at: place.at };
      out.push(finding);
      excerpts.set(finding, place.original);
      if (++found >= PER_RULE) break;
    }
  }
}

/** Offsets of a block of lines joined with '\n' → the index of the line (`starts` gets each line's offset). */
function lineIndex(lines: string[], starts: number[] = []): (offset: number) => number {
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.length + 1;
  }
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
}

/** A path as words: `/memories/NOTE_FOR_THE_AI.md` reads "memories note for the ai md". */
function pathWords(path: string): string {
  return foldLine(path.replace(/[/_.\-+]+/g, ' ')).trim();
}

/**
 * The detectors over one proposed write, synchronously: instructions planted in memory, hidden
 * characters, encoded text, new destinations, and (if asked) personal data. Secrets need the worker:
 * `detectWriteWithSecrets`.
 */
export function detectWrite(write: ProposedWrite, options: DetectOptions = {}): Detection {
  const cap = options.maxScannedChars ?? DEFAULT_MAX_SCANNED_CHARS;
  const raw: RawFinding[] = [];
  const excerpts = new Map<RawFinding, string>();
  const samples = new Map<RawFinding, string>();
  let scannedChars = 0;
  let truncated = false;

  // The lines each file gains and loses, up to the cap.
  const files: FileLines[] = [];
  for (const change of write.files) {
    const { added, removed } = diffLines(change.before, change.after);
    const code = codeLines(change.after);
    const lines: ScanLine[] = [];
    for (const a of added) {
      if (scannedChars >= cap) {
        truncated = true;
        break;
      }
      const text = a.text.length > cap - scannedChars ? a.text.slice(0, cap - scannedChars) : a.text;
      if (text.length < a.text.length) truncated = true;
      scannedChars += text.length + 1;
      lines.push(toScanLine(change.path, text, a.line, code[a.line - 1] ?? false));
    }
    const gone = removed.slice(0, 2000).map((r) => toScanLine(change.path, r.text.slice(0, 4096), r.line));
    files.push({ path: change.path, added: lines, removed: gone, before: (change.before ?? '').slice(0, cap) });
  }
  const originals = new Map<ScanLine, string>();
  write.files.forEach((change) => {
    const f = files.find((x) => x.path === change.path);
    if (!f) return;
    const after = (change.after ?? '').split('\n');
    for (const l of f.added) originals.set(l, after[l.line - 1] ?? l.plain);
  });

  if (truncated) {
    raw.push({ kind: 'limit', rule: 'unscanned-remainder', strength: 'strong', reason: `the write adds more than ${cap} characters: only the first ${cap} were scanned, so it waits for a person`, path: write.files[0]?.path ?? write.path, line: null, at: 0 });
  }

  // Hidden characters, counted over the whole write.
  const hidden = new Map<HiddenHit['rule'], { count: number; path: string; line: number; original: string; at: number }>();
  const payloads: Array<{ text: string; path: string; line: number; original: string }> = [];
  for (const file of files) {
    for (const line of file.added) {
      const original = originals.get(line) ?? line.plain;
      const scan = scanHidden(original);
      for (const h of scan.hits) {
        const rule = h.rule === 'zero-width-run' ? 'zero-width' : h.rule;
        const seen = hidden.get(rule);
        if (seen) seen.count += h.count;
        else hidden.set(rule, { count: h.count, path: file.path, line: line.line, original, at: h.index / Math.max(1, original.length) });
      }
      if (scan.tagPayload) payloads.push({ text: scan.tagPayload, path: file.path, line: line.line, original });
    }
  }
  for (const [rule, seen] of hidden) {
    const name = rule === 'zero-width' && seen.count >= 4 ? 'zero-width-run' : rule;
    const spec = HIDDEN[name];
    const finding: RawFinding = { kind: 'hidden', rule: name, strength: spec.strength, reason: `${spec.reason} (${seen.count})`, path: seen.path, line: seen.line, at: seen.at };
    raw.push(finding);
    excerpts.set(finding, seen.original);
  }

  // The pattern rules, over each file's added lines as one block.
  for (const file of files) {
    if (file.added.length === 0) continue;
    const folded = file.added.map((l) => l.folded);
    const starts: number[] = [];
    const indexOf = lineIndex(folded, starts);
    const block = folded.join('\n');
    matchRules(
      PATTERN_RULES,
      block,
      (offset) => {
        const i = indexOf(offset);
        const l = file.added[i];
        return { path: file.path, line: l.line, original: originals.get(l) ?? l.plain, at: (offset - starts[i]) / Math.max(1, l.folded.length) };
      },
      raw,
      excerpts,
    );
  }

  // Paths the call creates or renames to are text the model reads too.
  const newPaths = [...new Set([...(write.newPath ? [write.newPath] : []), ...write.files.filter((f) => f.before === null && f.after !== null).map((f) => f.path)])];
  for (const p of newPaths) {
    const words = pathWords(p);
    matchRules(ADDRESSED_RULES.concat(SECRECY_RULES, PROPAGATION_RULES), words, () => ({ path: p, line: null, original: p, at: 0 }), raw, excerpts);
    for (const h of scanHidden(p).hits) {
      const finding: RawFinding = { kind: 'hidden', rule: h.rule, strength: 'strong', reason: `${HIDDEN[h.rule].reason}, in a file name`, path: p, line: null, at: 0 };
      raw.push(finding);
      excerpts.set(finding, p);
    }
  }

  // Encoded text: read what it decodes to.
  for (const file of files) {
    for (const line of file.added) {
      for (const blob of findEncoded(line.plain)) {
        const decodedLines = blob.text.split(/\r?\n/).slice(0, 200).map(foldLine);
        const inner: RawFinding[] = [];
        matchRules(PATTERN_RULES, decodedLines.join('\n'), () => ({ path: file.path, line: line.line, original: line.plain, at: 0 }), inner, new Map());
        const at = blob.index / Math.max(1, line.plain.length);
        const strongest = inner.sort((a, b) => WEIGHT[b.strength] - WEIGHT[a.strength])[0];
        let finding: RawFinding | null = null;
        if (strongest) {
          finding = { kind: 'encoded', rule: `${blob.encoding}-instruction`, strength: 'strong', reason: `${blob.encoding} text that decodes to an instruction: ${strongest.reason}`, path: file.path, line: line.line, at };
        } else if (blob.encoding !== 'percent' && isProse(blob.text)) {
          finding = { kind: 'encoded', rule: `${blob.encoding}-text`, strength: 'medium', reason: `${blob.encoding} that decodes to readable text: words hidden from a reader`, path: file.path, line: line.line, at };
        }
        if (finding) {
          raw.push(finding);
          excerpts.set(finding, originals.get(line) ?? line.plain);
          samples.set(finding, `${excerpt(originals.get(line) ?? line.plain, at)} — decodes to: ${excerpt(blob.text.replace(/\s+/g, ' '))}`);
        }
      }
    }
  }
  for (const payload of payloads) {
    const inner: RawFinding[] = [];
    matchRules(PATTERN_RULES, payload.text.split('\n').map(foldLine).join('\n'), () => ({ path: payload.path, line: payload.line, original: payload.original, at: 0 }), inner, new Map());
    if (inner.length) {
      const finding: RawFinding = { kind: 'encoded', rule: 'tag-instruction', strength: 'strong', reason: `invisible tag characters that spell an instruction: ${inner[0].reason}`, path: payload.path, line: payload.line, at: 0 };
      raw.push(finding);
      samples.set(finding, `invisible text: ${excerpt(payload.text)}`);
    }
  }

  // Destinations: addresses, links, bank accounts, phone numbers.
  const knowledge = new DomainKnowledge([write.path, ...(write.newPath ? [write.newPath] : []), ...write.files.map((f) => f.path)], options.knownDomains ?? []);
  const history: FileHistory[] = files.map((f) => ({ path: f.path, removed: f.removed, before: f.before }));
  for (const finding of destinationFindings(files.flatMap((f) => f.added), history, knowledge)) {
    raw.push(finding);
    const line = files.find((f) => f.path === finding.path)?.added.find((l) => l.line === finding.line);
    if (line) excerpts.set(finding, originals.get(line) ?? line.plain);
  }

  // Removed safeguards: a check the call takes out without putting it back.
  for (const file of files) {
    const kept = file.added.map((l) => l.folded).join('\n');
    for (const line of file.removed) {
      const m = SAFEGUARD.exec(line.folded);
      if (!m || kept.includes(m[0])) continue;
      const finding: RawFinding = { kind: 'trust', rule: 'removed-safeguard', strength: 'medium', reason: `removes a line with a safeguard ("${m[0]}") and does not put it back`, path: file.path, line: null, at: 0 };
      raw.push(finding);
      samples.set(finding, `removed: ${excerpt(line.plain, m.index / Math.max(1, line.folded.length))}`);
      break;
    }
  }

  // Findings as the reviewer sees them.
  const findings: DetectorFinding[] = raw.map((f) => ({
    kind: f.kind,
    rule: f.rule,
    strength: f.strength,
    reason: f.reason,
    path: f.path,
    line: f.line,
    sample: samples.get(f) ?? excerpt(excerpts.get(f) ?? '', f.at),
  }));

  if (options.personalData) {
    for (const file of files) {
      for (const line of file.added) {
        for (const p of findPersonalData(line.plain)) {
          findings.push({ kind: 'personal', rule: p.rule, strength: 'info', reason: PERSONAL_REASON[p.rule], path: file.path, line: line.line, sample: mask(line.plain.slice(p.start, p.end)) });
        }
      }
    }
  }
  return verdictOf(findings, { chars: Math.min(scannedChars, cap), truncated });
}

const PERSONAL_REASON = {
  email: 'an e-mail address (personal data)',
  phone: 'a phone number (personal data)',
  iban: 'a bank account number, IBAN (personal data)',
  card: 'a payment card number that passes the Luhn check (personal data)',
} as const;

/** The verdict: each rule counts once, at its strongest; the write holds at HOLD_AT. */
export function verdictOf(findings: DetectorFinding[], scanned: Detection['scanned']): Detection {
  const best = new Map<string, DetectorFinding>();
  for (const f of findings) {
    const key = `${f.kind}:${f.rule}`;
    const seen = best.get(key);
    if (!seen || WEIGHT[f.strength] > WEIGHT[seen.strength]) best.set(key, f);
  }
  const score = [...best.values()].reduce((n, f) => n + WEIGHT[f.strength], 0);
  const verdict = score >= HOLD_AT ? 'hold' : 'pass';
  const reasons =
    verdict === 'hold'
      ? [...new Set([...best.values()].filter((f) => f.strength !== 'info').sort((a, b) => WEIGHT[b.strength] - WEIGHT[a.strength]).map((f) => f.reason))]
      : [];
  const order = (f: DetectorFinding) => -WEIGHT[f.strength];
  return { verdict, score, findings: [...findings].sort((a, b) => order(a) - order(b)), reasons, scanned };
}

/**
 * `detectWrite` plus the secret scanner (secretlint, in its worker: src/store/flags/secret-scanner.ts,
 * passed in as `scanSecrets`). A secret holds the write unless `secretsHold` is false (then it is info).
 * A scanner that fails is reported as a finding and holds: a write is never passed unscanned.
 */
export async function detectWriteWithSecrets(
  write: ProposedWrite,
  scanSecrets: ScanSecrets,
  options: DetectOptions & { secretsHold?: boolean } = {},
): Promise<Detection> {
  const detection = detectWrite(write, options);
  const cap = options.maxScannedChars ?? DEFAULT_MAX_SCANNED_CHARS;
  const findings = [...detection.findings];
  let budget = cap;
  for (const change of write.files) {
    if (budget <= 0) break;
    const { added } = diffLines(change.before, change.after);
    if (added.length === 0) continue;
    const text = added.map((l) => l.text).join('\n').slice(0, budget);
    budget -= text.length;
    const lineAt = lineIndex(added.map((l) => l.text));
    let hits;
    try {
      hits = await scanSecrets(text);
    } catch (error) {
      findings.push({ kind: 'limit', rule: 'secret-scan-failed', strength: 'strong', reason: `the secret scanner failed (${(error as Error).message}): the write waits for a person`, path: change.path, line: null, sample: '' });
      continue;
    }
    for (const hit of hits) {
      findings.push({
        kind: 'secret',
        rule: hit.rule,
        strength: options.secretsHold === false ? 'info' : 'strong',
        reason: `a likely secret (${hit.rule}): memory is read by every later session and shown in the audit UI`,
        path: change.path,
        line: added[lineAt(hit.start)]?.line ?? null,
        sample: mask(text.slice(hit.start, hit.end)),
      });
    }
  }
  return verdictOf(findings, detection.scanned);
}
