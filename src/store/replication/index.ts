/** Replication: a store mirrored to a git server, and stores cloned back from one (see docs/replication.md). */
export type { ReplicationPort } from './port';
export { addRemote, removeRemote, listRemotes, getRemote, displayUrl } from './remote-config';
export type { RemoteConfig } from './remote-config';
export { pushToRemote } from './push';
export type { PushReport, PushOptions } from './push';
export { Replicator } from './replicator';
export type { ReplicatorOptions } from './replicator';
export { replicationStatus } from './status';
export type { ReplicationStatus } from './status';
export { cloneStore, pullStore } from './clone';
export type { CloneOptions, PullReport } from './clone';
export { forgetRemoteState } from './state';
export { inspectRemoteHead } from './remote-head';
export { remoteBranchHead, localBranchHead, historyContains } from './heads';
