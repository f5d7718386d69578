import { randomBytes } from 'node:crypto';

/** A fresh, sortable session id such as `sess_20261202T140312_k3f9` (UTC time, then 4 random chars). */
export function newSessionId(prefix = 'sess', now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '');
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const random = [...randomBytes(4)].map((b) => alphabet[b % alphabet.length]).join('');
  return `${prefix}_${stamp}_${random}`;
}
