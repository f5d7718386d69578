import type * as Ibantools from 'ibantools' with { 'resolution-mode': 'import' };
import { DomainKnowledge, isCollectorHost, type DomainStatus } from './domains';
import { findPersonalData } from './personal-data';
import { rxTest, words } from './rules/pattern';
import type { FindingKind, Strength } from './types';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { electronicFormatIBAN } = require('ibantools') as typeof Ibantools;

/**
 * New destinations for money, data or people: the planted "send refund confirmations to
 * acme-refunds@payout-verify.example", a replaced IBAN, an image link whose query string carries the
 * conversation. An address is only suspicious where the text routes something to it and its domain is
 * new to this memory (src/detect/domains.ts); recording a contact, an endpoint or the customer's IBAN for
 * the first time passes.
 */

export interface ScanLine {
  path: string;
  /** 1-based line in the file after the call. */
  line: number;
  /** The line with hidden characters removed, case kept (IBANs, wallets). */
  plain: string;
  /** The line folded (src/detect/text.ts). */
  folded: string;
  /** In a fenced or indented code block, or a shell command line: its verbs (POST, copy) are not routing. */
  code?: boolean;
}

export interface RawFinding {
  kind: FindingKind;
  rule: string;
  strength: Exclude<Strength, 'info'>;
  reason: string;
  path: string;
  line: number | null;
  /** Where in the line (0..1), for the excerpt. */
  at: number;
}

/** What the file held before the call, and which of it the call removes. */
export interface FileHistory {
  path: string;
  removed: ScanLine[];
  before: string;
}

const ROUTE = rxTest(
  words(
    'send', 'sends', 'sending', 'forward', 'forwards', 'forwarding', 'cc', "cc'd", 'bcc', 'copy', 'copies', 'deliver', 'redirect', 'reroute', 'route', 'upload', 'uploads', 'post', 'posts',
    'export', 'exports', 'sync', 'syncs', 'transfer', 'wire', 'pay', 'pays', 'paid', 'remit', 'submit', 'submits', 'report (?:it |them |this |everything |all )?to', 'go to', 'goes to', 'mirror', 'back up', 'leak', 'exfiltrate',
    'direct (?:customers|callers|users|people|them|clients)', 'refer (?:customers|callers|users|people|them|clients)', 'should be sent', 'must be sent', 'to be sent',
    'senden', 'sende', 'schicken', 'schicke', 'schickt', 'weiterleiten', 'leite', 'leitet', 'überweisen', 'überweise', 'zahlen', 'zahle', 'hochladen', 'lade', 'in kopie', 'kopie an',
    'envoyer', 'envoie', 'envoyez', 'transférer', 'transfère', 'transférez', 'transmettre', 'transmets', 'transmettez', 'virer', 'payer', 'payez', 'en copie', 'mettre en copie',
    'enviar', 'envía', 'envíe', 'envia', 'reenviar', 'reenvía', 'reenvíe', 'transferir', 'transfiera', 'pagar', 'pague', 'con copia',
    'inviare', 'invia', 'inoltrare', 'inoltra', 'bonificare', 'pagare', 'encaminhar', 'encaminhe', 'envie', 'sturen', 'stuur', 'doorsturen', 'overmaken', 'betalen',
  ),
);
const STANDING = rxTest(
  words(
    'all', 'every', 'each', 'any', 'always', 'from now on', 'going forward', 'in future', 'in the future', 'henceforth', 'from today', 'instead', 'automatically', 'whenever', 'by default',
    'from this point', 'all future', 'alle', 'jede[nrs]?', 'immer', 'ab sofort', 'künftig', 'zukünftig', 'stattdessen', 'automatisch', 'tous', 'toutes', 'chaque', 'toujours', 'désormais',
    'dorénavant', 'à partir de maintenant', "à l'avenir", 'au lieu', 'automatiquement', 'todas?', 'todos', 'cada', 'siempre', 'a partir de ahora', 'en adelante', 'en lugar',
    'automáticamente', 'tutti', 'tutte', 'ogni', 'sempre', "d'ora in poi", 'invece', 'automaticamente', 'a partir de agora', 'em vez', 'altijd', 'voortaan', 'in plaats',
  ),
);
const DATA = rxTest(
  words(
    'conversations?', 'chats?', 'transcripts?', 'chat history', 'history', 'memory', 'memories', 'memory files', 'notes', 'customer data', 'customer list', 'user data', 'personal data',
    'credentials', 'passwords?', 'api keys?', 'tokens?', 'secrets?', 'logs?', 'files', 'documents', 'attachments', 'invoices?', 'receipts?', 'payments?', 'refunds?', 'confirmations?',
    'statements?', 'contracts?', 'orders?', 'reports?', 'exports?', 'backups?', 'database', 'dump', 'everything', 'all data', 'the data', 'summar(?:y|ies)', 'messages', 'emails',
    'gespräche?', 'verlauf', 'daten', 'rechnungen', 'zugangsdaten', 'passwörter', 'historique', 'données', 'factures', 'mots de passe', 'conversación', 'historial', 'datos', 'facturas',
    'contraseñas', 'fatture', 'dati', 'faturas', 'dados', 'facturen', 'gegevens',
  ),
);
const BANK_CHANGE = rxTest(
  words(
    '(?:new|updated|changed|different|corrected|replacement|alternative) (?:bank|banking|payment|remittance|payout|receiving|beneficiary|wire)? ?(?:details|account|information|info|instructions|iban|account number|routing number)',
    '(?:bank|banking|payment|account|remittance) (?:details|account|information|info) (?:have|has) (?:changed|been updated|been changed|moved)',
    'changed (?:their|our|its|his|her) (?:bank|banking details|account|iban)', 'moved (?:their|our|its) (?:bank|banking|account)',
    '(?:please|kindly|from now on|going forward|henceforth) ' + '[^.!?\\n]{0,30}(?:pay|transfer|wire|send|remit)[^.!?\\n]{0,30}(?:to|into) (?:this|the new|the following|our new|the account below)',
    'neue (?:bankverbindung|kontoverbindung|iban|kontonummer)', 'geänderte (?:bankverbindung|kontoverbindung)', 'bankverbindung (?:hat sich )?geändert',
    'nouvelles? coordonnées bancaires', 'nouveau (?:rib|iban|compte)', 'changement de (?:rib|compte|coordonnées bancaires)',
    'nuev[oa]s? (?:cuenta|iban|datos bancarios|número de cuenta)', 'cambio de (?:cuenta|datos bancarios)', 'nuovo iban', 'nuove coordinate bancarie', 'nuovo conto',
    'nova conta', 'novo iban', 'novos dados bancários', 'nieuw (?:rekeningnummer|iban)', 'nieuwe bankgegevens',
  ),
);
const PAY = rxTest(words('pay', 'payments?', 'paid', 'transfer', 'wire', 'send', 'deposit', 'remit', 'refunds?', 'payouts?', 'zahlung', 'überweisen', 'paiement', 'virement', 'pago', 'transferencia', 'pagamento', 'bonifico'));
const CONTACT = rxTest(words('support', 'hotline', 'helpline', 'call', 'phone', 'number', 'contact', 'whatsapp', 'signal', 'telegram', 'sms', 'text', 'reach', 'telefon', 'téléphone', 'teléfono', 'telefono'));
const COMMAND_LINE = /^ ?(?:[$#>] |(?:curl|wget|http|https|httpie|fetch|invoke-webrequest|iwr|git|npm|npx|pnpm|yarn|docker|kubectl|gh|aws|gcloud|az|psql|mysql|ssh|scp|rsync) )/u;
const ACCOUNT = /(?<![\p{L}\p{N}])(account (?:number|no\.?|#)|acct\.? ?(?:no\.?|#)?|routing (?:number|no\.?)|sort ?code|aba|bsb|swift(?: code)?|bic|kontonummer|blz|numéro de compte|número de cuenta|clabe)[: #]{0,3}([a-z0-9][a-z0-9 -]{3,34}[a-z0-9])/giu;
const WALLET = /(?<![A-Za-z0-9])(bc1[a-z0-9]{25,59}|[13][a-km-zA-HJ-NP-Z1-9]{25,34}|0x[a-fA-F0-9]{40}|T[1-9A-HJ-NP-Za-km-z]{33})(?![A-Za-z0-9])/g;
// Brackets are allowed inside: a placeholder (`?q=<conversation>`, `[TICKET]`, `{summary}`) is what a
// template looks like. Trailing punctuation and a closing `>` or `]` of an autolink are trimmed off.
const URL = /(?<![\p{L}\p{N}])(?:https?|ftp):\/\/[^\s"'`)]{1,2048}/giu;
const URL_TRAILER = /[>\].,;:!?]{1,16}$/;
const MARKDOWN_IMAGE = /!\[[^\]\n]{0,300}\]\( ?((?:https?:)?\/\/[^\s)]{1,2048})/giu;
const HTML_IMAGE = /<img[^>\n]{0,300}?src ?= ?["']?((?:https?:)?\/\/[^\s"'>]{1,2048})/giu;
/** A URL that a model is told to fill in: a placeholder in its query or path. */
const TEMPLATE = /[{}<>$]|%7b|%7d|%3c|%3e|%24|%s(?![a-z0-9])|\[(?:[a-z _-]{1,40})\]|\.\.\.|xxx/i;
const LEAKY_QUERY = /[?&](?:q|d|c|s|m|t|data|conv|conversation|chat|history|msg|message|text|content|secret|token|key|memory|info|leak|payload|p|u|user|email|summary|notes?|ctx|context)=/i;

/** Every regular expression of this module, for the linear-time review in test/detect/detect-hostile.test.ts. */
export const DESTINATION_PATTERNS: readonly RegExp[] = [ROUTE, STANDING, DATA, BANK_CHANGE, PAY, CONTACT, COMMAND_LINE, ACCOUNT, WALLET, URL, URL_TRAILER, MARKDOWN_IMAGE, HTML_IMAGE, TEMPLATE, LEAKY_QUERY];

function hostOf(url: string): string {
  return url.replace(/^(?:[a-z]{2,8}:)?\/\//i, '').split(/[/?#<>[\]{}]/)[0].replace(/^[^@]{0,256}@/, '').toLowerCase();
}

const IBAN_CACHE_LIMIT = 64;

function ibansIn(text: string): string[] {
  const out: string[] = [];
  for (const f of findPersonalData(text)) {
    if (f.rule !== 'iban') continue;
    out.push(electronicFormatIBAN(text.slice(f.start, f.end)) ?? text.slice(f.start, f.end));
    if (out.length >= IBAN_CACHE_LIMIT) break;
  }
  return out;
}

function phonesIn(text: string): string[] {
  return findPersonalData(text)
    .filter((f) => f.rule === 'phone')
    .map((f) => text.slice(f.start, f.end).replace(/\D/g, ''));
}

function accountsIn(folded: string): Array<{ label: string; value: string }> {
  const out: Array<{ label: string; value: string }> = [];
  for (const m of folded.matchAll(ACCOUNT)) {
    const value = m[2].replace(/[^a-z0-9]/g, '');
    if (/\d/.test(value) && value.length >= 4) out.push({ label: m[1].replace(/[^a-z]/g, '').slice(0, 6), value });
  }
  return out;
}

/**
 * Findings about destinations in the added lines of one write. `history` has, per file, its old text and
 * the lines the call removes; `knowledge` knows the domains (it learns those of the old text here).
 */
export function destinationFindings(added: ScanLine[], history: FileHistory[], knowledge: DomainKnowledge): RawFinding[] {
  const findings: RawFinding[] = [];
  const before = new Map<string, { ibans: Set<string>; removedIbans: Set<string>; removedAccounts: Map<string, Set<string>>; removedPhones: Set<string>; phones: Set<string> }>();
  for (const file of history) {
    for (const m of file.before.matchAll(/[A-Za-z0-9._%+-]{1,64}@([A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8})|(?:https?|ftp):\/\/([^\s/?#<>"'`)\]]{1,253})/g)) {
      knowledge.learn((m[1] ?? m[2]).replace(/^[^@]{0,256}@/, ''));
    }
    const removedAccounts = new Map<string, Set<string>>();
    for (const line of file.removed) for (const a of accountsIn(line.folded)) (removedAccounts.get(a.label) ?? removedAccounts.set(a.label, new Set()).get(a.label)!).add(a.value);
    before.set(file.path, {
      ibans: new Set(ibansIn(file.before)),
      removedIbans: new Set(file.removed.flatMap((l) => ibansIn(l.plain))),
      removedAccounts,
      removedPhones: new Set(file.removed.flatMap((l) => phonesIn(l.plain))),
      phones: new Set(phonesIn(file.before)),
    });
  }
  const add = (rule: string, strength: RawFinding['strength'], reason: string, line: ScanLine, at: number) =>
    findings.push({ kind: 'destination', rule, strength, reason, path: line.path, line: line.line, at: Math.max(0, Math.min(1, at / Math.max(1, line.folded.length))) });

  for (const line of added) {
    const text = line.folded;
    // What the line says in prose: code (a fenced block, a command line, `inline code`) routes nothing.
    const prose = line.code || COMMAND_LINE.test(text) ? '' : text.replace(/`[^`\n]{0,400}`/g, ' ');
    const route = ROUTE.test(prose);
    const standing = STANDING.test(prose);
    const data = DATA.test(prose);
    const bankChange = BANK_CHANGE.test(text);
    const file = before.get(line.path);
    let reported = false;

    // E-mail addresses a message is routed to.
    for (const f of findPersonalData(text)) {
      if (f.rule !== 'email') continue;
      const address = text.slice(f.start, f.end);
      const status: DomainStatus = knowledge.status(address.slice(address.lastIndexOf('@') + 1));
      if (!route || status === 'known' || status === 'common') continue;
      const domain = address.slice(address.lastIndexOf('@') + 1);
      if ((status === 'new' || status === 'freemail') && (standing || data)) {
        add('new-recipient', 'strong', `routes ${standing ? 'all future' : 'these'} messages or data to an address at a domain this memory has not used before (${domain})`, line, f.start);
      } else if (status === 'new' || status === 'freemail') {
        add('new-recipient-once', 'medium', `sends something to an address at a domain this memory has not used before (${domain})`, line, f.start);
      } else if (standing || data) {
        add('lookalike-recipient', 'strong', `routes messages or data to a domain that resembles, but is not, one this memory knows (${domain})`, line, f.start);
      } else {
        add('lookalike-recipient-once', 'medium', `sends something to a domain that resembles, but is not, one this memory knows (${domain})`, line, f.start);
      }
      reported = true;
    }

    // Links: data carried in a URL, tracking images, collectors, upload targets.
    const images = new Set<string>();
    for (const pattern of [MARKDOWN_IMAGE, HTML_IMAGE]) {
      for (const m of text.matchAll(pattern)) {
        const url = m[1];
        images.add(url);
        const status = knowledge.status(hostOf(url));
        const query = url.includes('?');
        if (status !== 'known' && query && (TEMPLATE.test(url) || LEAKY_QUERY.test(url))) {
          add('image-beacon', 'strong', `an image link to ${hostOf(url)} whose query string carries data: rendering it sends that data out`, line, m.index!);
        } else if (status !== 'known' && query) {
          add('external-image-query', 'medium', `an image link with a query string to a domain this memory has not used before (${hostOf(url)})`, line, m.index!);
        }
      }
    }
    for (const m of text.matchAll(URL)) {
      const url = m[0].replace(URL_TRAILER, '');
      const host = hostOf(url);
      const status = knowledge.status(host);
      const afterHost = url.slice(url.indexOf(host) + host.length);
      if (TEMPLATE.test(afterHost) && status !== 'known' && !images.has(url)) {
        add('url-template', 'strong', `a URL to ${host} with a placeholder to fill in: a way to send conversation data out`, line, m.index!);
        continue;
      }
      if (isCollectorHost(url)) {
        add('collector-host', route || data ? 'strong' : 'medium', `a link to ${host}, a service for catching requests or pasting data from anyone`, line, m.index!);
        continue;
      }
      if (!route || status === 'known') continue;
      if ((status === 'new' || status === 'freemail') && (standing || data)) {
        add('new-upload-destination', 'strong', `sends ${data ? 'data' : 'things'} to a URL at a domain this memory has not used before (${host})`, line, m.index!);
      } else if (status === 'common' && (standing || data)) {
        add('shared-service-destination', 'medium', `sends data to a shared service (${host})`, line, m.index!);
      } else if (status === 'new') {
        add('new-link-destination', 'medium', `routes something to a URL at a domain this memory has not used before (${host})`, line, m.index!);
      }
      reported = true;
    }

    // Bank accounts: a replaced or newly announced IBAN or account number.
    const ibans = ibansIn(line.plain);
    for (const iban of ibans) {
      if (file?.ibans.has(iban)) continue;
      const at = line.plain.replace(/\s/g, '').toUpperCase().indexOf(iban);
      if (file && [...file.removedIbans].some((old) => old !== iban)) {
        add('changed-iban', 'strong', 'replaces the bank account (IBAN) this memory had with a different one', line, at);
      } else if (file && file.ibans.size > 0) {
        add('another-iban', bankChange || route || standing ? 'strong' : 'medium', 'adds a second bank account (IBAN) beside the one this memory has', line, at);
      } else if (bankChange || (PAY.test(text) && standing)) {
        add('new-bank-details', 'strong', 'announces new bank details (an IBAN) to pay into', line, at);
      } else {
        add('first-iban', 'weak', 'records a bank account (IBAN) for the first time', line, at);
      }
      reported = true;
    }
    for (const account of accountsIn(text)) {
      const old = file?.removedAccounts.get(account.label);
      if (old && !old.has(account.value)) {
        add('changed-account-number', 'strong', 'replaces a bank account, routing number or BIC this memory had with a different one', line, text.indexOf(account.value.slice(0, 4)));
        reported = true;
      } else if (!old && bankChange) {
        add('new-bank-details', 'strong', 'announces new bank details (an account number) to pay into', line, 0);
        reported = true;
      }
    }
    for (const m of line.plain.matchAll(WALLET)) {
      if (/^[0-9a-f]{40}$/i.test(m[1])) continue; // a git commit id, not an address
      const legacy = /^[13]/.test(m[1]);
      if (legacy && !/(?:btc|bitcoin|wallet|crypto|address|adresse|dirección)/i.test(line.plain)) continue;
      add(PAY.test(text) || route ? 'crypto-destination' : 'crypto-wallet', PAY.test(text) || route ? 'strong' : 'weak', 'a cryptocurrency wallet address' + (PAY.test(text) || route ? ' to pay or send to' : ''), line, m.index!);
      reported = true;
    }
    if (bankChange && !reported) add('bank-change-notice', 'medium', 'says bank or payment details have changed (the classic invoice-fraud message)', line, 0);

    // People: a support or contact number replaced by another.
    if (file && file.removedPhones.size > 0 && CONTACT.test(text)) {
      for (const phone of phonesIn(line.plain)) {
        if (file.phones.has(phone)) continue; // the removed numbers are among the old ones
        add('changed-phone', standing ? 'strong' : 'medium', 'replaces a contact or support phone number with a different one', line, 0);
        break;
      }
    }
  }
  return findings;
}
