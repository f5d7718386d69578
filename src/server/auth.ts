import type { NextFunction, Request, Response } from 'express';
import { KeyInfo, keyMatchesStore, KeyRing, Scope, scopeAllows } from '../tenancy/keys';
import { storeIdProblem } from '../tenancy/store-id';
import { HttpError, notFoundStore, refusal } from './errors';

/**
 * Bearer keys. `authorize(req, storeId, scope)` is the one check every store route makes (the tool API,
 * the read API, rollbacks, and routers mounted per store later, such as MCP): the key must be live, its
 * patterns must match the store and its scope must allow the action. A store the key's patterns do not
 * match answers exactly like a store that does not exist.
 */

declare module 'express-serve-static-core' {
  interface Request {
    memgitKey?: KeyInfo;
    memgitStore?: string;
  }
}

/**
 * The key presented as `Authorization: Bearer <key>` (or, for browsers, as the password of Basic auth:
 * only the password — user names end up in proxies' and browsers' logs, so a key typed there is not taken).
 */
export function presentedKey(req: Request, options: { basic?: boolean } = {}): string | null {
  const header = req.headers.authorization ?? '';
  const bearer = /^Bearer ([^\s]+)$/.exec(header);
  if (bearer) return bearer[1];
  const basic = options.basic ? /^Basic ([A-Za-z0-9+/=]+)$/.exec(header) : null;
  if (basic) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : null;
  }
  return null;
}

export const SCOPE_ACTIONS: Record<Scope, string> = {
  read: 'read history',
  write: 'call the memory tool',
  operator: 'roll back',
};

export class Authorizer {
  constructor(private readonly keys: KeyRing) {}

  /** The live key of this request (cached on it), or a 401. */
  async authenticate(req: Request, options: { basic?: boolean } = {}): Promise<KeyInfo> {
    if (req.memgitKey) return req.memgitKey;
    const presented = presentedKey(req, options);
    if (presented === null) {
      const how = options.basic ? 'send your key as Authorization: Bearer <key>, or as the password (not the user name) of Basic auth' : 'send your key as Authorization: Bearer <key>';
      throw refusal('unauthorized', how, authenticateHeader(options));
    }
    const key = await this.keys.authenticate(presented);
    if (!key) throw refusal('unauthorized', 'this key is not valid (unknown or revoked)', authenticateHeader(options));
    req.memgitKey = key;
    return key;
  }

  /** Whether key `id` is still valid (not revoked): what a connection held open by that key checks. */
  keyIsLive(id: string): Promise<boolean> {
    return this.keys.isLive(id);
  }

  /** Check that this request's key may act on `storeId` with `scope`; returns the key. */
  async authorize(req: Request, storeId: string, scope: Scope, options: { basic?: boolean } = {}): Promise<KeyInfo> {
    const key = await this.authenticate(req, options);
    const problem = storeIdProblem(storeId);
    if (problem) throw new HttpError(400, 'invalid_request_error', `invalid store id: ${problem}`, {}, 'invalid_store_id');
    req.memgitStore = storeId;
    if (!keyMatchesStore(key, storeId)) throw notFoundStore(storeId);
    if (!scopeAllows(key.scope, scope)) throw refusal('forbidden', `this key (scope ${key.scope}) may not ${SCOPE_ACTIONS[scope]}`);
    return key;
  }

  /** Middleware for routers mounted under a `:store` parameter (e.g. MCP): authorizes, then continues. */
  middleware(scope: Scope, param = 'store') {
    return (req: Request, _res: Response, next: NextFunction): void => {
      this.authorize(req, String(req.params[param] ?? ''), scope)
        .then(() => next())
        .catch(next);
    };
  }
}

function authenticateHeader(options: { basic?: boolean }): Record<string, string> {
  return { 'WWW-Authenticate': options.basic ? 'Basic realm="memgit", charset="UTF-8"' : 'Bearer realm="memgit"' };
}
