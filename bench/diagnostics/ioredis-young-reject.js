// An experiment behind S7's latency on Node 24 (docs/redis.md, "Node 24 and 25 with ioredis:
// the first seconds"): ioredis 6.0's `Command#initPromise` with one change, the change to
// propose to ioredis. ioredis assigns a function literal straight to a property
// (`this.reject = (err) => {…}`), which V8's parser marks to be allocated in the old
// generation; the interpreter, Sparkplug and Maglev honour that (TurboFan does not), and Node
// 24 runs ioredis's path at Maglev for a process's first seconds under load. Each command's
// `reject` then lands in the old generation and keeps the command, its arguments and its reply
// alive through every scavenge until a full collection: the store's process keeps ~7 % of all
// it allocates through each scavenge, and the pauses reach the p99. Here the same closure is
// made as a local and then assigned, so it is allocated young: 0.2–0.7 % survives.
// ./executor-closures.js shows the V8 behaviour in plain JS.
//
// Not something Spillway does or recommends as it stands: it replaces a method ioredis does not
// document, and only for commands without a callback or a friendly error stack (what the store
// sends); the fix belongs in ioredis. Load it before ioredis is used, e.g. for S7 on Node 24:
//   NODE_OPTIONS='--import ./bench/diagnostics/ioredis-young-reject.js' \
//     npx -y node@24 bench/redis.js
// bench/diagnostics/redis-scavenges.js measures it as the client `ioredis-young-reject`.
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
      `ioredis-young-reject: this ioredis's Command has no ${name}; the experiment was made ` +
        'on ioredis 6.0 and does not apply to this version',
    );
  }
}

proto.initPromise = function initPromise() {
  if (this.callback !== undefined || this.errorStack !== undefined) {
    original.call(this);
    return;
  }
  // ioredis 6.0's own initPromise for such a command, but for the one line marked.
  this.isResolved = false;
  this.isSettled = false;
  this.promise = new Promise((resolve, reject) => {
    if (!this.transformed) {
      this.transformed = true;
      const transform = Command._transformer.argument[this.name];
      if (transform !== undefined) this.args = transform(this.args);
      this.stringifyArguments();
    }
    this.resolve = this._convertValue(resolve);
    const rejecter = (error) => {
      this._clearTimers();
      this.isSettled = true;
      reject(error);
    };
    // The change: through a local, the closure is allocated young.
    this.reject = rejecter;
  });
};
