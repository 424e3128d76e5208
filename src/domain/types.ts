// The service's own records, as the store returns them.

/** The plans of the spec: requests per window, storage quota. */
export type Plan = 'free' | 'pro';
/** How the platform-only gate acts: not at all, logging violations, or refusing and banning. */
export type GateMode = 'off' | 'report' | 'enforce';
export const PLANS: readonly Plan[] = ['free', 'pro'];

export interface Workspace {
  readonly id: string;
  readonly name: string;
  readonly plan: Plan;
  readonly createdAt: string;
}

export type KeyStatus = 'active' | 'revoked';
/** `read` keys may ping and read; `write` keys may do everything. */
export type KeyScope = 'read' | 'write';

export interface ApiKeyRecord {
  readonly keyId: string;
  readonly workspaceId: string;
  readonly status: KeyStatus;
  readonly scope: KeyScope;
  /** The first characters of the raw key, safe to show: `pds_AbC123`. */
  readonly prefix: string;
  readonly createdAt: string;
  /** After this instant the key is refused like a revoked one. */
  readonly expiresAt?: string | undefined;
  readonly label?: string | undefined;
  /** Marked by the operator as a development key: the editor's play-tests may use it (gate). */
  readonly dev?: boolean | undefined;
}
