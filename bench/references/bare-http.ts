// Reference: a bare node:http server answering a constant JSON body. No Node service on this
// machine can be faster; every figure is also given as a ratio to this one.
import { createServer } from 'node:http';
import { listenFromEnv } from './listen.js';

const body = Buffer.from('{"success":true,"data":{"key":"k","value":1,"updated_at":"2026-01-01T00:00:00.000Z"}}');

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
listenFromEnv(server);
