import * as path from 'node:path';
import { Command, Option } from 'commander';
import { createKey, KeyError, KeyInfo, listKeys, revokeKey, SCOPES, Scope } from '../../tenancy/keys';
import { fail } from '../options';
import { DEFAULT_ROOT } from './server';

/** `memgit keys create|list|revoke`: the API keys of a `memgit server` root. */
export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .summary('make, list and revoke the API keys of a memgit server root')
    .description(
      'API keys for `memgit server`. A key is printed once, when it is made; the root keeps only its hash ' +
        '(in <root>/.memgit/keys.json, mode 0600). Scopes nest: read (history through the JSON API) < ' +
        'write (also the memory tool) < operator (also rollbacks). A running server sees changes at once.',
    );
  const rootOption = () => new Option('--root <dir>', 'the server root holding the stores').default(DEFAULT_ROOT);

  keys
    .command('create')
    .description('make a key for the stores matching a pattern; prints the key once')
    .addOption(rootOption())
    .requiredOption('--stores <patterns>', "store ids the key reaches: * and ? wildcards, comma-separated (e.g. 'acme-*')")
    .addOption(new Option('--scope <scope>', 'what the key may do').choices([...SCOPES]).default('write'))
    .option('--no-create', 'writes with this key never create a store (by default write and operator keys may)')
    .option('--note <text>', 'a label for `keys list` (one line)')
    .addOption(new Option('--review <policy>', "writes with this key wait for review: flagged (when the detectors hold them) or all; the stricter of this and the store's policy applies").choices(['off', 'flagged', 'all']))
    .option('--json', 'print {"key": ..., "info": {...}}')
    .action(async (options: { root: string; stores: string; scope: Scope; create: boolean; note?: string; review?: 'off' | 'flagged' | 'all'; json?: boolean }) => {
      const made = await guard(() =>
        createKey(path.resolve(options.root), {
          stores: [options.stores],
          scope: options.scope,
          create: options.scope === 'read' ? false : options.create,
          note: options.note,
          review: options.review,
        }),
      );
      if (options.json) {
        process.stdout.write(`${JSON.stringify(made)}\n`);
        return;
      }
      process.stdout.write(`${made.key}\n`);
      process.stderr.write(
        `memgit: key ${made.info.id} (${made.info.scope}, stores ${made.info.stores.join(',')}${made.info.create ? ', may create stores' : ''}${made.info.review ? `, writes need review (${made.info.review})` : ''}); ` +
          'this is the only time it is shown\n',
      );
    });

  keys
    .command('list')
    .description('list the keys (ids, patterns, scopes; never the keys themselves)')
    .addOption(rootOption())
    .option('--json', 'one JSON object per line')
    .action(async (options: { root: string; json?: boolean }) => {
      const all = await guard(() => listKeys(path.resolve(options.root)));
      if (options.json) {
        for (const key of all) process.stdout.write(`${JSON.stringify(key)}\n`);
        return;
      }
      if (all.length === 0) process.stderr.write('memgit: no keys yet (memgit keys create --stores PATTERN --scope write)\n');
      else process.stdout.write(formatKeys(all));
    });

  keys
    .command('revoke <id>')
    .description('revoke a key by its id (see `keys list`); a running server refuses it from its next request')
    .addOption(rootOption())
    .option('--json', 'print {"id": ..., "revoked": true|false}')
    .action(async (id: string, options: { root: string; json?: boolean }) => {
      const changed = await guard(() => revokeKey(path.resolve(options.root), id));
      if (options.json) process.stdout.write(`${JSON.stringify({ id, revoked: true, already: !changed })}\n`);
      else process.stdout.write(changed ? `revoked ${id}\n` : `${id} was already revoked\n`);
    });
}

/** What a key lets its holder do, in words (scopes nest; creating stores is a separate grant). */
export function keyAbilities(key: Pick<KeyInfo, 'scope' | 'create' | 'review'>): string {
  const may = ['read history', ...(key.scope === 'read' ? [] : ['write memory']), ...(key.scope === 'operator' ? ['roll back'] : [])];
  if (key.create && key.scope !== 'read') may.push('create stores');
  if (key.review && key.scope !== 'read') may.push(`writes need review (${key.review})`);
  return may.join(', ');
}

/** The keys as a table with a header, columns aligned; the note (free text, one line) last. */
function formatKeys(all: KeyInfo[]): string {
  const rows = [
    ['ID', 'SCOPE', 'STORES', 'MAY', 'CREATED', 'STATE', 'NOTE'],
    ...all.map((key) => [key.id, key.scope, key.stores.join(','), keyAbilities(key), key.created, key.revoked ? `revoked ${key.revoked}` : 'live', key.note ?? '']),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd()).join('\n') + '\n';
}

async function guard<T>(task: () => Promise<T>): Promise<T> {
  try {
    return await task();
  } catch (error) {
    if (error instanceof KeyError) fail(error.message);
    throw error;
  }
}
