// The old way, for comparison: no sessions and no batches. A join reads the player's data
// (GET /data?userId=, one request); every auto-save and every leave writes each changed key
// with its own POST /data/set; a shutdown saves every player key by key, all at once. Each
// player auto-saves on his own timer, every 60 s from his join (the kindest timing for this
// way: a server-wide auto-save would send 30 x 8 requests at one instant). 429s
// are handled as the session layer handles them (an auto-save leaves the changes for the
// next one; a leave and a shutdown wait them out within their deadlines).
import type { ServerLayer } from './session-layer.js';
import { SHUTDOWN_SECONDS } from './session-layer.js';
import type { SimApi } from './sim-api.js';
import type { SimPlayer } from './sim-player.js';

const JOIN_WAIT_SECONDS = 40;
const CLOSE_SECONDS = 60;
const AUTO_SAVE_SECONDS = 60;

export class KeyByKeyLayer implements ServerLayer {
  private readonly open = new Map<string, SimPlayer>();
  private readonly underWay = new Set<Promise<void>>();
  private shuttingDown = false;

  constructor(private readonly api: SimApi) {}

  async join(player: SimPlayer): Promise<void> {
    const answer = await this.api.send({
      method: 'GET',
      path: `/api/v1/data?userId=${encodeURIComponent(player.userId)}`,
      waitOnRateLimit: true,
      deadline: this.api.clock.now() + JOIN_WAIT_SECONDS,
      abandon: () => this.shuttingDown,
    });
    if (this.shuttingDown) {
      player.cancel();
      return;
    }
    if (answer?.status !== 200 && answer?.status !== 404) {
      player.failure = `join: ${answer?.status ?? 'no answer'} ${answer?.body?.code ?? ''}`;
      return;
    }
    this.open.set(player.userId, player);
    void this.autoSaveLoop(player, player.joinedAt + AUTO_SAVE_SECONDS);
  }

  adopt(player: SimPlayer, _sessionId: string, firstSaveAt: number): void {
    this.open.set(player.userId, player);
    void this.autoSaveLoop(player, firstSaveAt);
  }

  private async autoSaveLoop(player: SimPlayer, firstSaveAt: number): Promise<void> {
    for (let at = firstSaveAt; ; at += AUTO_SAVE_SECONDS) {
      await this.api.clock.until(at);
      if (this.open.get(player.userId) !== player) return;
      const save = this.save(player, false, at + AUTO_SAVE_SECONDS);
      this.underWay.add(save);
      void save.finally(() => this.underWay.delete(save));
    }
  }

  leave(player: SimPlayer): void {
    if (!this.open.delete(player.userId)) return;
    const close = this.save(player, true, this.api.clock.now() + CLOSE_SECONDS);
    this.underWay.add(close);
    void close.finally(() => this.underWay.delete(close));
  }

  /** Players save on their own timers (autoSaveLoop). */
  async autoSave(): Promise<void> {}

  async shutdown(): Promise<void> {
    const deadline = this.api.clock.now() + SHUTDOWN_SECONDS;
    this.shuttingDown = true;
    const players = [...this.open.values()];
    this.open.clear();
    await Promise.all(players.map((p) => this.save(p, true, deadline)));
  }

  async settle(): Promise<void> {
    while (this.underWay.size > 0) await Promise.all([...this.underWay]);
  }

  private async save(player: SimPlayer, final: boolean, deadline: number): Promise<void> {
    player.advance(this.api.clock.now());
    await Promise.all(
      player.changed().map(async ([key, value]) => {
        const answer = await this.api.send({
          method: 'POST',
          path: '/api/v1/data/set',
          body: JSON.stringify({ userId: player.userId, key, value }),
          waitOnRateLimit: final,
          deadline,
        });
        if (answer?.status === 200) {
          // A later save may already have written a newer value of this key.
          if ((player.saved.get(key) ?? -1) < value) player.acknowledge([[key, value]]);
        } else if (final) {
          player.failure = `save: ${answer?.status ?? 'no answer'} ${answer?.body?.code ?? ''}`;
        }
      }),
    );
  }
}
