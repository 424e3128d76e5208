// Sends the commands issued in one turn of the event loop to Redis in one socket write, as
// ioredis's auto-pipelining does, without its cost per batch: ioredis builds a Pipeline object
// for every batch (a promise, a copy of every defined script onto the object, a getter added
// with defineProperty) and hands each reply back through one more tick. Under light load
// every batch holds one command, and that machinery was about half of a request's ioredis time.
//
// Here the client sends each command as it would with auto-pipelining off, but the first
// command of a turn corks the connection's socket and the turn's end (setImmediate, as
// ioredis's auto-pipelining) uncorks it: node's stream then writes the buffered commands with
// one writev. Order, replies and errors are ioredis's own; only the moment of the write moves.
// On a cluster, each node's connection is batched so (redis.ts, on '+node'), in place of
// ioredis's cluster auto-pipelining, which failed whole batches while the slot table changed.
import type { Redis } from 'ioredis';
import type { Socket } from 'node:net';

type SendCommand = (command: unknown, stream?: unknown, ...rest: unknown[]) => unknown;

export function batchWritesPerTurn(client: Redis): void {
  const target = client as unknown as { sendCommand: SendCommand; stream?: Socket };
  const send = target.sendCommand.bind(client) as SendCommand;
  let corked: Socket | undefined;
  const flush = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  target.sendCommand = function sendBatched(command, stream, ...rest) {
    // A pipeline (MULTI) passes a stream of its own and writes its commands as one piece.
    if (corked === undefined && stream === undefined && client.status === 'ready') {
      const socket = target.stream;
      if (socket !== undefined && socket.writable) {
        socket.cork();
        corked = socket;
        setImmediate(flush);
      }
    }
    return send(command, stream, ...rest);
  };
}
