// Mocha root hooks: one Redis for the whole run (see redis.ts), shared through testRedis();
// and, once every test has run, the check of every recorded response against the OpenAPI
// document, which fails the run on any answer the document does not describe.
import { ResponseChecker } from './openapi-check.js';
import { provideRedis, type TestRedis } from './redis.js';
import { recordedResponses, setCurrentTest } from './response-recorder.js';

let redis: TestRedis | undefined;

export function testRedisUrl(): string {
  if (!redis) throw new Error('the test Redis is not up: run the tests through mocha (npm test)');
  return redis.url;
}

/** Where the test Redis comes from: one of REDIS_URL keeps its own settings. */
export function testRedisSource(): TestRedis['source'] {
  if (!redis) throw new Error('the test Redis is not up: run the tests through mocha (npm test)');
  return redis.source;
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    redis = await provideRedis();
    process.stderr.write(`  (tests use Redis from ${redis.source})\n`);
  },
  beforeEach(this: Mocha.Context) {
    setCurrentTest(this.currentTest?.fullTitle());
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(30_000);
    try {
      const problems = new ResponseChecker().checkAll(recordedResponses());
      if (problems.length > 0) {
        throw new Error(
          `${problems.length} response(s) that the OpenAPI document does not describe ` +
            `(fix the answer or its route in src/openapi/routes/):\n  ${problems.join('\n  ')}`,
        );
      }
    } finally {
      await redis?.stop();
    }
  },
};
