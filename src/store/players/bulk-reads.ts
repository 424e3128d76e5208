// Whole-player reads of large players (over READ_INLINE_BYTES) wait their turn here: at most
// BULK_READS_IN_FLIGHT per instance and BULK_READS_PER_WORKSPACE per workspace at a time, so
// one workspace reading its largest players as fast as its plan allows cannot take every slot,
// and the memory those replies hold is bounded (about 4 copies of MAX_PLAYER_BYTES per slot).
// Measured (test-long/noisy-neighbour.test.ts): without it, on the shared connection, a
// neighbour's reads all timed out (503) while one workspace read 4 MiB players. Over the API a
// large read also holds its workspace's heavy turn from before the read to its answer's last
// byte (http/byte-budget.ts); this gate is the store's own bound, for every caller (the admin
// API, a many-player acquire reading several players under one turn).

import { WorkspaceGate } from '../../domain/workspace-gate.js';

export const BULK_READS_IN_FLIGHT = 8;
export const BULK_READS_PER_WORKSPACE = 1;

/** The store's gate for large reads: BULK_READS_IN_FLIGHT, BULK_READS_PER_WORKSPACE. */
export function bulkReadGate(): WorkspaceGate {
  return new WorkspaceGate(BULK_READS_IN_FLIGHT, BULK_READS_PER_WORKSPACE);
}
