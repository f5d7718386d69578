/** Timing and formatting helpers for the benchmark. */

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

export function summarise(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { n: sorted.length, median: median(sorted), p95: at(0.95), min: sorted[0], max: sorted[sorted.length - 1] };
}

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export async function timed<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const start = now();
  const value = await fn();
  return [now() - start, value];
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return '–';
  if (value >= 10_000) return `${(value / 1000).toFixed(1)} s`;
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

/** "median (p95; min–max)" */
export function cell(s: Summary | undefined): string {
  if (!s) return '–';
  return `${ms(s.median)} (p95 ${ms(s.p95)}; ${ms(s.min)}–${ms(s.max)})`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
