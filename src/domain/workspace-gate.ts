// Work of a workspace that runs a bounded number at a time: at most `inFlight` in all and
// `perWorkspace` of one workspace, the next waiting one whose workspace has a slot free going
// first (FIFO across workspaces). The large reads of the store (store/players/bulk-reads.ts)
// keep one, the HTTP layer's heavy requests another (http/byte-budget.ts: a workspace's turn for
// heavy work, held from its large body or large read to its answer's last byte), and the
// writes' scripts a third (saves/player-writes.ts, WRITES_PER_WORKSPACE).

interface Waiting {
  readonly workspaceId: string;
  readonly start: () => void;
}

export class WorkspaceGate {
  private running = 0;
  private readonly perWorkspace = new Map<string, number>();
  private readonly queue: Waiting[] = [];

  constructor(
    private readonly inFlight: number,
    private readonly perWorkspaceMax: number,
  ) {}

  async run<T>(workspaceId: string, read: () => Promise<T>): Promise<T> {
    const leave = await this.enter(workspaceId);
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
  async enter(workspaceId: string): Promise<() => void> {
    if (!this.canStart(workspaceId)) {
      await new Promise<void>((start) => this.queue.push({ workspaceId, start }));
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
      waiting!.start();
    }
  }
}
