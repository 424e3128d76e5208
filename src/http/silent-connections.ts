// Closes connections that send nothing at all. Node's headersTimeout and requestTimeout start
// with a request's first byte, and server.timeout no longer applies before it, so without this
// a client could hold any number of silent sockets open for ever.
import type { Server } from 'node:http';

export function closeSilentConnections(server: Server, afterMs: number): void {
  server.on('connection', (socket) => {
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, afterMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
