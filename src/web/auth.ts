import type { WebRefusalCode } from './errors';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type * as RateLimiting from 'rate-limiter-flexible';
import { tokenProblem } from '../operator/token';

// From its own file: the package's index loads every backend it supports (Redis, Mongo, SQL, Etcd, …).
const RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory') as typeof RateLimiting.RateLimiterMemory;

/**
 * Operator login and the request checks of every state-changing route:
 *
 * - the operator token (printed by `memgit serve`, or MEMGIT_TOKEN), compared in constant time;
 * - a login session in an HttpOnly, SameSite=Strict cookie, kept in memory (a restart logs out);
 * - a CSRF token on every POST: csrf-csrf's double-submit cookie, HMAC-bound to the login session;
 * - Origin / Sec-Fetch-Site: a POST from another site is refused before anything else is read.
 *
 * - failed logins (form or Bearer) limited per client: LOGIN_FAILURES_ALLOWED per LOGIN_FAILURE_WINDOW_S,
 *   then 429 until the window has passed (rate-limiter-flexible). A client is its address, unless the
 *   server in front already knows it better (`failureKey`: memgit server counts per key); a memgit key
 *   (`mgk_…`) sent where the operator token belongs is never counted as a guess at it;
 * - when the UI is reachable beyond loopback, reading needs the login too (readGate).
 *
 * The Host check (DNS rebinding) runs for every request in security.ts.
 */

export const SESSION_COOKIE = 'memgit_session';
export const CSRF_COOKIE = 'memgit_csrf';
export const CSRF_FIELD = '_csrf';
export const LOGIN_FAILURES_ALLOWED = 10;
export const LOGIN_FAILURE_WINDOW_S = 15 * 60;
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

// The token itself (made, checked) is the operator floor's: every edge that takes one shares it.
export { MIN_TOKEN_LENGTH, MIN_TOKEN_BITS, newOperatorToken, estimateTokenBits, tokenProblem } from '../operator/token';

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

/** What a token check answered: the right token, a wrong one, or a client that failed too often. */
export type TokenCheck = { ok: true } | { ok: false; retryAfterS: number | null };

export interface OperatorAuthOptions {
  /** Mark cookies Secure (the UI is served over HTTPS, e.g. behind a TLS proxy). */
  secureCookies?: boolean;
  /**
   * Who a wrong token counts against (default: the client's address). A server that authenticated the
   * request already (memgit server's keys) names that identity, so that one identity's failures never
   * lock out another's (behind a proxy, every client shares one address); null marks a request the
   * server itself vouches for, which is never counted nor locked out.
   */
  failureKey?: (req: Request) => string | null;
}

/** A memgit server key (`mgk_<id>_<secret>`): never the operator token, and never counted as a guess at it. */
const MEMGIT_KEY = /^mgk_[0-9a-f]{16}_/;

export class OperatorAuth {
  private readonly sessions = new Map<string, LoginSession>();
  private readonly csrfSecret = randomBytes(32).toString('base64url');
  private readonly csrf;
  private readonly failures = new RateLimiterMemory({ points: LOGIN_FAILURES_ALLOWED, duration: LOGIN_FAILURE_WINDOW_S });
  private secure: boolean;
  private readonly failureKey: (req: Request) => string | null;
  readonly cookies: RequestHandler = cookieParser();

  constructor(
    private readonly token: string,
    private readonly now: () => number = Date.now,
    options: OperatorAuthOptions = {},
  ) {
    const problem = tokenProblem(token);
    if (problem) throw new Error(problem);
    this.secure = options.secureCookies ?? false;
    this.failureKey = options.failureKey ?? clientKey;
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

  configure(options: OperatorAuthOptions): void {
    if (options.secureCookies !== undefined) this.secure = options.secureCookies;
  }

  get secureCookies(): boolean {
    return this.secure;
  }

  checkToken(given: unknown): boolean {
    return tokensMatch(given, this.token);
  }

  /**
   * Check a token a client sent (login form or Bearer), counting failures per client (its address, or the
   * identity `failureKey` names): past LOGIN_FAILURES_ALLOWED in the window, the client is refused without
   * its token being looked at. A request the server vouches for is never counted or refused, and a
   * memgit key is a wrong token but not a guess.
   */
  async checkTokenFrom(req: Request, given: unknown): Promise<TokenCheck> {
    const key = this.failureKey(req);
    if (key === null) return tokensMatch(given, this.token) ? { ok: true } : { ok: false, retryAfterS: null };
    const record = await this.failures.get(key);
    if (record && record.consumedPoints >= LOGIN_FAILURES_ALLOWED) return { ok: false, retryAfterS: Math.ceil(record.msBeforeNext / 1000) };
    if (tokensMatch(given, this.token)) return { ok: true };
    if (typeof given === 'string' && MEMGIT_KEY.test(given)) return { ok: false, retryAfterS: null };
    try {
      await this.failures.consume(key);
      return { ok: false, retryAfterS: null };
    } catch (rejected) {
      return { ok: false, retryAfterS: Math.ceil(((rejected as { msBeforeNext?: number }).msBeforeNext ?? LOGIN_FAILURE_WINDOW_S * 1000) / 1000) };
    }
  }

  /** The CSRF token to embed in a form (also sets its cookie). */
  csrfToken(req: Request, res: Response): string {
    return this.csrf.generateCsrfToken(req, res, { cookieOptions: { sameSite: 'strict', path: '/', secure: this.secure, httpOnly: true } });
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
    res.cookie(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'strict', path: '/', secure: this.secure, maxAge: SESSION_TTL_MS });
  }

  logout(req: Request, res: Response): void {
    const id = req.cookies?.[SESSION_COOKIE];
    if (typeof id === 'string') this.sessions.delete(id);
    res.clearCookie(SESSION_COOKIE, { path: '/', secure: this.secure, httpOnly: true, sameSite: 'strict' });
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

  /**
   * A stable name for this request's live login session (a hash of its id, never the id itself), to bind
   * server-side state to one login; null without a live session.
   */
  sessionKey(req: Request): string | null {
    if (!this.sessionOperator(req)) return null;
    return createHash('sha256').update(String(req.cookies[SESSION_COOKIE]), 'utf8').digest('base64url');
  }

  /**
   * Reading needs the operator (a live login session or a Bearer token): for a UI reachable beyond
   * loopback. The login page, logout and static files stay open; pages redirect to the login, the JSON
   * API answers 401.
   */
  readGate(): RequestHandler {
    return async (req, res, next) => {
      if (req.path === '/login' || req.path === '/logout' || req.path.startsWith('/static/')) return next();
      if (this.sessionOperator(req)) return next();
      const bearer = bearerToken(req);
      const api = req.path === '/api' || req.path.startsWith('/api/');
      if (bearer !== null) {
        const check = await this.checkTokenFrom(req, bearer);
        if (check.ok) return next();
        if (check.retryAfterS !== null) return tooManyFailures(res, check.retryAfterS, api);
        return res.status(401).json({ error: 'wrong operator token', status: 401, code: 'unauthorized' satisfies WebRefusalCode });
      }
      if (api) return res.status(401).json({ error: 'this server is reachable beyond loopback: log in as the operator, or send Authorization: Bearer <operator token>', status: 401, code: 'unauthorized' satisfies WebRefusalCode });
      res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
    };
  }

  private prune(): void {
    const now = this.now();
    for (const [id, s] of this.sessions) if (s.expires <= now) this.sessions.delete(id);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}

/** By default failures are counted per client address (the socket's; memgit trusts no forwarding header). */
function clientKey(req: Request): string {
  return `address:${req.socket.remoteAddress ?? 'unknown'}`;
}

/** 429 with Retry-After, for a client that failed to log in too often. */
export function tooManyFailures(res: Response, retryAfterS: number, api: boolean): void {
  const message = `too many failed logins from this client; try again in ${retryAfterS} s`;
  res.status(429).set('Retry-After', String(retryAfterS));
  if (api) res.json({ error: message, status: 429, code: 'rate_limited' satisfies WebRefusalCode });
  else res.type('text/plain').send(`memgit: ${message}\n`);
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
