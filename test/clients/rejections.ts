// What a TypeScript client call rejected with, for the client tests: each fails the test when
// the call resolved instead.
import { expect } from 'chai';
import { PlayerDataError } from '../../clients/typescript/src/index.js';

/** Resolves to what `promise` rejected with; fails the test if it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(Error);
    return err as Error;
  }
  expect.fail('expected a rejection');
}

/** The client's error `promise` rejected with (its code, status, data). */
export async function playerDataError(promise: Promise<unknown>): Promise<PlayerDataError> {
  const err = await rejection(promise);
  expect(err).to.be.instanceOf(PlayerDataError);
  return err as PlayerDataError;
}
