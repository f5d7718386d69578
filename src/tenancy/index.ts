export { STORE_ID_PATTERN, InvalidStoreIdError, storeIdProblem, isValidStoreId, assertStoreId, storeDir } from './store-id';
export { StoreRegistry, StoreNotFoundError, QueueFullError, RegistryClosedError, StoreFullError, StoreIdTakenError, DEFAULT_MAX_STORES_PER_KEY, DEFAULT_MAX_STORE_BYTES } from './registry';
export type { RegistryOptions, StoreSummary } from './registry';
export { StoreCreators, StoreQuotaError, creatorsFile } from './creators';
export { checkRootSafety, UnsafeRootError } from './root-safety';
export { FleetNode, StoreFencedError, StoreSyncingError, NotReplicatedError, placeStore, placementOrder, placementBalance, ACK_MODES } from './fleet';
export type { AckMode, FleetOptions, FleetHealth, StoreGate } from './fleet';
export { SCOPES, KeyRing, KeyError, createKey, listKeys, revokeKey, keyMatchesStore, scopeAllows, isScope, parseStorePatterns, keysFile } from './keys';
export type { Scope, KeyInfo, KeyRecord, CreateKeyOptions } from './keys';
