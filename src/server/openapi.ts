import { RECORD_SCHEMAS } from './openapi-records';

/**
 * The OpenAPI 3.1 document of memgit server's HTTP API: the tool API, the read API (the audit UI's JSON
 * twins), the rollback API, MCP's endpoint and /healthz. Served at GET /api/v1/openapi.json and kept in
 * docs/openapi.json (`npm run openapi` writes it, and the client's types, from this object). Every
 * response the server tests receive is validated against it (test/support/openapi-contract.ts), so it
 * cannot drift from the code; test/server/openapi.test.ts checks it with an OpenAPI validator.
 *
 * Read models are open objects: the fields listed are the ones clients may rely on; pages may carry more.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });
const int = { type: 'integer', minimum: 0 };
const str = { type: 'string' };
/** An object of any fields (a typed client sees `Record<string, unknown>`). */
const anyObject = { type: 'object', additionalProperties: true };
const bool = { type: 'boolean' };
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({ type: 'object', required, properties });
const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
const respond = (name: string) => ({ $ref: `#/components/responses/${name}` });
const param = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const query = (name: string, description: string, schema: Schema = str) => ({ name, in: 'query', required: false, description, schema });

/** The refusals every authenticated route may answer, in the server's error form. */
const serverRefusals = {
  '400': respond('BadRequest'),
  '401': respond('Unauthorized'),
  '403': respond('Forbidden'),
  '404': respond('NotFound'),
  '408': respond('Timeout'),
  '413': respond('TooLarge'),
  '415': respond('UnsupportedMediaType'),
  '429': respond('RateLimited'),
  '500': respond('InternalError'),
  '503': respond('Unavailable'),
};

/** The refusals of MCP's endpoint: the server's (keys, limits) or the transport's, as JSON-RPC errors. */
const mcpRefusals = Object.fromEntries(['400', '401', '403', '404', '406', '408', '409', '413', '415', '429', '500', '503', '507'].map((status) => [status, respond('McpRefusal')]));

/** A GET of the read API: the page's model, or a refusal (the server's or the read model's form). */
function readOperation(operationId: string, summary: string, schema: Schema, parameters: unknown[] = []) {
  return {
    get: {
      operationId,
      summary,
      tags: ['read'],
      security: [{ bearerKey: [] }],
      parameters: [param('store'), ...parameters],
      responses: {
        '200': json(schema, summary),
        '400': respond('ReadRefusal'),
        '401': respond('Unauthorized'),
        '403': respond('Forbidden'),
        '404': respond('ReadRefusal'),
        '409': respond('ReadRefusal'),
        '429': respond('RateLimited'),
        '500': respond('ReadRefusal'),
        '503': respond('Unavailable'),
      },
    },
  };
}

const filterParameters = [
  query('session', 'only calls of this session'),
  query('path', 'only calls that touched this memory path (a folder: anything below it)'),
  query('follow', 'with path: follow the file through renames (1)'),
  query('command', 'only this command', { enum: ['create', 'str_replace', 'insert', 'delete', 'rename'] }),
  query('since', 'only calls at or after this point (a date, a time, a commit or tool_use id)'),
  query('until', 'only calls at or before this point'),
  query('text', 'only calls that added or removed this text'),
  query('case', 'with text: match case (1)'),
  query('change', 'with text: `introduced` or `removed` only'),
  query('flagged', 'only calls flagged for likely secrets or personal data (1)'),
];

const schemas: Record<string, Schema> = {
  ...(RECORD_SCHEMAS as Record<string, Schema>),
  ServerError: {
    type: 'object',
    description: "An error of the server: a stable `type` (the Messages API's names), a stable `code` and a message for people; never a stack.",
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['type', 'message', 'code'],
        properties: {
          type: { type: 'string', examples: ['invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'rate_limit_error', 'overloaded_error'] },
          message: str,
          code: ref('ErrorCode'),
        },
      },
    },
  },
  ReadError: {
    type: 'object',
    description: 'A refusal of the read model or of a rollback (the audit UI\'s JSON form): the message, the status and a stable `code`.',
    required: ['error', 'status', 'code'],
    properties: { error: str, status: { type: 'integer' }, code: ref('ErrorCode') },
  },
  ErrorCode: {
    type: 'string',
    pattern: '^[a-z][a-z0-9_]*$',
    description: 'A stable snake_case code: a MemgitError code (docs/library.md#errors) or one of the edge\'s own refusals (unauthorized, rate_limited, body_too_large, ...).',
  },
  ToolUse: {
    type: 'object',
    description: 'The Messages API tool_use block of the memory tool (memory_20250818), as the model sent it.',
    required: ['type', 'id', 'name', 'input'],
    properties: { type: { const: 'tool_use' }, id: str, name: str, input: anyObject },
  },
  ToolResult: {
    type: 'object',
    description: 'The tool_result block to send back to Claude, with the contract\'s exact text.',
    required: ['type', 'tool_use_id', 'content'],
    properties: { type: { const: 'tool_result' }, tool_use_id: str, content: str, is_error: bool },
  },
  ToolCallRequest: {
    type: 'object',
    required: ['tool_use', 'session'],
    additionalProperties: false,
    properties: { tool_use: ref('ToolUse'), session: { type: 'string', examples: ['sess_20261202T140312_k3f9'] } },
  },
  ToolCallResponse: object({ tool_result: ref('ToolResult'), commit: nullable(ref('CommitId')) }),
  StoreList: object({ stores: arrayOf(str) }),
  Health: object({
    status: { const: 'ok' },
    openStores: int,
    replication: object({ replicas: int, lagging: int, stopped: int, maxLagCommits: int, oldestUnpushedAgeSeconds: { type: 'number', minimum: 0 } }),
  }),
  CommitSummary: {
    allOf: [ref('CommitRecord'), { type: 'object', required: ['position'], properties: { position: int } }],
    description: 'A commit record and its position in history (0: the store\'s first commit).',
  },
  CommitRow: {
    allOf: [ref('CommitSummary'), { type: 'object', required: ['added', 'removed'], properties: { added: int, removed: int, pickaxe: { enum: ['introduced', 'removed'] } } }],
  },
  DiffLine: object({ kind: { enum: ['add', 'del', 'ctx'] }, oldNo: nullable(int), newNo: nullable(int), text: str, cut: bool }),
  FileDiff: object(
    {
      status: { enum: ['added', 'deleted', 'modified', 'renamed'] },
      oldPath: { type: ['string', 'null'] },
      newPath: { type: ['string', 'null'] },
      oldOid: { type: ['string', 'null'] },
      newOid: { type: ['string', 'null'] },
      added: int,
      removed: int,
      hunks: arrayOf(object({ header: str, lines: arrayOf(ref('DiffLine')) }, ['header', 'lines'])),
      truncated: bool,
      tooLarge: bool,
      noFinalNewline: bool,
      hidden: bool,
    },
    ['status', 'oldPath', 'newPath', 'added', 'removed', 'hunks', 'truncated'],
  ),
  FlagBadge: { type: 'object', additionalProperties: true, description: 'Why a call was flagged (likely secrets or personal data, masked).' },
  Overview: object({
    head: nullable(ref('CommitSummary')),
    totals: object({ commits: int, sessions: int, files: int, bytes: int, flagged: int, redactions: int }),
    files: arrayOf(object({ rel: str, size: int, lastChange: nullable(ref('CommitSummary')) })),
    filesTruncated: bool,
    latest: arrayOf(ref('CommitSummary')),
    replication: object({ readOnly: bool, replicas: arrayOf(anyObject) }),
  }),
  CommitList: object({
    filter: { type: 'object', additionalProperties: true, description: 'The filter applied, as parsed' },
    rows: arrayOf(ref('CommitRow')),
    older: { type: ['string', 'null'], description: 'cursor of the next (older) page: pass it as `before`' },
    newer: { type: ['string', 'null'], description: 'cursor of the previous (newer) page: pass it as `after`' },
    partial: bool,
    total: int,
    flags: { type: 'object', additionalProperties: ref('FlagBadge') },
  }),
  CommitPage: object(
    {
      commit: ref('CommitSummary'),
      message: str,
      diffs: arrayOf(ref('FileDiff')),
      sessionStep: nullable(int),
      sessionCalls: int,
      prevInSession: nullable(ref('CommitSummary')),
      nextInSession: nullable(ref('CommitSummary')),
      revertedBy: arrayOf(ref('CommitSummary')),
      flag: nullable(ref('FlagBadge')),
      rewrittenFrom: nullable(object({ old: str, redaction: str })),
    },
    ['commit', 'message', 'diffs', 'sessionStep', 'sessionCalls', 'prevInSession', 'nextInSession', 'revertedBy', 'flag'],
  ),
  SessionList: object({ sessions: arrayOf(ref('SessionRecord')) }),
  SessionPage: object(
    {
      id: str,
      calls: int,
      logOnly: bool,
      reads: int,
      failed: int,
      allCalls: arrayOf(ref('CallRecord')),
      first: nullable(ref('CommitSummary')),
      last: nullable(ref('CommitSummary')),
      before: { type: ['string', 'null'] },
      page: arrayOf({ allOf: [ref('CommitSummary'), { type: 'object', required: ['step', 'diffs'], properties: { step: int, diffs: arrayOf(ref('FileDiff')), eventsAfter: arrayOf(anyObject) } }] }),
      from: int,
      nextFrom: nullable(int),
      prevFrom: nullable(int),
      combined: arrayOf(ref('FileDiff')),
    },
    ['id', 'calls', 'logOnly', 'reads', 'failed', 'first', 'last', 'page', 'from', 'nextFrom', 'prevFrom'],
  ),
  SessionsAnswer: { oneOf: [ref('SessionList'), ref('SessionPage')], description: 'The list of sessions, or one session\'s page (`?id=`).' },
  FilePage: object(
    {
      rel: str,
      path: str,
      at: ref('CommitSummary'),
      pinned: bool,
      exists: bool,
      current: nullable(anyObject),
      size: int,
      lineCount: int,
      lines: arrayOf(object({ no: int, text: str, cut: bool, origin: { ...str, description: 'the commit that wrote the line (a key of origins), when blamed' }, runStart: bool }, ['no', 'text', 'cut'])),
      truncated: bool,
      linesCut: bool,
      origins: { type: 'object', additionalProperties: ref('CommitSummary') },
      history: arrayOf(anyObject),
      revisionCount: int,
      deletedBy: nullable(ref('CommitSummary')),
    },
    ['rel', 'path', 'at', 'pinned', 'exists', 'current', 'size', 'lineCount', 'lines', 'truncated'],
  ),
  TreePage: object({
    at: ref('CommitSummary'),
    pinned: bool,
    dir: str,
    path: str,
    rows: arrayOf(object({ name: str, kind: { enum: ['file', 'dir'] }, rel: str, size: int, lastChange: nullable(ref('CommitSummary')) })),
    truncated: bool,
  }),
  SearchPage: object({
    q: str,
    from: int,
    files: arrayOf(object({ rel: str, pathMatch: bool, lines: arrayOf(object({ no: int, text: str, cutBefore: bool, cutAfter: bool })), moreLines: bool })),
    stoppedBy: { enum: ['files', 'lines', 'chars', 'read', 'time', null] },
    next: nullable(int),
    truncated: bool,
    history: nullable(ref('CommitList')),
  }),
  ComparePage: object(
    {
      asked: object({ from: str, to: str, path: str }),
      from: nullable(ref('CommitSummary')),
      to: nullable(ref('CommitSummary')),
      path: str,
      diffs: arrayOf(ref('FileDiff')),
      truncated: bool,
      total: int,
    },
    ['asked', 'from', 'to', 'path', 'diffs', 'truncated', 'total'],
  ),
  RedactionList: object({ redactions: arrayOf({ type: 'object', required: ['id'], properties: { id: str } }) }),
  RedactionPage: object({
    record: { type: 'object', required: ['id'], properties: { id: str } },
    map: arrayOf(object({ old: str, new: str, call: nullable(ref('CommitSummary')) })),
    mapTotal: int,
    from: int,
    nextFrom: nullable(int),
    prevFrom: nullable(int),
  }),
  RollbackRequest: {
    type: 'object',
    description: 'revert: `ref` (a commit or tool_use id); restore: `path` and `at`; session: `session`; reset: `to`. Then `reason`, `dryRun`, `expectHead`.',
    properties: {
      ref: str,
      path: str,
      at: str,
      session: str,
      to: str,
      reason: { type: 'string', maxLength: 200 },
      dryRun: bool,
      expectHead: str,
    },
  },
  RollbackOutcome: {
    type: 'object',
    required: ['operation', 'status', 'title', 'head', 'commit', 'truncated'],
    properties: {
      operation: { enum: ['revert', 'restore', 'rollback-session', 'reset'] },
      status: { enum: ['committed', 'preview', 'conflict', 'unchanged', 'stopped'] },
      title: str,
      head: { type: ['string', 'null'] },
      commit: nullable(ref('CommitId')),
      reverts: arrayOf(str),
      actor: { type: ['string', 'null'] },
      reason: { type: ['string', 'null'] },
      conflicts: arrayOf(anyObject),
      files: arrayOf(anyObject),
      patch: str,
      patchCut: bool,
      truncated: bool,
      revertsLeftOut: int,
    },
  },
  JsonRpcError: {
    type: 'object',
    description: 'A JSON-RPC 2.0 error of MCP\'s transport, its stable code in `error.data.code`.',
    required: ['jsonrpc', 'error', 'id'],
    properties: {
      jsonrpc: { const: '2.0' },
      error: {
        type: 'object',
        required: ['code', 'message', 'data'],
        properties: { code: { type: 'integer' }, message: str, data: { type: 'object', required: ['code'], properties: { code: ref('ErrorCode') } } },
      },
      id: { type: ['string', 'integer', 'null'] },
    },
  },
  JsonRpcMessage: {
    description: 'A JSON-RPC 2.0 message of MCP\'s Streamable HTTP transport (or a batch of them).',
    oneOf: [
      { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } },
      { type: 'array', items: { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } } },
    ],
  },
};

/** Reviews (docs/review.md) and dreams (docs/dreams.md): the fields clients rely on; more may be added. */
const reviewCall = { type: 'object', required: ['toolUseId', 'commit'], properties: { toolUseId: str, commit: str } };
const reviewDecision = nullable(object({ state: { enum: ['approved', 'rejected'] }, time: int, operator: nullable(str), reason: nullable(str), commit: str }));
const reviewFields = {
  id: { type: 'string', pattern: '^rv_[0-9a-f]{16}$' },
  session: str,
  state: { enum: ['pending', 'approved', 'rejected'] },
  fork: str,
  tip: str,
  branch: nullable(str),
  archive: nullable(str),
  decision: reviewDecision,
};
const reviewSchemas: Record<string, Schema> = {
  ReviewSummary: { type: 'object', required: [...Object.keys(reviewFields), 'calls'], properties: { ...reviewFields, calls: arrayOf(reviewCall) } },
  ReviewDecisionRequest: { type: 'object', additionalProperties: false, properties: { reason: str, calls: { ...arrayOf(str), maxItems: 10000 } } },
  ApproveOutcome: object({ review: ref('ReviewSummary'), commits: arrayOf(str) }),
  ReviewRefused: object({ error: object({ type: { const: 'conflict_error' }, message: str, code: str, conflicts: arrayOf(anyObject) }) }),
  Dream: {
    type: 'object',
    required: ['type', 'id', 'status', 'inputs', 'outputs', 'model', 'instructions', 'usage', 'error', 'created_at', 'ended_at'],
    properties: {
      type: { const: 'dream' },
      id: { type: 'string', pattern: '^drm_' },
      status: { enum: ['pending', 'running', 'completed', 'failed', 'canceled'] },
      inputs: arrayOf(object({ type: { const: 'sessions' }, session_ids: arrayOf(str) })),
      outputs: arrayOf(object({ type: { const: 'review' }, review_id: str, branch: str, files_touched: arrayOf(str) })),
      model: str,
      instructions: nullable({ type: 'string', maxLength: 4096 }),
      usage: object({ input_tokens: int, output_tokens: int, cache_creation_input_tokens: int, cache_read_input_tokens: int }),
      error: nullable(object({ type: str, message: str })),
      created_at: str,
      ended_at: nullable(str),
    },
  },
  DreamRequest: {
    type: 'object',
    properties: {
      inputs: arrayOf(object({ type: { const: 'sessions' }, session_ids: arrayOf(str) })),
      model: str,
      instructions: { type: 'string', maxLength: 4096 },
    },
  },
  DreamList: object({ data: arrayOf(ref('Dream')), has_more: bool, first_id: nullable(str), last_id: nullable(str) }),
};
Object.assign(schemas, reviewSchemas);

/** An operator route of reviews or dreams: the answer, or a refusal in the server's form. */
function operatorOperation(method: 'get' | 'post', operationId: string, summary: string, tag: string, answer: Schema, extra: { parameters?: unknown[]; body?: Schema; status?: string; conflict?: Schema } = {}) {
  return {
    [method]: {
      operationId,
      summary,
      tags: [tag],
      security: [{ bearerKey: [] }],
      parameters: [param('store'), ...(extra.parameters ?? [])],
      ...(extra.body ? { requestBody: { required: true, content: { 'application/json': { schema: extra.body } } } } : {}),
      responses: {
        [extra.status ?? '200']: json(answer, summary),
        ...serverRefusals,
        '404': { description: 'no such store, review or dream', content: { 'application/json': { schema: { anyOf: [ref('ServerError'), ref('ReadError')] } } } },
        '409': { description: 'refused: a conflict, or another dream running', content: { 'application/json': { schema: { anyOf: [...(extra.conflict ? [extra.conflict] : []), ref('ServerError'), ref('ReadError')] } } } },
      },
    },
  };
}
const idParameter = (name: string) => ({ name, in: 'path', required: true, schema: str });

const errorResponse = (description: string) => json(ref('ServerError'), description);

export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'memgit server',
    version: '1',
    summary: "A git-backed, versioned memory store for Claude's memory tool, over HTTP.",
    description:
      'Every write of the memory tool is one git commit named by its tool_use id. Keys are made with `memgit keys create` ' +
      '(scopes read < write < operator) and sent as `Authorization: Bearer <key>`; a store the key may not see answers as a store ' +
      'that does not exist. Errors carry a stable `code`. The guide: docs/service.md.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  servers: [{ url: 'http://127.0.0.1:8080', description: '`memgit server --port 8080`' }],
  tags: [
    { name: 'tool', description: 'The memory tool over HTTP' },
    { name: 'read', description: "The read API: the audit UI's JSON twins, one read model" },
    { name: 'operator', description: 'Rollbacks and reviews, as the operator key' },
    { name: 'dreams', description: 'Dreams: consolidation on a branch, reviewed before it becomes memory' },
    { name: 'mcp', description: 'MCP over Streamable HTTP' },
    { name: 'service', description: 'Health and this document' },
  ],
  paths: {
    '/healthz': {
      get: {
        operationId: 'health',
        summary: 'Whether the server serves, and the replication lag of its open stores (in totals: it needs no key)',
        tags: ['service'],
        security: [],
        responses: { '200': json(ref('Health'), 'serving'), '503': respond('Unavailable') },
      },
    },
    '/api/v1/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document',
        tags: ['service'],
        security: [],
        responses: { '200': json({ type: 'object', required: ['openapi', 'paths'] }, 'the OpenAPI document'), '503': respond('Unavailable') },
      },
    },
    '/api/v1/stores': {
      get: {
        operationId: 'listStores',
        summary: 'The stores this key can see',
        tags: ['read'],
        security: [{ bearerKey: [] }],
        responses: { '200': json(ref('StoreList'), 'store ids, sorted'), '401': respond('Unauthorized'), '429': respond('RateLimited'), '503': respond('Unavailable') },
      },
    },
    '/api/v1/stores/{store}/tool-calls': {
      post: {
        operationId: 'toolCall',
        summary: 'Run one memory tool call; a write is one commit named by the tool_use id (retrying the same id is safe)',
        tags: ['tool'],
        security: [{ bearerKey: [] }],
        parameters: [param('store')],
        requestBody: { required: true, content: { 'application/json': { schema: ref('ToolCallRequest') } } },
        responses: {
          '200': json(ref('ToolCallResponse'), 'the tool_result to send back to Claude (errors of the tool itself are results, with is_error), and the commit made, or null'),
          ...serverRefusals,
          '409': respond('Conflict'),
          '507': respond('StoreFull'),
        },
      },
    },
    '/api/v1/stores/{store}': readOperation('overview', 'The store at a glance: head, totals, files, latest calls', ref('Overview')),
    '/api/v1/stores/{store}/commits': readOperation('listCommits', 'Commits, newest first, filtered and paged', ref('CommitList'), [
      ...filterParameters,
      query('before', 'the `older` cursor of the previous page'),
      query('after', 'the `newer` cursor of the previous page'),
    ]),
    '/api/v1/stores/{store}/commits/{ref}': readOperation('getCommit', 'One commit (by commit id, full or abbreviated, or tool_use id): message, diffs, session neighbours', ref('CommitPage'), [
      { name: 'ref', in: 'path', required: true, schema: str },
    ]),
    '/api/v1/stores/{store}/calls/{id}': readOperation('getCall', 'One call by its tool_use id (never a commit id)', ref('CommitPage'), [{ name: 'id', in: 'path', required: true, schema: str }]),
    '/api/v1/stores/{store}/sessions': readOperation('listSessions', 'Every session (with `id`: that session\'s page)', ref('SessionsAnswer'), [
      query('id', 'a session id: its page instead of the list'),
      query('from', 'with id: the step the page starts at'),
    ]),
    '/api/v1/stores/{store}/sessions/{id}': readOperation('getSession', "One session: its calls in order, each with its diffs, and the calls of the call log", ref('SessionPage'), [
      { name: 'id', in: 'path', required: true, schema: str },
      query('from', 'the step (1-based) the page starts at'),
    ]),
    '/api/v1/stores/{store}/files/{path}': readOperation('getFile', 'A memory file (its path below /memories, slashes included) with its blame, at HEAD or at a point', ref('FilePage'), [
      { name: 'path', in: 'path', required: true, description: 'relative to /memories; may contain `/`', schema: str },
      query('at', 'a point: a date, a time, a commit or tool_use id'),
      query('blame', '0: no blame'),
    ]),
    '/api/v1/stores/{store}/tree': readOperation('getTree', 'A folder of the memory at HEAD or at a point', ref('TreePage'), [
      query('at', 'a point: a date, a time, a commit or tool_use id'),
      query('dir', 'a folder below /memories'),
    ]),
    '/api/v1/stores/{store}/search': readOperation('search', 'Files whose path or text matches, and the calls that introduced or removed the text', ref('SearchPage'), [
      query('q', 'the text'),
      query('from', 'the `next` of the previous page'),
    ]),
    '/api/v1/stores/{store}/compare': readOperation('compare', 'What changed between two points, for the memory or one path', ref('ComparePage'), [
      query('from', 'a point'),
      query('to', 'a point (default: HEAD)'),
      query('path', 'a memory path'),
    ]),
    '/api/v1/stores/{store}/redactions': readOperation('listRedactions', 'The audit log of redactions, newest first', ref('RedactionList')),
    '/api/v1/stores/{store}/redactions/{id}': readOperation('getRedaction', 'One redaction and its map of rewritten commits', ref('RedactionPage'), [
      { name: 'id', in: 'path', required: true, schema: str },
      query('from', 'the first map row shown'),
    ]),
    '/api/v1/stores/{store}/rollback/{kind}': {
      post: {
        operationId: 'rollback',
        summary: 'Revert a call, restore a file, roll back a session or reset the store: one new commit (or a preview with dryRun), as the operator key',
        tags: ['operator'],
        security: [{ bearerKey: [] }],
        parameters: [param('store'), { name: 'kind', in: 'path', required: true, schema: { type: 'string', examples: ['revert', 'restore', 'session', 'reset'] } }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('RollbackRequest') } } },
        responses: {
          '200': json(ref('RollbackOutcome'), 'a preview (dryRun), nothing to change, or stopped at a bound'),
          '201': json(ref('RollbackOutcome'), 'committed'),
          '409': { description: 'a conflict (later calls built on it), a read-only store or a moved expectHead', content: { 'application/json': { schema: { anyOf: [ref('RollbackOutcome'), ref('ReadError'), ref('ServerError')] } } } },
          ...serverRefusals,
          '400': respond('ReadRefusal'),
          '404': respond('ReadRefusal'),
        },
      },
    },
    '/api/v1/stores/{store}/reviews': operatorOperation('get', 'listReviews', 'Writes held for review, pending and decided (operator key)', 'operator', object({ reviews: arrayOf(ref('ReviewSummary')) })),
    '/api/v1/stores/{store}/reviews/{id}': operatorOperation('get', 'getReview', 'One review with its calls and their diffs (operator key)', 'operator', object({ review: ref('ReviewSummary') }), { parameters: [idParameter('id')] }),
    '/api/v1/stores/{store}/reviews/{id}/approve': operatorOperation('post', 'approveReview', 'Approve a review (all or `calls`; the rest rejected): one commit on main per approved call, refused whole on a conflict', 'operator', ref('ApproveOutcome'), {
      parameters: [idParameter('id')],
      body: ref('ReviewDecisionRequest'),
      conflict: ref('ReviewRefused'),
    }),
    '/api/v1/stores/{store}/reviews/{id}/reject': operatorOperation('post', 'rejectReview', 'Reject a review: its branch archived, main untouched', 'operator', object({ review: ref('ReviewSummary') }), {
      parameters: [idParameter('id')],
      body: ref('ReviewDecisionRequest'),
    }),
    '/api/v1/stores/{store}/dreams': {
      ...operatorOperation('post', 'startDream', 'Start a dream: Claude consolidates the memory on a branch, the result a review (operator key)', 'dreams', ref('Dream'), { body: ref('DreamRequest'), status: '201' }),
      ...operatorOperation('get', 'listDreams', "The store's dreams, newest first", 'dreams', ref('DreamList')),
    },
    '/api/v1/stores/{store}/dreams/{id}': operatorOperation('get', 'getDream', 'One dream', 'dreams', ref('Dream'), { parameters: [idParameter('id')] }),
    '/api/v1/stores/{store}/dreams/{id}/cancel': operatorOperation('post', 'cancelDream', 'Cancel a dream at its next turn (operator key)', 'dreams', ref('Dream'), { parameters: [idParameter('id')] }),
    '/stores/{store}/mcp': {
      parameters: [param('store')],
      post: {
        operationId: 'mcpPost',
        summary: "MCP's Streamable HTTP transport: JSON-RPC messages in, JSON or an event stream out (the memory tool and memory resources; scope write)",
        tags: ['mcp'],
        security: [{ bearerKey: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('JsonRpcMessage') } } },
        responses: {
          '200': { description: 'the answer', content: { 'application/json': { schema: ref('JsonRpcMessage') }, 'text/event-stream': { schema: str } } },
          '202': { description: 'accepted (notifications and responses)' },
          ...mcpRefusals,
        },
      },
      get: {
        operationId: 'mcpStream',
        summary: 'The server-to-client event stream of an MCP session',
        tags: ['mcp'],
        security: [{ bearerKey: [] }],
        responses: {
          '200': { description: 'the event stream', content: { 'text/event-stream': { schema: str } } },
          ...mcpRefusals,
        },
      },
      delete: {
        operationId: 'mcpClose',
        summary: 'End an MCP session',
        tags: ['mcp'],
        security: [{ bearerKey: [] }],
        responses: {
          '200': { description: 'closed' },
          ...mcpRefusals,
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerKey: { type: 'http', scheme: 'bearer', description: 'A key from `memgit keys create` (shown once); the audit UI also takes it as the password of Basic auth.' },
    },
    parameters: {
      store: { name: 'store', in: 'path', required: true, description: 'the store id (1-64 of a-z A-Z 0-9 . _ -)', schema: { type: 'string', maxLength: 64 } },
    },
    responses: {
      BadRequest: errorResponse('the request is malformed (not JSON, not a memory tool_use, a bad store id, ...); nothing was done'),
      Unauthorized: { ...errorResponse('no key, or a key that is unknown or revoked'), headers: { 'WWW-Authenticate': { schema: str } } },
      Forbidden: errorResponse("the key's scope does not allow it, or the key made all the stores it may"),
      NotFound: errorResponse('no such store, or one the key may not see; nothing at this path'),
      Timeout: errorResponse('the body did not arrive in time; nothing was done'),
      TooLarge: errorResponse('the body is over the limit; nothing was done'),
      UnsupportedMediaType: errorResponse('send the body as Content-Type: application/json'),
      Conflict: errorResponse('a session another key began, a read-only store, a store id taken, a folder that is not a store'),
      RateLimited: { ...errorResponse('over the rate limit or the body budget of this key: retry after Retry-After seconds'), headers: { 'Retry-After': { schema: str } } },
      InternalError: errorResponse('an internal error: the details are in the server log only'),
      Unavailable: { ...errorResponse('busy or shutting down: retry after Retry-After seconds'), headers: { 'Retry-After': { schema: str } } },
      StoreFull: errorResponse('the store is at its size limit: writes are refused, reads still work'),
      McpRefusal: { ...json({ anyOf: [ref('ServerError'), ref('JsonRpcError')] }, "refused by the server (keys, limits: its error form) or by MCP's transport (a JSON-RPC error)"), headers: { 'Retry-After': { schema: str } } },
      ReadRefusal: json({ anyOf: [ref('ReadError'), ref('ServerError')] }, 'refused by the read model (a bad filter, no such commit, ...) or by the server'),
    },
    schemas,
  },
} as const;
