import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

/**
 * The UI's security headers and request checks. State-changing routes (rollback) add their operator
 * login and CSRF checks beside these, in this module.
 */

/**
 * A strict CSP: only same-origin scripts and styles, no inline code of any kind, no framing. HSTS only
 * when the UI is served over HTTPS (`https`: its public URL is https://); over plain HTTP the header
 * means nothing, and on a loopback name it would pin a browser to HTTPS for every local port.
 */
export function securityHeaders(options: { https?: boolean } = {}) {
  return helmet({
    strictTransportSecurity: options.https ? { maxAge: 180 * 24 * 60 * 60, includeSubDomains: false } : false,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        requireTrustedTypesFor: ["'script'"],
      },
    },
    // same-origin: no referrer leaves the UI, and same-origin form posts keep a real Origin header.
    referrerPolicy: { policy: 'same-origin' },
  });
}

/** Pages that carry a CSRF token, an operator's input or a preview of memory: no cache (browser or proxy) keeps them. */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.set('Cache-Control', 'no-store');
  next();
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Whether binding to `host` keeps the server on this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Who may read, for a server bound to `host` with this public URL: beyond loopback, reading needs the
 * operator login (anyone who can reach the port could otherwise read all memory, whatever Host they send).
 */
export interface AccessPolicy {
  readsNeedLogin: boolean;
  https: boolean;
}

export function accessPolicy(options: { host: string; publicUrl?: string; readsNeedLogin?: boolean }): AccessPolicy {
  const https = options.publicUrl !== undefined && /^https:\/\//i.test(options.publicUrl);
  return { readsNeedLogin: options.readsNeedLogin ?? !isLoopbackHost(options.host), https };
}

/** The line `memgit serve` prints about access. */
export function accessNotice(policy: AccessPolicy, url: string, readOnly = false): string {
  return policy.readsNeedLogin
    ? `reachable beyond loopback: reading needs the operator login (${url}/login) or Authorization: Bearer <operator token>`
    : `loopback only: reading needs no login${readOnly ? '' : '; rollbacks need the operator login'}`;
}

/** The host name of a Host header, lower-cased, without its port (IPv6 literals keep their brackets). */
export function hostName(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^(\[[0-9a-f:.]+\]|[^:\s]+)(?::\d{1,5})?$/i.exec(header.trim());
  return match ? match[1].toLowerCase() : null;
}

/** The host names a server answers to: the loopback names and `allowedHosts` (ports dropped, lower-cased). */
export function allowedHostNames(allowedHosts: readonly string[]): string[] {
  return [...new Set([...LOOPBACK_NAMES, ...allowedHosts.map((h) => hostName(h) ?? h.toLowerCase())])];
}

/**
 * Refuse requests whose Host is not a name this server answers to: a page on another site cannot
 * reach the UI by pointing its own domain at 127.0.0.1 (DNS rebinding).
 */
export function hostCheck(allowedHosts: readonly string[]) {
  const allowed = new Set(allowedHostNames(allowedHosts));
  return (req: Request, res: Response, next: NextFunction): void => {
    const name = hostName(req.headers.host);
    if (name !== null && allowed.has(name)) return next();
    res.status(421).type('text/plain').send('memgit: this server does not answer to that Host header\n');
  };
}
