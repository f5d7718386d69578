/** The fixed, path-free texts a store failure is answered with, and how errors are classified. */
import { classifyFault, describeError, faultText, isApiMisuse } from '../../src/store/fault';
import { InvalidToolUseError, LockTimeoutError, StoreClosedError, StoreCorruptError } from '../../src/store/errors';

const errno = (code: string) => Object.assign(new Error(`${code}: failed, open '/home/u/store/.git/x'`), { code });

test.each([
  ['ENOSPC', 'disk-full', 'the disk is full'],
  ['EDQUOT', 'disk-full', 'the disk is full'],
  ['EIO', 'io', 'an I/O error occurred'],
  ['EACCES', 'permission', 'permission was denied'],
  ['EROFS', 'permission', 'permission was denied'],
  ['EMFILE', 'other', 'an internal error occurred'],
])('%s is a %s fault', (code, kind, reason) => {
  expect(classifyFault(errno(code))).toBe(kind);
  // Wrapped errors are classified by their cause.
  expect(classifyFault(Object.assign(new StoreCorruptError('HEAD of /home/u/store does not resolve'), { cause: errno(code) }))).toBe(kind);
  expect(faultText(classifyFault(errno(code)))).toBe(`Error: The memory store could not complete this command (${reason}). Nothing was changed.`);
});

test('a lock held too long by another writer, and errors with no code', () => {
  expect(classifyFault(new LockTimeoutError('/home/u/store/.git/memgit-write.lock', 60_000))).toBe('busy');
  expect(classifyFault(new Error('Could not find abc.'))).toBe('other');
  expect(classifyFault('a string')).toBe('other');
});

test('only misuse of the API is thrown; the operator log keeps the details', () => {
  expect(isApiMisuse(new StoreClosedError())).toBe(true);
  expect(isApiMisuse(new InvalidToolUseError('x'))).toBe(true);
  expect(isApiMisuse(errno('EIO'))).toBe(false);
  const wrapped = Object.assign(new StoreCorruptError('HEAD of /home/u/store does not resolve'), { cause: errno('EIO') });
  expect(describeError(wrapped)).toContain('/home/u/store/.git/x');
  expect(describeError(errno('ENOSPC'))).toContain('ENOSPC');
});
