// Erasure player names' templates (src/domain/erasure.ts): two templates can name one player for
// two users exactly when templatesOverlap says so, checked against names actually made.
import { expect } from 'chai';
import fc from 'fast-check';
import { playerNamesOf, templatesOverlap, USER_ID_PLACEHOLDER } from '../../src/domain/erasure.js';

/** A template's fixed text: short, from digits and a few other player-id characters, so names meet often. */
const fixed = fc.array(fc.constantFrom('1', '2', '0', '_', 'P', '.'), { maxLength: 4 }).map((cs) => cs.join(''));
const template = fc.tuple(fixed, fixed).map(([a, b]) => `${a}${USER_ID_PLACEHOLDER}${b}`);
const userId = fc.integer({ min: 1, max: 999_999 }).map(String);

describe('erasure player names: templates that can name one player for two users', () => {
  it('says so for the examples of docs/erasure.md, and not for the facades\' names', () => {
    expect(templatesOverlap('P{userId}', 'P1{userId}')).to.equal(true);
    expect(templatesOverlap('{userId}_34', '12_{userId}')).to.equal(true);
    expect(templatesOverlap('Player_{userId}', 'Player_{userId}0')).to.equal(true);
    expect(templatesOverlap('{userId}0', '{userId}')).to.equal(true);
    expect(templatesOverlap('Player_{userId}', 'PlayerData_v2..Player_{userId}')).to.equal(false);
    expect(templatesOverlap('Player_{userId}', '{userId}')).to.equal(false);
    expect(templatesOverlap('Player_{userId}', 'Player_{userId}_x')).to.equal(false);
  });

  it('never misses a pair that names one player for two users (and is symmetric)', () => {
    fc.assert(
      fc.property(template, template, userId, userId, (first, second, u1, u2) => {
        const overlap = templatesOverlap(first, second);
        expect(templatesOverlap(second, first)).to.equal(overlap);
        const one = first.replace(USER_ID_PLACEHOLDER, u1);
        const other = second.replace(USER_ID_PLACEHOLDER, u2);
        if (u1 !== u2 && one === other) expect(overlap, `${first} for ${u1} and ${second} for ${u2}: ${one}`).to.equal(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('finds a real pair of user ids for every pair it refuses, among short ones (a leading zero allowed)', () => {
    // Every digit string of one to five digits: a witness is at most one digit longer than the
    // fixed texts of a template, here three characters at most.
    const ids: string[] = [];
    for (let digits = 1; digits <= 5; digits++) for (let n = 0; n < 10 ** digits; n++) ids.push(String(n).padStart(digits, '0'));
    const short = template.filter((t) => t.length - USER_ID_PLACEHOLDER.length <= 3);
    fc.assert(
      fc.property(short, short, (first, second) => {
        fc.pre(first !== second && templatesOverlap(first, second));
        const names = new Map(ids.map((u) => [first.replace(USER_ID_PLACEHOLDER, u), u]));
        const found = ids.some((u) => {
          const owner = names.get(second.replace(USER_ID_PLACEHOLDER, u));
          return owner !== undefined && owner !== u;
        });
        expect(found, `${first} and ${second}`).to.equal(true);
      }),
      { numRuns: 20 },
    );
  });

  it('names each template\'s player for a user, never the user id itself', () => {
    expect(playerNamesOf(['Player_{userId}', '{userId}', 'Player_{userId}'], '42')).to.deep.equal(['Player_42']);
  });
});
