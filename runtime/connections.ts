import type http from 'node:http';
import type { Socket } from 'node:net';

/** The server's open connections (websockets included): their bytes for the network figures, and a way to end them. */
export function trackConnections(server: http.Server) {
  const open = new Set<Socket>();
  // A closed connection's bytes still count: the figures are the process's, not the open connections'.
  const closedBytes = { rx: 0, tx: 0 };
  server.on('connection', (socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      closedBytes.rx += socket.bytesRead;
      closedBytes.tx += socket.bytesWritten;
    });
  });
  return {
    /** Bytes received and sent since the process started. */
    network(): { rxBytes: number; txBytes: number } {
      let rx = closedBytes.rx;
      let tx = closedBytes.tx;
      for (const s of open) {
        rx += s.bytesRead;
        tx += s.bytesWritten;
      }
      return { rxBytes: rx, txBytes: tx };
    },
    /** Ends every open connection but the caller's own. */
    destroyAllBut(keep: Socket): void {
      for (const s of open) if (s !== keep) s.destroy();
    },
  };
}

export type Connections = ReturnType<typeof trackConnections>;
