import { isNewId, newIdProblem } from '../../src/contract/ids';

describe('ids a new call or session may take', () => {
  it.each(['toolu_01ABC', 'a', 'abc', 'sess_20261124T091500_acme', 'toolu_deadbeef', 'x'.repeat(128), 'session:1.2-3', 'g123', 'dead-beef'])('accepts %j', (id) => {
    expect(newIdProblem(id)).toBeNull();
    expect(isNewId(id)).toBe(true);
  });

  it.each(['dead', 'DEADBEEF', '0123456789ab', 'a'.repeat(40), 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'])('refuses %j, which reads as a commit id', (id) => {
    expect(newIdProblem(id)).toMatch(/could be read as a commit id/);
  });

  it.each(['.', '..', '...'])('refuses %j, only dots', (id) => {
    expect(newIdProblem(id)).toMatch(/only dots/);
  });

  it.each(['commit:abc', 'call:toolu_1'])('refuses %j, which starts with a kind prefix', (id) => {
    expect(newIdProblem(id)).toMatch(/names a kind of id/);
  });

  it('keeps the alphabet rule first; 41 hex digits are no object id', () => {
    expect(newIdProblem('a b')).toMatch(/1-128 of/);
    expect(newIdProblem('a'.repeat(41))).toBeNull();
  });
});
