// Reference: node:http plus one HGET through ioredis per request (the player the service reads
// for the same request: referenceKey), the answer wrapped in JSON.
import { createServer } from 'node:http';
import { listenFromEnv, referenceKey, referenceRedis, REFERENCE_FIELD } from './listen.js';

const redis = referenceRedis();

const server = createServer((req, res) => {
  const query = new URL(req.url ?? '/', 'http://x').searchParams;
  const apiKey = req.headers['x-api-key'];
  const hash = referenceKey(typeof apiKey === 'string' ? apiKey : undefined, query.get('userId') ?? undefined);
  redis.hget(hash, query.get('key') ?? REFERENCE_FIELD).then(
    (value) => {
      const body = `{"success":true,"data":${JSON.stringify(value)}}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    () => {
      res.writeHead(500);
      res.end();
    },
  );
});
listenFromEnv(server);
