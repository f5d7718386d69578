/**
 * The detectors' vocabulary: what a write under review is, what a finding says, and the verdict.
 * Everything in src/detect is pure (no I/O); the secret scanner, which runs secretlint in a worker, is
 * passed in as a function.
 */
import type { MemoryCommandName } from '../contract/types';

export type MutatingCommand = Exclude<MemoryCommandName, 'view'>;

/** One file a call changes, as text: before the call (null: it did not exist) and after it (null: deleted). */
export interface FileChange {
  /** Virtual path, `/memories/...`. */
  path: string;
  before: string | null;
  after: string | null;
}

/**
 * A memory write, before it lands: the command, its path(s), and every file it changes with its text
 * before and after. All six commands fit: `view` changes nothing (no files), `create`, `str_replace` and
 * `insert` change one file, `delete` removes one file or a directory's files, `rename` moves them (the
 * text is the same; the new path is what it adds).
 */
export interface ProposedWrite {
  command: MemoryCommandName;
  /** Virtual path of the call (`old_path` for rename). */
  path: string;
  /** rename only: the new virtual path. */
  newPath?: string;
  files: FileChange[];
}

/**
 * What a finding is about. `secret` and `personal` come from the existing scanners (secretlint, the
 * personal-data patterns); the rest are the rules for instructions planted in memory (docs/review.md).
 */
export type FindingKind =
  | 'secret'
  | 'personal'
  | 'addressed'
  | 'trust'
  | 'destination'
  | 'command'
  | 'secrecy'
  | 'propagation'
  | 'hidden'
  | 'encoded'
  | 'limit';

/**
 * How much one finding weighs: `strong` holds a write alone, `medium` holds with another medium (or two
 * weak ones), `weak` only adds up, `info` never holds (personal data: memory is full of it).
 */
export type Strength = 'strong' | 'medium' | 'weak' | 'info';

export interface DetectorFinding {
  kind: FindingKind;
  /** Stable rule id, e.g. `ignore-previous-instructions`, `changed-iban`, or a secretlint rule (`anthropic`). */
  rule: string;
  strength: Strength;
  /** Why this matters, for the reviewer (one sentence, fixed per rule). */
  reason: string;
  /** Virtual path of the file the finding is in. */
  path: string;
  /** 1-based line in the file after the call; null for a finding in a path or about the write as a whole. */
  line: number | null;
  /**
   * What a reviewer may see: masked (shape, never the value) for secrets and personal data; for the rest
   * an excerpt of the line (at most 160 characters) with hidden characters spelled out as `<U+202E>`.
   */
  sample: string;
}

export type Verdict = 'hold' | 'pass';

export interface Detection {
  verdict: Verdict;
  /** Sum over rules (each rule counted once) of strong 4, medium 2, weak 1; a write holds at 4 or more. */
  score: number;
  findings: DetectorFinding[];
  /** The reasons of the findings that decided a hold (strongest first); empty when the write passes. */
  reasons: string[];
  /** What was scanned: characters of added text (after the cap) and whether the cap cut it. */
  scanned: { chars: number; truncated: boolean };
}

export interface DetectOptions {
  /** Registrable domains the store already trusts (e.g. found anywhere on main), besides those in the files' old text. */
  knownDomains?: Iterable<string>;
  /** Report personal data (e-mail, phone, IBAN, card) as `info` findings, as a store that opted in does. Default false. */
  personalData?: boolean;
  /** Characters of added text scanned at most (default 256 KiB); the rest is not scanned and the write holds. */
  maxScannedChars?: number;
}

/** A secret found by the secret scanner (src/store/flags/secret-scanner.ts has the same shape). */
export interface SecretHit {
  rule: string;
  start: number;
  end: number;
}

export type ScanSecrets = (text: string) => Promise<SecretHit[]>;
