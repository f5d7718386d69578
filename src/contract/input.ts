/**
 * Validation of untrusted tool input (spec §1). Only own enumerable properties are ever read, so
 * prototype names (`__proto__`, `valueOf`, `constructor`...) can neither supply nor hide a field.
 */
import { displayValue } from './format';
import type { CommandOutcome, ContractOptions, MemoryReader } from './types';

export type InputFields = ReadonlyMap<string, unknown>;

/** One command of the tool: validates its own fields, reads through `reader`, never writes. */
export type CommandHandler = (
  input: InputFields,
  reader: MemoryReader,
  options: ContractOptions,
) => Promise<CommandOutcome>;

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Text of the error for an input that is not a JSON object (null, an array, a string...). */
export const NOT_AN_OBJECT_ERROR = 'Error: Invalid input: input must be an object';

export function failure(text: string): CommandOutcome {
  return { text, isError: true };
}

/** Own enumerable string-keyed properties of a plain object, or null for anything that is not one. */
export function readInputFields(input: unknown): InputFields | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  return new Map(Object.entries(input));
}

/** `Error: unknown command X`, with X rendered safely whatever its type. */
export function unknownCommandError(command: unknown): string {
  return `Error: unknown command ${displayValue(command)}`;
}

/** Lone surrogates are the only way a JS string can fail to be well-formed Unicode. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A required text field (`file_text`, `old_str`, `insert_text`), or an optional one (`new_str`) that
 * defaults to `fallback` when absent (or undefined, from JS callers). A `null` is not absent: it is
 * rejected as not a string.
 */
export function readTextField(fields: InputFields, name: string, fallback?: string): Checked<string> {
  const given = fields.get(name);
  const value = given === undefined ? fallback : given;
  if (typeof value !== 'string') {
    return { ok: false, error: `Error: Invalid input: ${name} must be a string` };
  }
  if (LONE_SURROGATE.test(value)) {
    return { ok: false, error: `Error: Invalid input: ${name} must be well-formed Unicode text` };
  }
  return { ok: true, value };
}

/** `view_range` counts only when it is exactly two integers; anything else is ignored (spec §3 view). */
export function readViewRange(value: unknown): readonly [number, number] | null {
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [start, end] = value as unknown[];
  return Number.isInteger(start) && Number.isInteger(end) ? [start as number, end as number] : null;
}

/** An integer within [0, lineCount]; anything else (strings, fractions, null) is out of range. */
export function isInsertLineInRange(value: unknown, lineCount: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= lineCount;
}
