import type express from 'express';
import type { Request, Response } from 'express';
import type { OperatorAuth } from '../auth';

/**
 * What the operator's action routes share (operator.ts makes it; rollback.ts and redaction.ts take it):
 * the login, the refusal answer (page or JSON), the body parsers. In a file of its own, so that the
 * routes that take it do not import the module that mounts them.
 */
export interface OperatorKit {
  auth: OperatorAuth;
  refuse: (req: Request, res: Response, status: number, message: string) => void;
  bodies: express.RequestHandler[];
  /** `{ key }` of the server key a request came with, for the commit's `Memory-Key`, or `{}`. */
  keyOf: (req: Request) => { key?: string };
  /** The operator of a state-changing form POST with a valid CSRF token, or null after refusing it (401/403). */
  checkedOperator: (req: Request, res: Response) => string | null;
}
