// Who the current admin request acts as, when it is not the AdminOperations' own actor: the
// operator console's requests go through the same admin routes as a bearer token's, and are
// recorded in the audit trail under the console's name. Scoped per request by AsyncLocalStorage,
// so one router and one AdminOperations serve both callers.
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<string>();

export function actingAs<T>(actor: string, run: () => Promise<T>): Promise<T> {
  return scope.run(actor, run);
}

export function currentActor(): string | undefined {
  return scope.getStore();
}
