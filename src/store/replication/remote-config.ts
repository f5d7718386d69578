import * as fs from 'node:fs';
import git from 'isomorphic-git';
import { ReplicationRefusedError } from '../errors';

/**
 * Remotes of a store, kept in the repository's own git config (`remote.NAME.url` as git has it, plus
 * memgit's keys). Only the *name* of the environment variable that holds a token is stored: credentials
 * never reach the config, the log or the output.
 */
export interface RemoteConfig {
  name: string;
  url: string;
  /** Environment variable holding the password or token for basic auth (never the value). */
  tokenEnv: string | null;
  /** Basic-auth user name sent with the token (GitHub, GitLab and Gitea accept any for a token). */
  user: string;
  /** Push after every commit, in the background. */
  auto: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
export const DEFAULT_REMOTE_USER = 'memgit';

export function checkRemoteName(name: string): void {
  if (!NAME.test(name) || name.includes('..')) {
    throw new ReplicationRefusedError(`${JSON.stringify(name)} is not a remote name (letters, digits, ., _, -; at most 64)`);
  }
}

/** Refuse URLs memgit cannot or must not use: other transports, and credentials written into the URL. */
export function checkRemoteUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ReplicationRefusedError(`${JSON.stringify(url)} is not a URL (expected https://host/owner/store.git)`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ReplicationRefusedError(`only http(s) git remotes are supported (smart HTTP), not ${parsed.protocol}`);
  }
  if (parsed.username || parsed.password) {
    throw new ReplicationRefusedError(
      'the URL holds credentials; put the token in an environment variable and pass --token-env VAR instead',
    );
  }
}

/** A URL safe to print: no query string (some servers take tokens there), no credentials. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return '(invalid URL)';
  }
}

interface ConfigArgs {
  fs: typeof fs;
  gitdir: string;
}

export async function addRemote(
  args: ConfigArgs,
  remote: { name: string; url: string; tokenEnv?: string | null; user?: string; auto?: boolean },
): Promise<RemoteConfig> {
  checkRemoteName(remote.name);
  checkRemoteUrl(remote.url);
  if (remote.tokenEnv != null && !ENV_NAME.test(remote.tokenEnv)) {
    throw new ReplicationRefusedError(`${JSON.stringify(remote.tokenEnv)} is not an environment variable name`);
  }
  const user = remote.user ?? DEFAULT_REMOTE_USER;
  if (!/^[^:\s\x00-\x1f]{1,128}$/.test(user)) throw new ReplicationRefusedError('the user name may not hold ":", spaces or control characters');
  if ((await listRemotes(args)).some((r) => r.name === remote.name)) {
    throw new ReplicationRefusedError(`remote ${remote.name} exists already (memgit remote remove ${remote.name} first)`);
  }
  const key = (k: string) => `remote.${remote.name}.${k}`;
  await git.setConfig({ ...args, path: key('url'), value: remote.url });
  await git.setConfig({ ...args, path: key('memgituser'), value: user });
  if (remote.tokenEnv) await git.setConfig({ ...args, path: key('memgittokenenv'), value: remote.tokenEnv });
  await git.setConfig({ ...args, path: key('memgitautopush'), value: remote.auto ? 'true' : 'false' });
  return { name: remote.name, url: remote.url, tokenEnv: remote.tokenEnv ?? null, user, auto: !!remote.auto };
}

export async function removeRemote(args: ConfigArgs, name: string): Promise<void> {
  checkRemoteName(name);
  if (!(await listRemotes(args)).some((r) => r.name === name)) throw new ReplicationRefusedError(`no remote named ${name}`);
  await git.deleteRemote({ ...args, remote: name });
}

export async function listRemotes(args: ConfigArgs): Promise<RemoteConfig[]> {
  const remotes = await git.listRemotes(args);
  const out: RemoteConfig[] = [];
  for (const { remote, url } of remotes) {
    const get = (k: string) => git.getConfig({ ...args, path: `remote.${remote}.${k}` }).catch(() => undefined) as Promise<string | undefined>;
    out.push({
      name: remote,
      url,
      tokenEnv: (await get('memgittokenenv')) ?? null,
      user: (await get('memgituser')) ?? DEFAULT_REMOTE_USER,
      auto: String(await get('memgitautopush')) === 'true',
    });
  }
  return out;
}

export async function getRemote(args: ConfigArgs, name: string): Promise<RemoteConfig> {
  const remote = (await listRemotes(args)).find((r) => r.name === name);
  if (!remote) throw new ReplicationRefusedError(`no remote named ${JSON.stringify(name)} (memgit remote add ${name} URL)`);
  return remote;
}
