import http from 'isomorphic-git/http/node';
import { ReplicationRefusedError } from '../errors';
import type { RemoteConfig } from './remote-config';
import { updateRemoteState } from './state';
import { authorizationHeader, describeTransportError } from './transport';

/**
 * A replica's HEAD. memgit never follows it: clone, restore-from and pull always take memgit's own
 * branch by name. But a bare repository made with plain `git init --bare` has a HEAD naming `master`
 * while memgit pushes `main`, so its HEAD names a branch that does not exist; git clients (and, without
 * the shim below, isomorphic-git) then find nothing to check out. memgit warns about it.
 */

/** The one branch memgit replicates (the store's only branch). */
const BRANCH_REF = 'refs/heads/main';

type HttpClient = typeof http;
type GitHttpRequest = Parameters<HttpClient['request']>[0];

/** A pkt-line (git's framing: four hex digits of length, then the payload). */
function pkt(payload: string): Buffer {
  const body = Buffer.from(payload, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'latin1'), body]);
}

const FLUSH = Buffer.from('0000', 'latin1');
const DELIM = Buffer.from('0001', 'latin1');

/** The pkt-lines of a buffer (null for a flush or delimiter), or null when it is not made of pkt-lines. */
function readPkts(buffer: Buffer): Array<Buffer | null> | null {
  const lines: Array<Buffer | null> = [];
  let at = 0;
  while (at < buffer.length) {
    const hex = buffer.toString('latin1', at, at + 4);
    if (!/^[0-9a-f]{4}$/i.test(hex)) return null;
    const length = parseInt(hex, 16);
    if (length < 4) {
      lines.push(null);
      at += 4;
      continue;
    }
    if (at + length > buffer.length) return null;
    lines.push(buffer.subarray(at + 4, at + length));
    at += length;
  }
  return lines;
}

async function collect(body: AsyncIterableIterator<Uint8Array> | Uint8Array[] | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  if (body) for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * The upload-pack ref advertisement with a HEAD line added when the server sent none (its HEAD names a
 * branch that does not exist), pointing at memgit's branch; unchanged otherwise.
 */
export function withHeadAdvertised(advertisement: Buffer): Buffer {
  const lines = readPkts(advertisement);
  if (!lines || lines[lines.length - 1] !== null) return advertisement;
  let branch: string | null = null;
  for (const line of lines) {
    if (!line) continue;
    const text = line.toString('utf8').replace(/\n$/, '');
    if (text.startsWith('# service=')) continue;
    if (text === 'version 2') return advertisement; // a v2 capability list carries no refs
    const [oid, name] = text.split('\0')[0].split(' ');
    if (name === 'HEAD') return advertisement;
    if (name === BRANCH_REF && /^[0-9a-f]{40}$/.test(oid)) branch = oid;
  }
  if (!branch) return advertisement;
  return Buffer.concat([advertisement.subarray(0, advertisement.length - FLUSH.length), pkt(`${branch} HEAD\n`), FLUSH]);
}

/**
 * The http client every fetch of memgit's uses. isomorphic-git's fetch (1.44, isomorphic-git#1654)
 * resolves the remote's HEAD even when asked for a named branch, and fails with "Could not find HEAD."
 * when the server advertises none. memgit fetches only named refs and never uses the remote HEAD, so
 * where the server advertises no HEAD, this client shows isomorphic-git one naming memgit's branch (in
 * the ref advertisement of upload-pack only; nothing is sent to the server that it did not ask for).
 */
export const fetchHttp: HttpClient = {
  async request(request: GitHttpRequest) {
    const response = await http.request(request);
    const isAdvertisement = (request.method ?? 'GET').toUpperCase() === 'GET' && /\/info\/refs\?service=git-upload-pack$/.test(request.url);
    if (!isAdvertisement || response.statusCode !== 200) return response;
    const body = withHeadAdvertised(await collect(response.body));
    const headers = { ...response.headers };
    delete headers['content-length'];
    return { ...response, headers, body: [body] as unknown as AsyncIterableIterator<Uint8Array> };
  },
};

/** What a remote's HEAD names, as far as the server says. */
export interface RemoteHead {
  /** The ref HEAD names (e.g. refs/heads/master); null when the server does not say. */
  target: string | null;
  /** HEAD names a branch that exists there. */
  resolves: boolean;
  /** memgit's branch exists there. */
  hasBranch: boolean;
}

/**
 * Ask the server what its HEAD names: git's protocol v2 `ls-refs` with `unborn` (which names HEAD's
 * target even when that branch does not exist: a new, empty replica), else the v0 advertisement.
 */
export async function readRemoteHead(url: string, authorization: string | null, signal?: AbortSignal): Promise<RemoteHead> {
  const headers: Record<string, string> = { 'Git-Protocol': 'version=2' };
  if (authorization) headers.Authorization = authorization;
  const base = url.replace(/\/$/, '');
  const discovery = await http.request({ url: `${base}/info/refs?service=git-upload-pack`, method: 'GET', headers, signal });
  const advertisement = await collect(discovery.body);
  if (discovery.statusCode !== 200) throw httpError(discovery.statusCode, discovery.statusMessage);
  const capabilities = (readPkts(advertisement) ?? []).filter((l): l is Buffer => l !== null).map((l) => l.toString('utf8').replace(/\n$/, ''));
  const lsRefs = capabilities.find((c) => c === 'ls-refs' || c.startsWith('ls-refs='));
  if (!capabilities.includes('version 2') || !lsRefs) return headFromAdvertisement(capabilities);
  const unborn = (lsRefs.split('=')[1] ?? '').split(' ').includes('unborn');
  const body = Buffer.concat([
    pkt('command=ls-refs\n'),
    DELIM,
    pkt('symrefs\n'),
    ...(unborn ? [pkt('unborn\n')] : []),
    pkt('ref-prefix HEAD\n'),
    pkt(`ref-prefix ${BRANCH_REF}\n`),
    FLUSH,
  ]);
  const answer = await http.request({
    url: `${base}/git-upload-pack`,
    method: 'POST',
    signal,
    headers: { ...headers, 'Content-Type': 'application/x-git-upload-pack-request', Accept: 'application/x-git-upload-pack-result' },
    body: [body] as unknown as AsyncIterableIterator<Uint8Array>,
  });
  const listing = await collect(answer.body);
  if (answer.statusCode !== 200) throw httpError(answer.statusCode, answer.statusMessage);
  const head: RemoteHead = { target: null, resolves: false, hasBranch: false };
  for (const line of readPkts(listing) ?? []) {
    if (!line) continue;
    const [oid, name, ...attributes] = line.toString('utf8').replace(/\n$/, '').split(' ');
    if (name === BRANCH_REF) head.hasBranch = true;
    if (name !== 'HEAD') continue;
    head.resolves = oid !== 'unborn';
    head.target = attributes.find((a) => a.startsWith('symref-target:'))?.slice('symref-target:'.length) ?? null;
  }
  return head;
}

/** A v0 advertisement: HEAD is listed (with its symref capability) only when it names an existing branch. */
function headFromAdvertisement(lines: string[]): RemoteHead {
  const head: RemoteHead = { target: null, resolves: false, hasBranch: false };
  for (const line of lines) {
    const [ref, capabilities = ''] = line.split('\0');
    const name = ref.split(' ')[1];
    if (name === BRANCH_REF) head.hasBranch = true;
    if (name === 'HEAD') head.resolves = true;
    const symref = capabilities.split(' ').find((c) => c.startsWith('symref=HEAD:'));
    if (symref) head.target = symref.slice('symref=HEAD:'.length);
  }
  return head;
}

function httpError(status: number, message: string): Error {
  return Object.assign(new Error(`HTTP ${status} ${message}`), { data: { statusCode: status, statusMessage: message } });
}

/**
 * What is wrong with a replica's HEAD, in words, with the fix; null when it names memgit's branch (or
 * the server does not say what it names).
 */
export function remoteHeadProblem(head: RemoteHead): string | null {
  if (head.target === BRANCH_REF) return null; // an empty replica made with -b main names it before it exists
  const fix =
    'memgit clone and restore-from take main regardless, but a git client cloning the replica gets no files; ' +
    'fix it in the bare repository: git symbolic-ref HEAD refs/heads/main (or create replicas with git init --bare -b main)';
  if (!head.resolves && head.target) return `the replica's HEAD names ${head.target.replace(/^refs\/heads\//, '')}, a branch it does not have (memgit pushes main): ${fix}`;
  if (!head.resolves && head.hasBranch) return `the replica's HEAD names a branch it does not have (memgit pushes main): ${fix}`;
  if (head.resolves && head.target) return `the replica's HEAD names ${head.target.replace(/^refs\/heads\//, '')}, not memgit's branch main: ${fix}`;
  return null;
}

/**
 * Ask a remote what its HEAD names (within `timeoutMs`): the problem in words, or null when it names
 * memgit's branch (or the server does not say). A failure to ask is a ReplicationRefusedError.
 */
export async function checkRemoteHead(remote: RemoteConfig, timeoutMs = 10_000): Promise<string | null> {
  try {
    return remoteHeadProblem(await readRemoteHead(remote.url, authorizationHeader(remote), AbortSignal.timeout(timeoutMs)));
  } catch (error) {
    if (error instanceof ReplicationRefusedError) throw error;
    throw new ReplicationRefusedError(`could not ask ${remote.name} what its HEAD names: ${describeTransportError(error, remote)}`);
  }
}

/** checkRemoteHead, and the finding kept in the remote's state (for `memgit status` and the next push). */
export async function inspectRemoteHead(gitdir: string, remote: RemoteConfig, timeoutMs?: number): Promise<string | null> {
  const problem = await checkRemoteHead(remote, timeoutMs);
  updateRemoteState(gitdir, remote.name, { headProblem: problem });
  return problem;
}
