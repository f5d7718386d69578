import * as fs from 'node:fs';
import * as path from 'node:path';

/** One memory write of the poisoning corpus (test/fixtures/poisoning-corpus/*.jsonl). */
export interface CorpusEntry {
  id: string;
  /** Held out: no rule was tuned on it. */
  holdout: boolean;
  expected: 'hold' | 'pass';
  lang: string;
  note: string;
  /** The tool input, as the memory tool sends it. */
  input: Record<string, unknown> & { command: string };
  /** The files before the call (virtual path → text). */
  files: Record<string, string>;
}

export const CORPUS_DIR = path.resolve(__dirname, '..', 'fixtures', 'poisoning-corpus');

export function loadCorpus(kind: 'poisoned' | 'benign', dir = CORPUS_DIR): CorpusEntry[] {
  return fs
    .readFileSync(path.join(dir, `${kind}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CorpusEntry);
}
