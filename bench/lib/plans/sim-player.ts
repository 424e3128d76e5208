// A simulated player's data: KEYS counters, of which the game changes one every
// 60 / changesPerMinute simulated seconds, cycling through the keys so that the changes of one
// minute are distinct keys. `saved` is what the service acknowledged; the changed keys are
// those whose value differs from it (as the Luau layer finds them, by comparing encodings).
export const KEYS_PER_PLAYER = 20;

export class SimPlayer {
  readonly values = new Map<string, number>();
  readonly saved = new Map<string, number>();
  private changes = 0;
  /** Set when the player has left: no change happens after it. */
  leftAt: number | undefined;
  /** When the session layer gave up on this player's data (join refused, save dropped). */
  failure: string | undefined;
  /** The server shut down while the player was joining: he never played. */
  cancelled = false;

  /** Ends a join that the server's shutdown cut short. */
  cancel(): void {
    this.cancelled = true;
    this.leftAt = this.joinedAt;
  }

  constructor(
    readonly userId: string,
    readonly joinedAt: number,
    private readonly secondsPerChange: number,
    private readonly offset: number,
  ) {}

  /** Applies every change the game made up to `now`; a player who left has made all of his. */
  advance(now: number): void {
    const until = this.leftAt ?? now;
    const due = Math.floor((until - this.joinedAt) / this.secondsPerChange);
    for (; this.changes < due; this.changes++) {
      const key = `k${(this.offset + this.changes) % KEYS_PER_PLAYER}`;
      this.values.set(key, (this.values.get(key) ?? 0) + 1);
    }
  }

  /** The changed keys with their current values. */
  changed(): Array<[string, number]> {
    return [...this.values].filter(([key, value]) => this.saved.get(key) !== value);
  }

  acknowledge(written: ReadonlyArray<readonly [string, number]>): void {
    for (const [key, value] of written) this.saved.set(key, value);
  }
}
