import http from 'node:http';
import net from 'node:net';

/** How long open requests may take to finish after SIGTERM before their sockets are cut. */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * How long a kept-alive connection that is idle when shutdown begins may still bring a request.
 * A client may have sent one that has not been read yet: closing the connection under it would
 * reset that request, so it gets a moment to arrive (and be answered with `Connection: close`).
 */
const IDLE_GRACE_MS = 250;

/**
 * Makes `server` stop gracefully when the answered function is called:
 * - it stops accepting connections at once (a client's next connection is refused, so it goes to
 *   another replica);
 * - a request in flight, or one that arrives on a kept-alive connection meanwhile, is answered in
 *   full with `Connection: close`, and its connection ends with that answer;
 * - a kept-alive connection with nothing in flight is closed as soon as it brought no request
 *   within `IDLE_GRACE_MS`: it does not hold the drain up;
 * - only what is still open after `DRAIN_TIMEOUT_MS` is cut.
 */
export function gracefulClose(server: http.Server): () => Promise<void> {
  let closing = false;
  const busy = new Map<net.Socket, number>();
  const sockets = new Set<net.Socket>();
  const inFlight = new Set<http.ServerResponse>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    inFlight.add(res);
    if (closing) sayClose(res);
    res.once('close', () => {
      inFlight.delete(res);
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (closing && left <= 0) closeWhenStillIdle(socket);
    });
  });
  const closeWhenStillIdle = (socket: net.Socket) => {
    setTimeout(() => {
      // Checked after the next poll for I/O, not in the timer itself: when the event loop was held up
      // past the grace (a loaded machine), a request that arrived meanwhile is still unread in the
      // kernel, and destroying the socket then would reset it. The poll reads it first and marks the
      // socket busy.
      setImmediate(() => {
        if (!busy.has(socket)) socket.destroy();
      });
    }, IDLE_GRACE_MS).unref();
  };

  return () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      closing = true;
      const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS);
      force.unref();
      // net.Server's close stops accepting; http.Server's would also drop idle connections at once,
      // resetting a request a client has just sent on one.
      net.Server.prototype.close.call(server, () => {
        clearTimeout(force);
        resolve();
      });
      for (const socket of sockets) {
        if (!busy.has(socket)) closeWhenStillIdle(socket);
      }
      for (const res of inFlight) sayClose(res);
    });
}

/**
 * The answer, when it has not started yet, tells the client this connection ends with it (Node ends
 * the connection after a response that says so). When it is too late to say it, the connection is
 * left to the idle rule once the answer is out: ending it at once would reset a request the client
 * sends on it before our FIN reaches it; within the grace such a request is answered, with
 * `Connection: close`.
 */
function sayClose(res: http.ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}
