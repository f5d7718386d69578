import type { Request, RequestHandler, Response } from 'express';
import { HttpError, refusal, sendError } from './errors';

/**
 * Request bodies held in memory, bounded for the whole server and per key. A request that reads a body
 * reserves its declared Content-Length (or, sent chunked, the route's largest body) before a byte is read,
 * and holds the reservation until its answer is sent: a body is in memory while it arrives, then parsed
 * while its call waits and runs. Nothing is read for a request the budget cannot hold: the answer is
 * immediate (429 when the key's own share is spent, 503 when the server's is), with Retry-After, and the
 * connection is closed so that the unread body goes with it.
 *
 * Separately, every request body must arrive within `timeoutMs` of the request's headers (408 and the
 * connection closed otherwise), so unfinished bodies cannot hold their reservation, their connection or
 * anything else for long.
 */

export interface BodyBudgetOptions {
  /** Bytes of request bodies held at once by the whole server. */
  totalBytes: number;
  /** Bytes of request bodies held at once per key. */
  perKeyBytes: number;
  /** Requests with a body in flight at once per key (a bound on connections held open by one key). */
  perKeyRequests: number;
  /** A request's body must have arrived within this many milliseconds of its headers. */
  timeoutMs: number;
}

export const DEFAULT_BODY_BUDGET: BodyBudgetOptions = {
  totalBytes: 128 * 1024 * 1024,
  perKeyBytes: 32 * 1024 * 1024,
  perKeyRequests: 64,
  timeoutMs: 30_000,
};

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `8mb` → 8,388,608 (units of 1024, as express's body limits count them); null when malformed. */
export function parseByteSize(value: string | number): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
  const match = /^\s*(\d+)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
  if (!match) return null;
  const bytes = Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()];
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : null;
}

const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

/** Whether a request carries a body (as body parsers decide: a length or a transfer encoding). */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

export class BodyBudget {
  private used = 0;
  private readonly byKey = new Map<string, { bytes: number; requests: number }>();

  constructor(readonly options: BodyBudgetOptions) {
    for (const [name, value] of Object.entries(options)) {
      if (!(Number.isSafeInteger(value) && value > 0)) throw new TypeError(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
    }
    if (options.perKeyBytes > options.totalBytes) throw new TypeError('perKeyBytes may not exceed totalBytes');
  }

  /** Bytes held now by the whole server (for health figures and tests). */
  get bytesInFlight(): number {
    return this.used;
  }

  /**
   * Middleware for every request: a body that has not fully arrived `timeoutMs` after the headers is
   * answered 408 (or, if an answer has begun, its connection is closed).
   */
  timeout(): RequestHandler {
    const { timeoutMs } = this.options;
    return (req, res, next) => {
      if (!hasBody(req)) return next();
      const timer = setTimeout(() => {
        if (req.complete) return;
        if (res.headersSent) {
          req.socket.destroy();
          return;
        }
        res.setHeader('Connection', 'close');
        res.once('finish', () => req.socket.destroy());
        sendError(res, refusal('body_timeout', `the request body did not arrive within ${timeoutMs / 1000} s; nothing was done`));
      }, timeoutMs);
      const clear = () => clearTimeout(timer);
      req.once('end', clear);
      req.once('close', clear);
      next();
    };
  }

  /**
   * Reserve room for this request's body (at most `limitBytes`), then run `parse` (a body parser). The
   * reservation is released when the answer is done. The key is the request's memgit key (routes
   * authenticate before they read a body).
   */
  reader(limitBytes: number, parse: RequestHandler): RequestHandler {
    return (req, res, next) => {
      if (!hasBody(req)) return parse(req, res, next);
      const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
      if (declared !== null && declared > limitBytes) return refuse(res, refusal('body_too_large', `the request body is too large (over ${limitBytes} bytes)`));
      const bytes = declared ?? limitBytes;
      const owner = req.memgitKey?.id ?? '';
      const mine = this.byKey.get(owner) ?? { bytes: 0, requests: 0 };
      const { totalBytes, perKeyBytes, perKeyRequests } = this.options;
      if (mine.requests + 1 > perKeyRequests || mine.bytes + bytes > perKeyBytes) {
        return refuse(
          res,
          refusal(
            'key_bodies_in_flight',
            `this key already has ${mine.requests} request bodies in flight (${mib(mine.bytes)}); ` +
              `a key may hold ${perKeyRequests} requests and ${mib(perKeyBytes)} of request bodies at once. Nothing was done; retry when its calls are answered`,
            { 'Retry-After': '1' },
          ),
        );
      }
      if (this.used + bytes > totalBytes) {
        return refuse(
          res,
          refusal('server_bodies_full', `the server holds ${mib(this.used)} of request bodies, its limit is ${mib(totalBytes)}; nothing was done, retry shortly`, {
            'Retry-After': '1',
          }),
        );
      }
      this.used += bytes;
      mine.bytes += bytes;
      mine.requests += 1;
      this.byKey.set(owner, mine);
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        this.used -= bytes;
        mine.bytes -= bytes;
        mine.requests -= 1;
        if (mine.requests === 0 && this.byKey.get(owner) === mine) this.byKey.delete(owner);
      };
      res.once('close', release);
      res.once('finish', release);
      parse(req, res, next);
    };
  }
}

/** Answer without reading the body, and close the connection so the unread body is not waited for. */
function refuse(res: Response, error: HttpError): void {
  res.setHeader('Connection', 'close');
  sendError(res, error);
}
