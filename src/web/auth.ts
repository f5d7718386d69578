import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Operator login and the request checks of every state-changing route:
 *
 * - the operator token (printed by `memgit serve`, or MEMGIT_TOKEN), compared in constant time;
 * - a login session in an HttpOnly, SameSite=Strict cookie, kept in memory (a restart logs out);
 * - a CSRF token on every POST: csrf-csrf's double-submit cookie, HMAC-bound to the login session;
 * - Origin / Sec-Fetch-Site: a POST from another site is refused before anything else is read.
 *
 * The Host check (DNS rebinding) runs for every request in security.ts.
 */

export const SESSION_COOKIE = 'memgit_session';
export const CSRF_COOKIE = 'memgit_csrf';
export const CSRF_FIELD = '_csrf';
export const MIN_TOKEN_LENGTH = 16;
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

/** A fresh operator token: 192 random bits. */
export function newOperatorToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison; hashing first makes the lengths equal and hides the token's length. */
export function tokensMatch(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

export interface Operator {
  name: string;
  /** How this request proved it is the operator. */
  via: 'session' | 'bearer';
}

declare module 'express-serve-static-core' {
  interface Request {
    operator?: Operator;
  }
}

interface LoginSession {
  operator: string;
  expires: number;
}

export class OperatorAuth {
  private readonly sessions = new Map<string, LoginSession>();
  private readonly csrfSecret = randomBytes(32).toString('base64url');
  private readonly csrf;
  readonly cookies: RequestHandler = cookieParser();

  constructor(
    private readonly token: string,
    private readonly now: () => number = Date.now,
  ) {
    if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH) {
      throw new Error(`memgit: the operator token must be at least ${MIN_TOKEN_LENGTH} characters`);
    }
    this.csrf = doubleCsrf({
      getSecret: () => this.csrfSecret,
      // Before login the token is bound to no session; logging in changes the cookie, so tokens rotate.
      getSessionIdentifier: (req) => (typeof req.cookies?.[SESSION_COOKIE] === 'string' ? req.cookies[SESSION_COOKIE] : ''),
      cookieName: CSRF_COOKIE,
      // Secure would drop the cookie on plain-HTTP loopback; SameSite=Strict keeps it off cross-site requests.
      cookieOptions: { sameSite: 'strict', path: '/', secure: false, httpOnly: true },
      getCsrfTokenFromRequest: (req) => {
        const field = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
        return typeof field === 'string' ? field : req.headers['x-csrf-token'];
      },
    });
  }

  checkToken(given: unknown): boolean {
    return tokensMatch(given, this.token);
  }

  /** The CSRF token to embed in a form (also sets its cookie). */
  csrfToken(req: Request, res: Response): string {
    return this.csrf.generateCsrfToken(req, res);
  }

  validCsrf(req: Request): boolean {
    return this.csrf.validateRequest(req);
  }

  /** Start a login session with a new id (never one the browser brought: no session fixation). */
  login(req: Request, res: Response, operator: string): void {
    this.logout(req, res);
    this.prune();
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { operator, expires: this.now() + SESSION_TTL_MS });
    res.cookie(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'strict', path: '/', secure: false, maxAge: SESSION_TTL_MS });
  }

  logout(req: Request, res: Response): void {
    const id = req.cookies?.[SESSION_COOKIE];
    if (typeof id === 'string') this.sessions.delete(id);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
  }

  /** The operator of this request's login session, if it is live. */
  sessionOperator(req: Request): string | null {
    const id = req.cookies?.[SESSION_COOKIE];
    if (typeof id !== 'string') return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    if (session.expires <= this.now()) {
      this.sessions.delete(id);
      return null;
    }
    return session.operator;
  }

  private prune(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expires <= now) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}

/** The bearer token of an `Authorization: Bearer …` header, if any. */
export function bearerToken(req: Request): string | null {
  const match = /^Bearer ([^\s]+)$/.exec(req.headers.authorization ?? '');
  return match ? match[1] : null;
}

function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/**
 * Refuse a state-changing request that a browser says came from another site, or whose Origin is not
 * this server. Clients that send neither header (curl, scripts) are not browsers acting for a page;
 * they still need the operator token.
 */
export function sameOriginOnly(refuse: (req: Request, res: Response, status: number, message: string) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (isSafeMethod(req.method)) return next();
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return refuse(req, res, 403, `cross-site request refused (Sec-Fetch-Site: ${site})`);
    const origin = req.headers.origin;
    // Some browsers and privacy settings send `Origin: null` on same-origin form posts (the UI itself uses
    // Referrer-Policy: same-origin, which keeps a real Origin); Sec-Fetch-Site, which page scripts cannot
    // set, then says where the request came from.
    if (origin === 'null' && site === 'same-origin') return next();
    if (origin !== undefined && origin !== `${req.protocol}://${req.headers.host}`) {
      return refuse(req, res, 403, 'request from another origin refused');
    }
    next();
  };
}
