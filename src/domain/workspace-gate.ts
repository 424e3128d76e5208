// Work of a workspace that runs a bounded number at a time: at most `inFlight` in all and
// `perWorkspace` of one workspace, the next waiting one whose workspace has a slot free going
// first (FIFO across workspaces). The large reads of the store (store/players/bulk-reads.ts)
// keep one, the HTTP layer's heavy requests another (http/byte-budget.ts: a workspace's turn for
// heavy work, held from its large body or large read to its answer's last byte), and the
// writes' scripts a third (saves/write-turns.ts; WRITES_PER_WORKSPACE in saves/player-turns.ts).

interface Waiting {
  readonly workspaceId: string;
  readonly start: () => void;
  /** Stops the timer of a bounded wait. */
  started?: () => void;
}

export class WorkspaceGate {
  private running = 0;
  private readonly perWorkspace = new Map<string, number>();
  private readonly queue: Waiting[] = [];

  constructor(
    private readonly inFlight: number,
    private readonly perWorkspaceMax: number,
  ) {}

  /**
   * Runs `read` once the workspace has a slot. With `maxWait`, a wait longer than `maxWait.ms`
   * is given up: `maxWait.tooLong()` is thrown and `read` never runs.
   */
  async run<T>(workspaceId: string, read: () => Promise<T>, maxWait?: { readonly ms: number; readonly tooLong: () => Error }): Promise<T> {
    const leave = await this.enter(workspaceId, maxWait);
    try {
      return await read();
    } finally {
      leave();
    }
  }

  /**
   * Waits for a slot of the workspace and holds it until the returned function is called (a
   * second call does nothing): for work whose end is not one promise's (an answer's last byte).
   */
  async enter(workspaceId: string, maxWait?: { readonly ms: number; readonly tooLong: () => Error }): Promise<() => void> {
    if (!this.canStart(workspaceId)) {
      await new Promise<void>((start, giveUp) => {
        const waiting: Waiting = { workspaceId, start };
        this.queue.push(waiting);
        if (maxWait === undefined) return;
        const timer = setTimeout(() => {
          const at = this.queue.indexOf(waiting);
          if (at < 0) return; // started meanwhile
          this.queue.splice(at, 1);
          giveUp(maxWait.tooLong());
        }, maxWait.ms);
        waiting.started = () => clearTimeout(timer);
      });
    } else {
      this.take(workspaceId);
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.give(workspaceId);
    };
  }

  private canStart(workspaceId: string): boolean {
    return this.running < this.inFlight && (this.perWorkspace.get(workspaceId) ?? 0) < this.perWorkspaceMax;
  }

  private take(workspaceId: string): void {
    this.running++;
    this.perWorkspace.set(workspaceId, (this.perWorkspace.get(workspaceId) ?? 0) + 1);
  }

  private give(workspaceId: string): void {
    this.running--;
    const left = (this.perWorkspace.get(workspaceId) ?? 1) - 1;
    if (left === 0) this.perWorkspace.delete(workspaceId);
    else this.perWorkspace.set(workspaceId, left);
    // The first waiting one whose workspace has a slot free goes next (FIFO across workspaces).
    const next = this.queue.findIndex((w) => this.canStart(w.workspaceId));
    if (next >= 0) {
      const [waiting] = this.queue.splice(next, 1);
      this.take(waiting!.workspaceId);
      waiting!.started?.();
      waiting!.start();
    }
  }
}
