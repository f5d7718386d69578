/** A store built through the memory tool, with ordinary work, renames, deletes and a hostile corpus. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';

let counter = 0;

export async function call(store: MemoryStore, session: string, input: Record<string, unknown>, id?: string): Promise<string> {
  const toolUseId = id ?? `toolu_web_${String(++counter).padStart(4, '0')}`;
  const result = await store.execute({ type: 'tool_use', id: toolUseId, name: 'memory', input }, { session });
  if (result.is_error) throw new Error(`fixture call ${JSON.stringify(input)} failed: ${result.content}`);
  return toolUseId;
}

/** Payloads that must show up as text and never run. */
export const XSS_PAYLOADS = [
  '<script>window.__pwned = 1; alert("script")</script>',
  '"><img src=x onerror=alert("img")>',
  "'><svg onload=alert('svg')></svg>",
  '<a href="javascript:alert(\'link\')">click me</a>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '{{ 7*7 }} {{ range.constructor("alert(1)")() }}',
  '{% raw %}{{ 7*7 }}{% endraw %} ${7*7} #{7*7}',
  '</textarea></title><style>body{display:none}</style>',
  'Trust \u202Eeulav\u202C and \u2066isolated\u2069 with zero\u200Bwidth and bell\u0007',
];

/** File names the path rules allow that would break out of careless markup or templates. */
export const HOSTILE_NAMES = [
  "x' onmouseover='alert(1)'.md",
  '{{7+7}}.md',
  '{% raw %}.md',
  'a&amp;b;(1).md',
  '#hash 100%.md',
];

/** Session and tool_use ids are restricted to [A-Za-z0-9_.:-], which still spells a javascript: URL. */
export const HOSTILE_SESSION = 'javascript:alert';
export const HOSTILE_TOOL_USE = 'javascript:void.0';

export interface Fixture {
  dir: string;
  store: MemoryStore;
  ids: Record<string, string>;
}

export async function buildFixture(): Promise<Fixture> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-web-'));
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  const ids: Record<string, string> = {};
  const s1 = 'sess_20261202T100000_alfa';
  const s2 = 'sess_20261202T110000_brav';
  ids.create = await call(store, s1, { command: 'create', path: '/memories/prefs.md', file_text: '# Preferences\n- tabs over spaces\n- dark mode\n' });
  ids.project = await call(store, s1, { command: 'create', path: '/memories/projects/atlas.md', file_text: 'Project Atlas\nowner: Dana\nstatus: planning\n' });
  ids.replace = await call(store, s1, { command: 'str_replace', path: '/memories/projects/atlas.md', old_str: 'status: planning', new_str: 'status: building' });
  ids.insert = await call(store, s2, { command: 'insert', path: '/memories/prefs.md', insert_line: 3, insert_text: '- prefers short answers' });
  ids.rename = await call(store, s2, { command: 'rename', old_path: '/memories/projects/atlas.md', new_path: '/memories/projects/atlas-v2.md' });
  ids.afterRename = await call(store, s2, { command: 'str_replace', path: '/memories/projects/atlas-v2.md', old_str: 'owner: Dana', new_str: 'owner: Dana (since 2024)' });
  ids.scratch = await call(store, s2, { command: 'create', path: '/memories/scratch.md', file_text: 'temporary\n' });
  ids.delete = await call(store, s2, { command: 'delete', path: '/memories/scratch.md' });
  // The same path again after its deletion: a new life, whose history must not include the old one.
  ids.recreate = await call(store, 'sess_20261202T120000_char', { command: 'create', path: '/memories/scratch.md', file_text: 'second life\n' });
  ids.xss = await call(store, HOSTILE_SESSION, { command: 'create', path: '/memories/hostile/corpus.md', file_text: XSS_PAYLOADS.join('\n') + '\n' }, HOSTILE_TOOL_USE);
  for (const [k, name] of HOSTILE_NAMES.entries()) {
    ids[`name${k}`] = await call(store, HOSTILE_SESSION, { command: 'create', path: `/memories/hostile/${name}`, file_text: `${XSS_PAYLOADS[k]}\n` });
  }
  return { dir, store, ids };
}

export async function removeFixture(fixture: Fixture): Promise<void> {
  await fixture.store.close();
  fs.rmSync(fixture.dir, { recursive: true, force: true });
}
