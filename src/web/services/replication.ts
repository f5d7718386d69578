import * as fs from 'node:fs';
import { listRemotes, replicationStatus, type ReplicationStatus } from '../../store';
import type { AuditContext } from './context';

/** Where the store is replicated and how far behind each replica is (shown on the overview). */
export interface ReplicationView {
  readOnly: boolean;
  replicas: ReplicationStatus[];
}

export async function replicationView(ctx: AuditContext): Promise<ReplicationView> {
  const store = ctx.store;
  const remotes = await listRemotes({ fs, gitdir: store.gitdir }).catch(() => []);
  const port = store.replication();
  return { readOnly: store.readOnly, replicas: remotes.map((remote) => replicationStatus(port, remote)) };
}
