// A pino destination that keeps every log line in memory, so tests can read what the service logged.
import { Writable } from 'node:stream';

export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}
