// Requests sent from a loopback address of the test's own choosing (127.x.y.z: Linux answers
// the whole 127.0.0.0/8), so a limit counted per caller address starts from zero for the test
// however many requests other tests sent from 127.0.0.1 to the shared Redis. Answers are
// recorded for the OpenAPI check, as fetchRecorded's are.
import { randomInt } from 'node:crypto';
import { request } from 'node:http';
import type { ApiResponse } from './service.js';
import { recordResponse } from './response-recorder.js';

/** A loopback address no other test uses (never 127.0.0.1). */
export function randomLoopback(): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

export function fetchFrom(
  localAddress: string,
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        recordResponse(url, method, new Response(null, { status: res.statusCode!, headers: responseHeaders }), text);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode!, headers: responseHeaders, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

