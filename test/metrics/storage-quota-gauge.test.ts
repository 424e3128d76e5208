// pds_storage_quota_used_ratio (src/metrics.ts, fed by saves/quota-warnings.ts): a series per
// workspace at or over 80% of its storage quota, with its share; none for a workspace under
// 80%, and the series leaves when its workspace falls back under.
import { expect } from 'chai';
import { call, client, newWorkspace, useService } from '../support/service.js';

const QUOTA = 50_000;

/** The gauge's series in a scrape, by workspace. */
function ratios(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of text.matchAll(/^pds_storage_quota_used_ratio\{workspace="([^"]+)"\} (\S+)$/gm)) found.set(match[1]!, Number(match[2]));
  return found;
}

describe('metrics: pds_storage_quota_used_ratio', () => {
  const h = useService({ HISTORY_MAX_VERSIONS: '0', STORAGE_QUOTA_FREE_BYTES: String(QUOTA), STORAGE_FLUSH_MS: '50', STORAGE_REFRESH_MS: '100' });
  const settle = () => new Promise((r) => setTimeout(r, 300));
  const scrape = async () => ratios((await call({ baseUrl: h.service.opsUrl }, 'GET', '/metrics')).text);

  it('has a series only for workspaces at or over 80% of their quota, with their share', async () => {
    const full = await newWorkspace(h.redis, 'free');
    const light = await newWorkspace(h.redis, 'free');
    expect((await client(h.service, full.apiKey).post('/data/set', { userId: 'p', key: 'save', value: 'x'.repeat(35_270) })).status).to.equal(200);
    expect((await client(h.service, light.apiKey).post('/data/set', { userId: 'p', key: 'save', value: 'x'.repeat(5_000) })).status).to.equal(200);
    await settle();
    const seen = await scrape();
    // 35,270 B of value, its JSON quotes, the key and its entry (35,292 B counted), in Redis
    // bytes as the quota weighs them (1.2 x counted + 150 B a player): 42,500 B, 85.0x%.
    expect(seen.get(full.workspaceId)).to.be.within(0.85, 0.852);
    expect(seen.has(light.workspaceId)).to.equal(false);

    expect((await client(h.service, full.apiKey).post('/data/set', { userId: 'p', key: 'save', value: 'small' })).status).to.equal(200);
    await settle();
    expect((await scrape()).has(full.workspaceId)).to.equal(false);
  });
});
