/**
 * Which domains a memory already knows. A destination is "new" when its registrable domain appears
 * neither in the files' old text, nor in the caller's known domains (e.g. every domain on main), nor in
 * the path (`customers/acme-logistics/…` knows `acme-logistics.example`). Registrable domains are
 * approximated without the Public Suffix List: the last two labels, or three under a two-letter
 * country code's `co.`, `com.`, `org.`… (acme.co.uk).
 */

const SECOND_LEVEL = new Set(['co', 'com', 'org', 'net', 'ac', 'gov', 'edu', 'ne', 'or', 'gv', 'ltd', 'plc', 'nom', 'gob', 'mil']);

export function registrableDomain(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, '').replace(/:\d{1,5}$/, '').split('.').filter(Boolean);
  if (labels.length <= 2) return labels.join('.');
  const n = labels.length;
  if (labels[n - 1].length === 2 && SECOND_LEVEL.has(labels[n - 2])) return labels.slice(n - 3).join('.');
  return labels.slice(n - 2).join('.');
}

/** Mail providers anyone can sign up with: a standing instruction to send there is never "the customer's own domain". */
export const FREEMAIL = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com', 'aol.com', 'icloud.com', 'me.com', 'proton.me', 'protonmail.com',
  'pm.me', 'gmx.com', 'gmx.de', 'gmx.net', 'web.de', 'mail.com', 'mail.ru', 'yandex.com', 'yandex.ru', 'zoho.com', 'tutanota.com', 'tuta.io', 'fastmail.com', 'hey.com',
  'qq.com', '163.com', '126.com', 'laposte.net', 'orange.fr', 'free.fr', 'libero.it', 't-online.de', 'freenet.de', 'seznam.cz', 'wp.pl', 'o2.pl', 'interia.pl',
  'yahoo.co.uk', 'yahoo.fr', 'yahoo.de', 'yahoo.es', 'hotmail.fr', 'hotmail.de', 'hotmail.es', 'hotmail.co.uk', 'guerrillamail.com', 'mailinator.com', 'temp-mail.org', '10minutemail.com',
]);

/** Hosts made for receiving data from anyone: request bins, tunnels, paste sites, chat webhooks. */
export const COLLECTOR_HOSTS = [
  'webhook.site', 'requestbin.com', 'requestbin.net', 'pipedream.net', 'hookbin.com', 'beeceptor.com', 'ngrok.io', 'ngrok-free.app', 'ngrok.app', 'trycloudflare.com',
  'transfer.sh', 'file.io', 'paste.ee', 'pastebin.com', 'ghostbin.com', 'hastebin.com', '0x0.st', 'interact.sh', 'oast.fun', 'oast.me', 'oast.pro', 'oast.live', 'oast.site',
  'burpcollaborator.net', 'oastify.com', 'canarytokens.com', 'requestcatcher.com', 'localtunnel.me', 'loca.lt', 'serveo.net', 'ptpb.pw', 'termbin.com', 'dpaste.com', 'rentry.co',
  'api.telegram.org', 'discord.com/api/webhooks', 'discordapp.com/api/webhooks',
];

/** Multi-tenant services (the tenant is a subdomain or a path): known names, not the customer's own domain. */
export const COMMON_SERVICES = new Set([
  'google.com', 'github.com', 'gitlab.com', 'bitbucket.org', 'atlassian.net', 'atlassian.com', 'sharepoint.com', 'office.com', 'microsoft.com', 'slack.com', 'notion.so',
  'notion.site', 'dropbox.com', 'box.com', 'amazonaws.com', 'azure.com', 'azurewebsites.net', 'cloudfront.net', 'zendesk.com', 'salesforce.com', 'hubspot.com', 'stripe.com',
  'npmjs.com', 'pypi.org', 'docker.com', 'readthedocs.io', 'wikipedia.org', 'stackoverflow.com', 'anthropic.com', 'claude.ai', 'openai.com', 'figma.com', 'linear.app',
  'vercel.app', 'netlify.app', 'herokuapp.com', 'zoom.us', 'calendly.com', 'loom.com', 'miro.com', 'trello.com', 'asana.com', 'monday.com', 'youtube.com', 'mozilla.org',
]);

const GENERIC_TOKENS = new Set([
  'memories', 'memory', 'customers', 'customer', 'clients', 'client', 'notes', 'note', 'projects', 'project', 'profile', 'profiles', 'people', 'contacts', 'contact', 'meetings',
  'meeting', 'runbooks', 'runbook', 'playbooks', 'playbook', 'setup', 'index', 'readme', 'vendors', 'vendor', 'suppliers', 'supplier', 'accounts', 'account', 'team', 'teams',
  'general', 'preferences', 'tickets', 'billing', 'archive', 'docs', 'misc', 'todo', 'user', 'users', 'global', 'shared', 'common', 'info', 'data', 'company', 'partners',
  'example', 'test', 'prod', 'staging', 'mail', 'email', 'support', 'service', 'services', 'group', 'online', 'payments', 'payment', 'verify', 'secure', 'login',
]);

export type DomainStatus = 'known' | 'related' | 'new' | 'freemail' | 'common';

export class DomainKnowledge {
  private readonly known = new Set<string>();
  private readonly slugs = new Set<string>();
  private readonly tokens = new Set<string>();

  constructor(paths: string[], knownDomains: Iterable<string>) {
    for (const d of knownDomains) this.known.add(registrableDomain(d));
    for (const p of paths) {
      for (const segment of p.toLowerCase().split('/')) {
        const slug = segment.replace(/\.[a-z0-9]{1,8}$/, '');
        if (slug.length >= 3 && !GENERIC_TOKENS.has(slug)) this.slugs.add(slug.replace(/[^a-z0-9]/g, ''));
        for (const token of slug.split(/[^a-z0-9]/)) if (token.length >= 4 && !GENERIC_TOKENS.has(token)) this.tokens.add(token);
      }
    }
  }

  /** The file's old text names this domain: it is known from now on. */
  learn(domain: string): void {
    this.known.add(registrableDomain(domain));
  }

  status(host: string): DomainStatus {
    const domain = registrableDomain(host);
    if (this.known.has(domain)) return 'known';
    if (FREEMAIL.has(domain)) return 'freemail';
    const labels = host.toLowerCase().split('.');
    // The registrable label, and for a multi-tenant service the tenant's subdomain (acme.sharepoint.com).
    const names = [domain.split('.')[0], ...(COMMON_SERVICES.has(domain) && labels.length > 2 ? [labels[0]] : [])];
    for (const name of names) if (this.slugs.has(name.replace(/[^a-z0-9]/g, ''))) return 'known';
    if (COMMON_SERVICES.has(domain)) return 'common';
    for (const name of names) for (const token of name.split(/[^a-z0-9]/)) if (token.length >= 4 && this.tokens.has(token)) return 'related';
    return 'new';
  }
}

export function isCollectorHost(url: string): boolean {
  const rest = url.replace(/^[a-z]{2,8}:\/\//, '');
  const host = rest.split(/[/?#]/)[0];
  return COLLECTOR_HOSTS.some((h) => (h.includes('/') ? rest.startsWith(h) || rest.includes(`.${h}`) : host === h || host.endsWith(`.${h}`)));
}
