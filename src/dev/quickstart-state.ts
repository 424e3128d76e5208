// What the quick start keeps in .data between starts: the demo workspace's and key's ids and
// the Redis it ran on (.data/demo-workspace.json), and the demo key itself (.data/demo-key,
// readable by its owner only), so that the key a developer pasted into Studio's secret store
// keeps working across restarts. Only the quick start's own demo key is ever written there: a
// development convenience on the developer's machine, never done by the service.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { looksLikeApiKey } from '../domain/api-key.js';

export interface Saved {
  workspaceId?: string;
  keyId?: string;
  redisUrl?: string;
  /** The Redis at redisUrl is the quick start's own redis-server. */
  privateRedis?: boolean;
  /** That server's process id while it runs. */
  redisPid?: number;
}

const OWNER_ONLY = 0o600;

export class QuickstartState {
  readonly stateFile: string;
  readonly keyFile: string;

  constructor(readonly dataDir: string) {
    this.stateFile = resolve(dataDir, 'demo-workspace.json');
    this.keyFile = resolve(dataDir, 'demo-key');
  }

  read(): Saved {
    try {
      return existsSync(this.stateFile) ? (JSON.parse(readFileSync(this.stateFile, 'utf8')) as Saved) : {};
    } catch {
      return {};
    }
  }

  write(saved: Saved): void {
    mkdirSync(this.dataDir, { recursive: true });
    writeFileSync(this.stateFile, JSON.stringify(saved));
  }

  /** The demo key kept by an earlier start, if the file holds one. */
  readKey(): string | undefined {
    try {
      const text = readFileSync(this.keyFile, 'utf8').trim();
      return looksLikeApiKey(text) ? text : undefined;
    } catch {
      return undefined;
    }
  }

  writeKey(apiKey: string): void {
    mkdirSync(this.dataDir, { recursive: true });
    writeFileSync(this.keyFile, `${apiKey}\n`, { mode: OWNER_ONLY });
    chmodSync(this.keyFile, OWNER_ONLY); // an existing file keeps its mode through writeFileSync
  }
}
