/**
 * The deterministic workload of the crash tests: call `index` of seed `seed` is always the same memory
 * tool_use, so a writer restarted after a kill can resume (retrying the calls it had not acknowledged)
 * and the harness can replay the whole sequence through the in-memory model.
 *
 * Every path is below /memories/w, so the harness's own probe writes (/memories/probe.md) stay out of it.
 */
// Seeded per call (see workloadCall), so any call can be computed alone.
import { mulberry32 as prng } from '../support/random';

export interface WorkloadCall {
  index: number;
  id: string;
  session: string;
  input: Record<string, unknown>;
}

const SESSIONS = ['sess_alpha', 'sess_beta', 'sess_gamma'];
const FILES = ['f0.md', 'f1.md', 'f2.md', 'd0/g0.md', 'd0/g1.md', 'd1/g0.md', 'd1/e/h.txt'];
const DIRS = ['d0', 'd1', 'd1/e', 'd2'];
const OLD_STRINGS = ['line beta', 'alpha', 'note', 'missing text', 'line gamma\n'];

export function toolUseId(seed: number, index: number): string {
  return `toolu_s${seed}_${index}`;
}

export function indexOfToolUseId(seed: number, id: string): number | null {
  const match = /^toolu_s(\d+)_(\d+)$/.exec(id);
  return match && Number(match[1]) === seed ? Number(match[2]) : null;
}

export function workloadCall(seed: number, index: number): WorkloadCall {
  const random = prng(Math.imul(seed, 0x9e3779b1) ^ index);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const file = (): string => `/memories/w/${pick(FILES)}`;
  const roll = random();
  let input: Record<string, unknown>;
  if (roll < 0.3) {
    // One create in ten is a heavy write (64-256 KiB), so kills land during large object writes too.
    const heavy = random() < 0.1;
    const body = heavy ? `${'lorem ipsum dolor sit amet '.repeat(Math.floor(2400 + random() * 7300))}\n` : '';
    input = { command: 'create', path: file(), file_text: `# note ${index}\nline alpha ${index}\nline beta\n${body}line gamma\n` };
  } else if (roll < 0.5) {
    input = { command: 'str_replace', path: file(), old_str: pick(OLD_STRINGS), new_str: `line beta ${index}` };
  } else if (roll < 0.62) {
    input = { command: 'insert', path: file(), insert_line: Math.floor(random() * 5), insert_text: `inserted ${index}\n` };
  } else if (roll < 0.74) {
    const target = random() < 0.5 ? '/memories/w' : random() < 0.5 ? `/memories/w/${pick(DIRS)}` : file();
    input = random() < 0.3 ? { command: 'view', path: target, view_range: [1, 3] } : { command: 'view', path: target };
  } else if (roll < 0.82) {
    input = { command: 'delete', path: random() < 0.8 ? file() : `/memories/w/${pick(DIRS)}` };
  } else if (roll < 0.94) {
    const from = random() < 0.8 ? file() : `/memories/w/${pick(DIRS)}`;
    input = { command: 'rename', old_path: from, new_path: random() < 0.8 ? file() : `/memories/w/${pick(DIRS)}` };
  } else {
    // Refused input: the writer must report an error and change nothing.
    input = pick<Record<string, unknown>>([
      { command: 'create', path: '/memories/w/../../etc/passwd', file_text: 'x' },
      { command: 'insert', path: file(), insert_line: '1', insert_text: 'x' },
      { command: 'valueOf' },
      { command: 'str_replace', path: file() },
    ]);
  }
  return { index, id: toolUseId(seed, index), session: SESSIONS[index % SESSIONS.length], input };
}
