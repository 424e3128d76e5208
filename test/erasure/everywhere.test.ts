// The erasure's checklist, walked on one Redis (test/erasure/cluster.test.ts walks it on a
// cluster): a player put everywhere its data can live is erased, an export taken before is
// imported again, and no key of the workspace nor of the installation holds its user id or its
// data (docs/erasure.md, "Every place a player lives").
import { expect } from 'chai';
import { ADMIN_TOKEN } from '../support/admin.js';
import { ERASURE_ENV } from '../support/erasure.js';
import { putEverywhereEraseAndWalk } from '../support/erasure-walk.js';
import { useService } from '../support/service.js';

describe('an erased player, looked for in every key', function () {
  this.timeout(60_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN, STORAGE_FLUSH_MS: '50', PLAYER_INDEX_FLUSH_MS: '60000' });

  it('is nowhere: no key of the workspace or of the installation holds its user id or its data', async () => {
    const walk = await putEverywhereEraseAndWalk(h.service, h.redis, ADMIN_TOKEN);
    // The walk finds what it looks for: before the erasure, the player was in every kind of place.
    const placesBefore = new Set(walk.before.map((f) => f.key.replace(walk.workspaceId, '<ws>').replace(/:i:.*$/, ':i:<hash>')));
    expect(walk.before.map((f) => f.what)).to.include.members(['userId', 'data', 'message', 'batch', 'score', 'level']);
    expect(placesBefore.size).to.be.greaterThan(10);
    expect(walk.after, JSON.stringify(walk.after)).to.deep.equal([]);
    expect(walk.keysRead).to.be.greaterThan(10);
  });
});
