// At most N violation log lines a minute per instance. A flood from many addresses otherwise
// writes one warn line per address (7 MB of them in 1.9 s in issue 17's run); past the budget
// lines are only counted, and the count is logged once when the next minute opens.
import type { Logger } from '../logger.js';

const WINDOW_MS = 60_000;

export class LogSampler {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly perMinute: number,
    private readonly clock: () => number,
  ) {}

  /** Whether the caller may write its line now; also writes the last window's summary when due. */
  take(): boolean {
    const now = this.clock();
    if (now - this.windowStart >= WINDOW_MS) {
      if (this.suppressed > 0) {
        this.logger.warn(
          { suppressed: this.suppressed, perMinute: this.perMinute },
          'platform-only access violations not logged one by one (GATE_VIOLATION_LOG_PER_MINUTE reached)',
        );
      }
      this.windowStart = now;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written < this.perMinute) {
      this.written++;
      return true;
    }
    this.suppressed++;
    return false;
  }
}
