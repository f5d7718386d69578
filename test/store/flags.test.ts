/**
 * Flags on write, rule by rule: secretlint's recommended preset (run for real in its worker, under the
 * Node this suite runs on) finds the providers' keys; personal data (opt-in per store) is e-mail, phone,
 * IBANs that ibantools accepts and card numbers that pass the Luhn check, never look-alikes; what is kept
 * is masked; and the agent's result is the same whether a store flags or not.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { findPersonalData, luhn, mask } from '../../src/store/flags/personal-data';
import { SecretScanner } from '../../src/store/flags/secret-scanner';
import { makeTempDir, removeDir } from './git-helpers';

const QUIET = { log: () => undefined };
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function found(text: string): Array<[string, string]> {
  return findPersonalData(text).map((f) => [f.rule, text.slice(f.start, f.end)]);
}

describe('personal data', () => {
  test('card numbers are flagged only when they pass the Luhn check', () => {
    expect(luhn('4111111111111111')).toBe(true);
    expect(luhn('4111111111111112')).toBe(false);
    expect(found('visa 4111 1111 1111 1111 exp 12/29')).toEqual([['card', '4111 1111 1111 1111']]);
    expect(found('amex 3782-822463-10005')).toEqual([['card', '3782-822463-10005']]);
    expect(found('mc 5555555555554444.')).toEqual([['card', '5555555555554444']]);
    // Same shape, wrong check digit: an order number, not a card.
    expect(found('order 4111 1111 1111 1112')).toEqual([]);
    expect(found('tracking 1234567890123456')).toEqual([]);
    expect(found('0000 0000 0000 0000')).toEqual([]); // passes Luhn, but no card is all one digit
  });

  test('IBANs are flagged only when ibantools accepts them; e-mail and phone numbers', () => {
    expect(found('pay to GB82 WEST 1234 5698 7654 32 today')).toEqual([['iban', 'GB82 WEST 1234 5698 7654 32']]);
    expect(found('pay to DE89370400440532013000')).toEqual([['iban', 'DE89370400440532013000']]);
    expect(found('pay to GB82 WEST 1234 5698 7654 33 today')).toEqual([]); // bad checksum
    expect(found('write to dana.smith+acme@mail.example.com')).toEqual([['email', 'dana.smith+acme@mail.example.com']]);
    expect(found('call +44 20 7946 0958 or (415) 555-0134')).toEqual([
      ['phone', '+44 20 7946 0958'],
      ['phone', '(415) 555-0134'],
    ]);
    expect(found('version 1.2.3, 2026-12-02, port 8080')).toEqual([]);
  });

  test('a masked value keeps its shape, never its content', () => {
    expect(mask('4111 1111 1111 1111')).toBe('411************11 (19 chars)');
    expect(mask('dana@acme.example')).toBe('dan************le (17 chars)');
    expect(mask('12345')).toBe('*****');
  });
});

describe('secrets: secretlint recommended preset', () => {
  const scanner = new SecretScanner();
  afterAll(() => scanner.close());

  test.each([
    ['anthropic', `key sk-ant-api03-Zq7XvN2pL9wR4tY8uI1oP5aS3dF6gH0jK${'A'.repeat(60)}AA`],
    ['openai', 'OPENAI_API_KEY=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'],
    ['aws', 'aws_access_key_id = AKIAQ3EGUPRTYZ4XN7DL\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKQ'],
    ['github', 'token ghp_R3dact3dT0kenV4lue1234567890abcdEFGH'],
    ['slack', 'bot xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'],
    ['privatekey', `deploy key:\n${generateKeyPairSync('rsa', { modulusLength: 1024, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey}`],
  ])('%s', async (rule, text) => {
    expect((await scanner.scan(text)).map((f) => f.rule)).toEqual([rule]);
  });

  test('ordinary memory text is not flagged', async () => {
    expect(await scanner.scan('# Acme\nplan: enterprise\nprefers e-mail on Mondays; ticket ABC-12345\n')).toEqual([]);
  });

  test('a worker left idle is ended, and the next scan starts another', async () => {
    const idle = new SecretScanner({ idleMs: 100 });
    const token = 'token ghp_R3dact3dT0kenV4lue1234567890abcdEFGH';
    try {
      expect(idle.running).toBe(false);
      // Two scans at once, then none: the worker stays for both answers, and is ended only after the last.
      const both = await Promise.all([idle.scan(token), idle.scan('nothing here')]);
      expect(both.map((findings) => findings.map((f) => f.rule))).toEqual([['github'], []]);
      expect(idle.running).toBe(true);
      for (let waited = 0; idle.running && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(idle.running).toBe(false);
      expect((await idle.scan(token)).map((f) => f.rule)).toEqual(['github']);
      expect(idle.running).toBe(true);
    } finally {
      await idle.close();
    }
    expect(idle.running).toBe(false);
  });
});

describe('on write', () => {
  const calls = [
    { command: 'create', path: '/memories/people.md', file_text: 'Dana: card 4111 1111 1111 1111, dana@acme.example\n' },
    { command: 'insert', path: '/memories/people.md', insert_line: 1, insert_text: 'order ref 4111 1111 1111 1112' }, // fails Luhn
    { command: 'create', path: '/memories/keys.md', file_text: 'github: ghp_R3dact3dT0kenV4lue1234567890abcdEFGH\n' },
  ];

  async function run(options: { flags?: boolean; flagPersonalData?: boolean }) {
    const dir = makeTempDir('memgit-flags-');
    dirs.push(dir);
    const store = await MemoryStore.open(dir, { ...QUIET, ...options });
    const results = [];
    for (const [i, input] of calls.entries()) {
      results.push(await store.execute({ type: 'tool_use', id: `toolu_p${i}`, name: 'memory', input }, { session: 'sess_p' }));
    }
    await store.flags.idle();
    if (options.flags !== false) await store.flags.catchUp(store.history); // every commit scanned (it runs in the background)
    const flagged = store.flags.all().map((f) => ({ call: f.toolUseId, findings: f.findings.map((x) => [x.kind, x.rule, x.line, x.masked]) }));
    await store.close();
    return { results, flagged };
  }

  test('opted in, a card passing Luhn is flagged (masked); the agent gets the same results as from a store that flags nothing', async () => {
    const off = await run({ flags: false });
    const secretsOnly = await run({});
    const personal = await run({ flagPersonalData: true });
    expect(secretsOnly.results).toEqual(off.results);
    expect(personal.results).toEqual(off.results);
    expect(off.flagged).toEqual([]);
    expect(secretsOnly.flagged).toEqual([{ call: 'toolu_p2', findings: [['secret', 'github', 1, 'ghp************GH (40 chars)']] }]);
    expect(personal.flagged).toEqual([
      { call: 'toolu_p0', findings: [['personal', 'card', 1, '411************11 (19 chars)'], ['personal', 'email', 1, 'dan************le (17 chars)']] },
      { call: 'toolu_p2', findings: [['secret', 'github', 1, 'ghp************GH (40 chars)']] },
    ]);
    expect(JSON.stringify(personal.flagged)).not.toMatch(/4111 1111|dana@|R3dact3d/);
  });

  test('a history scanned without findings is not scanned again by the next process that opens the store', async () => {
    const dir = makeTempDir('memgit-flags-rescan-');
    dirs.push(dir);
    let store = await MemoryStore.open(dir, QUIET);
    await store.execute({ type: 'tool_use', id: 'toolu_clean', name: 'memory', input: calls[0] }, { session: 'sess_p' });
    await store.flags.catchUp(store.history);
    await store.close();
    expect(fs.existsSync(path.join(dir, '.git', 'memgit', 'flags-v1.jsonl'))).toBe(false); // nothing flagged
    // A secret written by a process that does not flag.
    store = await MemoryStore.open(dir, { ...QUIET, flags: false });
    await store.execute({ type: 'tool_use', id: 'toolu_secret', name: 'memory', input: calls[2] }, { session: 'sess_p' });
    await store.close();
    // The next flagging process scans what came after the last scanned commit, and nothing before it.
    const scans = jest.spyOn(SecretScanner.prototype, 'scan');
    try {
      store = await MemoryStore.open(dir, QUIET);
      await store.flags.catchUp(store.history);
      expect(store.flags.all().map((f) => f.toolUseId)).toEqual(['toolu_secret']);
      expect(scans.mock.calls.map(([text]) => text)).toEqual([calls[2].file_text!.trimEnd()]);
      await store.close();
    } finally {
      scans.mockRestore();
    }
    const head = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(JSON.parse(fs.readFileSync(path.join(dir, '.git', 'memgit', 'flags-state-v1.json'), 'utf8')).through).toBe(head);
  });
});
