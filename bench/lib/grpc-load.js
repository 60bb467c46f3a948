// The gRPC cost bench's load: unary calls of lib/grpc-service.js written straight onto HTTP/2
// sessions with node:http2 (gRPC's framing by hand: the headers, one length-prefixed message, the
// status read from the trailers), so the driver spends far less CPU per call than a grpc-js
// client would and the server, not the driver, is the one kept busy. Also the call that holds a
// capacity case's only slot (see lib/hold-slot.js for why the driver makes it).
import { connect } from 'node:http2';
import { status as statusCodes } from '@grpc/grpc-js';
import { callPath, requestBytes } from './grpc-service.js';

const headers = {
  ':method': 'POST',
  ':path': callPath,
  'content-type': 'application/grpc',
  te: 'trailers',
};
/** The request as gRPC frames it: not compressed, its length (big-endian), its bytes. */
const frame = Buffer.alloc(5 + requestBytes.length);
frame.writeUInt32BE(requestBytes.length, 1);
requestBytes.copy(frame, 5);

/** A status code's name (`UNAVAILABLE`), or the code when it is not one. */
export function statusName(code) {
  return statusCodes[code] ?? String(code);
}

/**
 * `concurrency` unary calls in a closed loop over `channels` HTTP/2 sessions to the server on
 * `port` (each call made again as soon as its status is in, while running); `stop()` resolves
 * once every call in flight has ended, and `calls(n)` makes exactly `n` calls so and resolves
 * when they have ended. `counts` maps each status code to its calls.
 */
export function grpcLoad(port, { concurrency, channels }) {
  const counts = new Map();
  let total = 0;
  let running = false;
  /** Calls still to be made while running (`calls(n)`), else Infinity. */
  let left = Infinity;
  let busy = 0;
  let drained = () => {};
  let closing = false;
  const fail = (what) => (e) => {
    if (!closing) throw new Error(`${what} to the ${port} server failed: ${e?.message ?? e}`);
  };
  const sessions = Array.from({ length: channels }, () => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on('error', fail('a session'));
    session.on('goaway', () => fail('a session')(new Error('the server sent GOAWAY')));
    return session;
  });

  function call(slot) {
    const stream = sessions[slot % channels].request(headers);
    let code;
    stream.on('response', (h) => {
      // A trailers-only answer (a refusal before any message) has its status here.
      if (h['grpc-status'] !== undefined) code = Number(h['grpc-status']);
    });
    stream.on('trailers', (t) => {
      code = Number(t['grpc-status']);
    });
    stream.on('error', fail('a call'));
    stream.on('close', () => {
      counts.set(code, (counts.get(code) ?? 0) + 1);
      total++;
      if (running && left > 0) {
        left--;
        call(slot);
      } else if (--busy === 0) drained();
    });
    stream.resume();
    stream.end(frame);
  }

  return {
    ready: Promise.all(
      sessions.map((s) => new Promise((resolve) => s.once('connect', () => resolve()))),
    ),
    get total() {
      return total;
    },
    counts,
    start(n = Infinity) {
      running = true;
      left = n;
      busy = 0;
      for (let slot = 0; slot < concurrency && left > 0; slot++) {
        left--;
        busy++;
        call(slot);
      }
    },
    stop() {
      running = false;
      return new Promise((resolve) => {
        drained = resolve;
        if (busy === 0) resolve();
      });
    },
    calls(n) {
      const done = new Promise((resolve) => (drained = resolve));
      this.start(n);
      return done.then(() => {
        running = false;
      });
    },
    close() {
      closing = true;
      for (const s of sessions) s.destroy();
    },
  };
}

/**
 * Makes the call that occupies the only slot of `child`'s server on `port`, on a session of its
 * own, and resolves with that session (destroy it when done) once the server reports the call
 * is inside its handler.
 */
export function holdOneCall(child, port) {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.once('error', reject);
    child.on('message', function onHeld(m) {
      if (m?.held !== true) return;
      child.off('message', onHeld);
      resolve(session);
    });
    const stream = session.request(headers);
    stream.on('error', () => {}); // ended when the session is destroyed, at the end
    stream.end(frame);
  });
}
