// An experiment behind S7's latency on Node 24 (docs/redis.md, "Node 24 and 25 with ioredis"):
// ioredis's Command with its promise's settling functions taken out of the executor, and the
// closures ioredis wraps them in made after it. ioredis makes those closures inside the
// executor; on Node 24 and 25 the store's process sending a few commands a tick then keeps ~6–8 %
// of all it allocates alive through every scavenge, and the pauses that copy it reach the p99 —
// making the closures there is enough, even ones thrown away at once. Made outside, the same
// process keeps 0.4–0.7 %. ./executor-closures.js shows the V8 behaviour in plain JS.
//
// Not something Spillway does or recommends as it stands: it replaces a method ioredis does not
// document, and only for commands without a callback or a friendly error stack (what the store
// sends); the fix belongs in ioredis. Load it before ioredis is used, e.g. for S7 on Node 24:
//   NODE_OPTIONS='--import ./bench/diagnostics/ioredis-executor-free.js' \
//     npx -y node@24 bench/redis.js
// bench/diagnostics/redis-scavenges.js measures it as the client `ioredis-executor-free`.
import { Command } from 'ioredis';

const proto = Command.prototype;
const original = proto.initPromise;
for (const [name, value] of [
  ['initPromise', original],
  ['_convertValue', proto._convertValue],
  ['_clearTimers', proto._clearTimers],
  ['stringifyArguments', proto.stringifyArguments],
  ['_transformer.argument', Command._transformer?.argument],
]) {
  if (value === undefined) {
    throw new Error(
      `ioredis-executor-free: this ioredis's Command has no ${name}; the experiment was made ` +
        'on ioredis 6.0 and does not apply to this version',
    );
  }
}

/** ioredis's reject for `command`: stops its timers and marks it settled. */
function rejecterOf(command, reject) {
  return (error) => {
    command._clearTimers();
    command.isSettled = true;
    reject(error);
  };
}

proto.initPromise = function initPromise() {
  if (this.callback !== undefined || this.errorStack !== undefined) {
    original.call(this);
    return;
  }
  this.isResolved = false;
  this.isSettled = false;
  // The executor only hands its arguments out: it needs no context of its own.
  const settle = { resolve: undefined, reject: undefined };
  this.promise = new Promise((resolve, reject) => {
    settle.resolve = resolve;
    settle.reject = reject;
  });
  if (!this.transformed) {
    this.transformed = true;
    const transform = Command._transformer.argument[this.name];
    if (transform !== undefined) this.args = transform(this.args);
    this.stringifyArguments();
  }
  this.resolve = this._convertValue(settle.resolve);
  this.reject = rejecterOf(this, settle.reject);
};
