// The 503 cases of S8 refuse because one request holds the only slot of a limit-1 guard. That
// request is sent from the driver, never from the server's own process: one HTTP client request
// in the server process is enough for V8 to compile Node's tick queue more generally for every
// later response (BENCHMARKS.md, S8, says how much), a cost that would be charged to whichever
// server happened to hold its own slot.
import { connect } from 'node:net';

/**
 * Sends the request that occupies the only slot of `child`'s server on `port`, and resolves
 * with its socket (keep it open; destroy it when done) once the server reports the request is
 * inside its handler.
 */
export function holdOneSlot(child, port) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', reject);
    child.on('message', function onHeld(m) {
      if (m?.held !== true) return;
      child.off('message', onHeld);
      resolve(socket);
    });
    socket.write('GET /hold HTTP/1.1\r\nHost: bench\r\n\r\n');
  });
}
