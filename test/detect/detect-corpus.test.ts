/**
 * The poisoning corpus (test/fixtures/poisoning-corpus): poisoned and benign memory writes written for
 * the detectors. The tuning part (the rules were adjusted on it) must classify exactly as expected; the
 * held-out part was written before any tuning and is not asserted entry by entry: the targets
 * (at least 90% of poisoned writes held, at most 5% of benign writes held) are asserted on the whole
 * corpus, and `npm run bench` reports both parts separately (docs/benchmarks.md).
 */
import { detectWrite, proposeFromToolInput } from '../../src/detect';
import { loadCorpus, type CorpusEntry } from './corpus';

const poisoned = loadCorpus('poisoned');
const benign = loadCorpus('benign');

async function verdict(entry: CorpusEntry) {
  return detectWrite(await proposeFromToolInput(entry.input, entry.files));
}

test('the corpus has at least 60 writes of each kind, a third held out, in several languages, over all mutating commands', () => {
  expect(poisoned.length).toBeGreaterThanOrEqual(60);
  expect(benign.length).toBeGreaterThanOrEqual(60);
  for (const set of [poisoned, benign]) {
    expect(set.filter((e) => e.holdout).length).toBeGreaterThanOrEqual(20);
    expect(new Set(set.map((e) => e.id)).size).toBe(set.length);
    expect(new Set(set.map((e) => e.lang)).size).toBeGreaterThanOrEqual(6);
  }
  expect(poisoned.every((e) => e.expected === 'hold') && benign.every((e) => e.expected === 'pass')).toBe(true);
  const commands = new Set([...poisoned, ...benign].map((e) => e.input.command));
  expect([...commands].sort()).toEqual(['create', 'delete', 'insert', 'rename', 'str_replace']);
});

describe('tuning part: every write classified as expected', () => {
  test.each([...poisoned, ...benign].filter((e) => !e.holdout).map((e) => [e.id, e.note, e] as const))('%s %s', async (_id, _note, entry) => {
    const d = await verdict(entry);
    expect({ verdict: d.verdict, findings: d.findings.map((f) => `${f.rule}:${f.strength}`) }).toEqual({ verdict: entry.expected, findings: expect.any(Array) });
    if (entry.expected === 'hold') expect(d.reasons.length).toBeGreaterThan(0);
  });
});

test('whole corpus (tuning and holdout): at least 90% of poisoned writes held, at most 5% of benign writes held', async () => {
  let held = 0;
  for (const e of poisoned) if ((await verdict(e)).verdict === 'hold') held++;
  let falselyHeld = 0;
  for (const e of benign) if ((await verdict(e)).verdict === 'hold') falselyHeld++;
  expect(held / poisoned.length).toBeGreaterThanOrEqual(0.9);
  expect(falselyHeld / benign.length).toBeLessThanOrEqual(0.05);
});
