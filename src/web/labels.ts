import * as nunjucks from 'nunjucks';
import { escape, visible } from './filters';

/**
 * Short labels for long ids (session ids, tool_use ids, commit ids), decided per page: an id is cut to a
 * few characters where it shows, but two different ids on one page never get the same label. A fixed cut
 * cannot promise that (`sess_20261124T091500_acme` and `sess_20261130T091500_acme` both cut to
 * `sess_20…91500_acme`), so templates write a placeholder for every label (`idLabel`) and, once the page
 * is rendered, `resolveLabels` decides all of them together, widening the cuts of colliding ids until
 * every label names one id.
 */

/** How an id is shortened: cut in the middle (kind at the start, distinguishing end kept) or a prefix (commit ids). */
export type CutStyle = 'middle' | 'start';

export interface LabelSlot {
  id: string;
  /** Characters the label may have at first; 0: the whole id. */
  max: number;
  cut: CutStyle;
}

/** A cut shorter than the id by fewer characters than this shows the whole id instead. */
const MIN_SAVING = 6;

interface SlotState {
  chars: string[];
  cut: CutStyle;
  head: number;
  tail: number;
  full: boolean;
  /** The label for the current cut (kept up to date by settle). */
  label: string;
}

function labelOf(s: SlotState): string {
  if (s.full) return s.chars.join('');
  if (s.cut === 'start') return s.chars.slice(0, s.head).join('');
  return `${s.chars.slice(0, s.head).join('')}…${s.chars.slice(s.chars.length - s.tail).join('')}`;
}

/** Settle a slot's cut: whole when the cut would save too little. */
function settle(s: SlotState): void {
  const length = s.cut === 'start' ? s.head : s.head + 1 + s.tail;
  if (length > s.chars.length - (s.cut === 'start' ? 1 : MIN_SAVING)) s.full = true;
  s.label = labelOf(s);
}

function initial(slot: LabelSlot): SlotState {
  const chars = [...slot.id];
  const full = slot.max <= 0 || chars.length <= slot.max;
  const s: SlotState = { chars, cut: slot.cut, head: 0, tail: 0, full, label: full ? slot.id : '' };
  if (s.full) return s;
  if (slot.cut === 'start') {
    s.head = Math.max(slot.max, 1);
  } else {
    // The start says what kind of id it is; the end (a random suffix, a timestamp) usually tells ids apart.
    const keep = Math.max(slot.max - 1, 2);
    s.head = Math.ceil(keep * 0.4);
    s.tail = keep - s.head;
  }
  settle(s);
  return s;
}

function commonPrefix(a: string[], b: string[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * For each member, the most characters it shares with any other member at the start: in sorted order,
 * the longest common prefix with another string is with a neighbour.
 */
function sharedPrefixes(members: string[][]): number[] {
  const order = members.map((_, i) => i).sort((a, b) => compare(members[a], members[b]));
  const shared = new Array<number>(members.length).fill(0);
  for (let k = 1; k < order.length; k++) {
    const n = commonPrefix(members[order[k - 1]], members[order[k]]);
    shared[order[k - 1]] = Math.max(shared[order[k - 1]], n);
    shared[order[k]] = Math.max(shared[order[k]], n);
  }
  return shared;
}

function compare(a: string[], b: string[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

/**
 * The label of every slot (in order), such that equal labels always name the same id. A slot whose
 * label collides with another id's is widened just past the characters the colliding ids share (at the
 * end or at the start, whichever costs fewer characters) until no two ids share a label; at worst a slot
 * shows its whole id, and whole ids differ.
 */
export function distinctLabels(slots: readonly LabelSlot[]): string[] {
  const states = slots.map(initial);
  for (;;) {
    const byLabel = new Map<string, number[]>();
    states.forEach((s, i) => {
      const group = byLabel.get(s.label);
      if (group) group.push(i);
      else byLabel.set(s.label, [i]);
    });
    let widened = false;
    for (const group of byLabel.values()) {
      const ids = [...new Set(group.map((i) => slots[i].id))];
      if (ids.length < 2) continue;
      const chars = ids.map((id) => [...id]);
      const prefixes = sharedPrefixes(chars);
      const suffixes = sharedPrefixes(chars.map((c) => [...c].reverse()));
      const index = new Map(ids.map((id, k) => [id, k]));
      for (const i of group) {
        const s = states[i];
        if (s.full) continue;
        const k = index.get(slots[i].id)!;
        const head = Math.max(s.head + 1, prefixes[k] + 1);
        const tail = Math.max(s.tail + 1, suffixes[k] + 1);
        if (s.cut === 'start' || head - s.head < tail - s.tail) s.head = head;
        else s.tail = tail;
        settle(s);
        widened = true;
      }
    }
    if (!widened) return states.map((s) => s.label);
  }
}

/**
 * The placeholder a template writes where a label goes (the `idLabel` filter). Stored text reaches the
 * page only escaped, so it can never spell `<mg-label`: only templates write placeholders.
 */
export function labelPlaceholder(id: unknown, max = 0, cut: CutStyle = 'middle'): nunjucks.runtime.SafeString {
  const text = id === null || id === undefined ? '' : String(id);
  if (text === '') return new nunjucks.runtime.SafeString('');
  const style: CutStyle = cut === 'start' ? 'start' : 'middle';
  const limit = Number.isInteger(max) && max > 0 ? max : 0;
  return new nunjucks.runtime.SafeString(`<mg-label cut="${style}" max="${limit}" id="${escape(text)}">`);
}

const PLACEHOLDER = /<mg-label cut="(middle|start)" max="(\d+)" id="([^"]*)">/g;

const UNESCAPE: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** A rendered page with every label placeholder replaced by its label (escaped, invisible characters marked). */
export function resolveLabels(html: string): string {
  const found = [...html.matchAll(PLACEHOLDER)];
  if (found.length === 0) return html;
  const keys = new Map<string, number>();
  const slots: LabelSlot[] = [];
  for (const [token, cut, max, id] of found) {
    if (keys.has(token)) continue;
    keys.set(token, slots.length);
    slots.push({ id: id.replace(/&(amp|lt|gt|quot|#39);/g, (e) => UNESCAPE[e]), max: Number(max), cut: cut as CutStyle });
  }
  const labels = distinctLabels(slots).map((label) => visible(label).toString());
  return html.replace(PLACEHOLDER, (token) => labels[keys.get(token)!]);
}
