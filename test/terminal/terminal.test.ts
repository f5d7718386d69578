/** What `memgit chat` prints can come from a prompt-injected model: it must not drive the terminal. */
import { formatMemoryCall } from '../../src/terminal/calls';
import { forTerminal, logField } from '../../src/terminal/escape';

test('a memory call line escapes escape sequences, bidi and line breaks, and stays bounded', () => {
  const line = formatMemoryCall({
    toolUseId: 'toolu_01\u001b]52;c;aGk=\u0007',
    command: 'create',
    path: '/memories/\u202egnp.exe\u001b[2J',
    ok: false,
    error: `Error: first line\nsecond line\r\n${'x'.repeat(500)}`,
  });
  expect(line).toBe(
    'memory create /memories/\\u{202e}gnp.exe\\u{1b}[2J: error: first line second line ' +
      `${'x'.repeat(159 - 'first line second line '.length)}… (toolu_01\\u{1b}]52;c;aGk=\\u{7})`,
  );
  expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
});

test('streamed text keeps newlines and tabs and escapes every other control or format character', () => {
  expect(forTerminal('a\tb\nc\u001b[31mred\u009b\u200b\u2028')).toBe('a\tb\nc\\u{1b}[31mred\\u{9b}\\u{200b}\\u{2028}');
  expect(forTerminal('plain text, émoji 😀')).toBe('plain text, émoji 😀');
  expect(logField('ok')).toBe('ok');
});
