// Reference: node:http plus one HGET through ioredis per request, the answer wrapped in JSON.
import { createServer } from 'node:http';
import { listenFromEnv, referenceRedis, REFERENCE_FIELD, REFERENCE_KEY } from './listen.js';

const redis = referenceRedis();

const server = createServer((_req, res) => {
  redis.hget(REFERENCE_KEY, REFERENCE_FIELD).then(
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
