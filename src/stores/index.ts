export { STORE_ID_PATTERN, InvalidStoreIdError, storeIdProblem, isValidStoreId, assertStoreId, storeDir } from './store-id';
export { StoreRegistry, StoreNotFoundError, QueueFullError, RegistryClosedError } from './registry';
export type { RegistryOptions, StoreSummary } from './registry';
export { SCOPES, KeyRing, KeyError, createKey, listKeys, revokeKey, keyMatchesStore, scopeAllows, isScope, parseStorePatterns, keysFile } from './keys';
export type { Scope, KeyInfo, KeyRecord, CreateKeyOptions } from './keys';
