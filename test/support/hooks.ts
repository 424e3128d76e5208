// Mocha root hooks: one Redis for the whole run (see redis.ts), shared through testRedis().
import { provideRedis, type TestRedis } from './redis.js';

let redis: TestRedis | undefined;

export function testRedisUrl(): string {
  if (!redis) throw new Error('the test Redis is not up: run the tests through mocha (npm test)');
  return redis.url;
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    redis = await provideRedis();
    process.stderr.write(`  (tests use Redis from ${redis.source})\n`);
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    await redis?.stop();
  },
};
