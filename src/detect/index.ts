/**
 * Write-time detectors (issue 27): pure functions that read a proposed memory write and say whether it
 * should wait for review, with a reason for every finding. Below the store: nothing here does I/O; the
 * secret scanner's worker is passed in. The rules are documented in docs/review.md ("Detectors").
 */
export * from './types';
export { detectWrite, detectWriteWithSecrets, verdictOf, PATTERN_RULES, DEFAULT_MAX_SCANNED_CHARS, HOLD_AT, WEIGHT } from './detect';
export { proposedWrite, proposeFromToolInput, ProposalRefused } from './write';
export { registrableDomain } from './domains';
export { findPersonalData, mask } from './personal-data';
