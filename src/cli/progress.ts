// A one-line progress bar on stderr, drawn only when stderr is a terminal (a script or a pipe
// gets the summary alone), at most ten times a second.

const WIDTH = 30;

export interface Progress {
  update(done: number, total?: number): void;
  finish(): void;
}

export function progressBar(label: string, unit: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, finish() {} };
  const started = Date.now();
  let last = 0;
  let drawn = false;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? Math.round(done / seconds) : 0;
      let bar = '';
      if (total !== undefined && total > 0) {
        const share = Math.min(1, done / total);
        const filled = Math.round(share * WIDTH);
        bar = `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${(share * 100).toFixed(0).padStart(3)}% `;
      }
      stream.write(`\r${label} ${bar}${done} ${unit} (${rate}/s)\u001b[K`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\r\u001b[K');
    },
  };
}
