// Whole-player reads of large players (over READ_INLINE_BYTES) wait their turn here: at most
// BULK_READS_IN_FLIGHT per instance and BULK_READS_PER_WORKSPACE per workspace at a time, so
// one workspace reading its largest players as fast as its plan allows cannot take every slot,
// and the memory those replies hold is bounded (about 4 copies of MAX_PLAYER_BYTES per slot).
// Measured (test-long/noisy-neighbour.test.ts): without it, on the shared connection, a
// neighbour's reads all timed out (503) while one workspace read 4 MiB players.

export const BULK_READS_IN_FLIGHT = 8;
export const BULK_READS_PER_WORKSPACE = 2;

interface Waiting {
  readonly workspaceId: string;
  readonly start: () => void;
}

export class BulkReadGate {
  private running = 0;
  private readonly perWorkspace = new Map<string, number>();
  private readonly queue: Waiting[] = [];

  constructor(
    private readonly inFlight = BULK_READS_IN_FLIGHT,
    private readonly perWorkspaceMax = BULK_READS_PER_WORKSPACE,
  ) {}

  async run<T>(workspaceId: string, read: () => Promise<T>): Promise<T> {
    if (!this.canStart(workspaceId)) {
      await new Promise<void>((start) => this.queue.push({ workspaceId, start }));
    } else {
      this.take(workspaceId);
    }
    try {
      return await read();
    } finally {
      this.give(workspaceId);
    }
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
    // The first waiting read whose workspace has a slot free goes next (FIFO across workspaces).
    const next = this.queue.findIndex((w) => this.canStart(w.workspaceId));
    if (next >= 0) {
      const [waiting] = this.queue.splice(next, 1);
      this.take(waiting!.workspaceId);
      waiting!.start();
    }
  }
}
