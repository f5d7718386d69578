/**
 * Text from the model (or from a document that prompt-injected it) must not drive the user's terminal:
 * escape sequences can rewrite the screen, set the clipboard (OSC 52) or disguise links, and bidi
 * controls can reorder what is shown. These helpers make such characters visible as `\u{…}` instead.
 */

// C0 controls except tab and newline, DEL, C1 controls, format characters (bidi, zero-width), separators.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

const escape = (ch: string) => `\\u{${ch.codePointAt(0)!.toString(16)}}`;

/** Streamed text for a terminal: newlines and tabs kept, every other control or format character escaped. */
export function forTerminal(text: string): string {
  return text.replace(UNSAFE, escape);
}

/** One bounded log line: line breaks become spaces, other controls are escaped, long text is cut. */
export function logField(text: string, maxLength = 160): string {
  const flat = text.replace(/\r\n|[\r\n\t]/g, ' ').replace(UNSAFE_IN_LINE, escape);
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}
