#!/usr/bin/env node
// `npm run test:valkey`: the Redis tests (test/redis, the cluster ones included) against Valkey
// instead of Redis. Starts a valkey-server of its own on a free port on 127.0.0.1 (nothing kept
// on disk), runs Vitest on test/redis with SPILLWAY_TEST_SERVER=valkey and
// SPILLWAY_TEST_REDIS_PORT naming it, so the private servers and cluster nodes the tests start
// are valkey-servers too, and stops it, on Ctrl-C as well. Extra arguments go to Vitest
// (`npm run test:valkey -- test/redis/conformance.test.ts`). Needs valkey-server and valkey-cli:
// Debian's valkey-server package (bookworm-backports; main from trixie on).
import { spawn, spawnSync } from 'node:child_process';
import { createServer, Socket } from 'node:net';

const root = new URL('..', import.meta.url).pathname;

for (const tool of ['valkey-server', 'valkey-cli']) {
  if (spawnSync(tool, ['--version']).status !== 0) {
    console.error(
      `test:valkey: ${tool} is not installed. On Debian: apt-get install valkey-server ` +
        '(on bookworm from bookworm-backports: apt-get install -t bookworm-backports valkey-server).',
    );
    process.exit(1);
  }
}

/** A port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** True when the server on `port` answers PING within 200 ms. */
function answers(port) {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(200, () => done(false));
    s.once('error', () => done(false));
    s.connect(port, '127.0.0.1', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

const port = await freePort();
const valkey = spawn(
  'valkey-server',
  ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const stopValkey = () => {
  if (valkey.exitCode === null && valkey.signalCode === null) valkey.kill('SIGKILL');
};
process.on('exit', stopValkey);

let up = false;
for (let i = 0; i < 100 && !up; i++) {
  if (valkey.exitCode !== null) break;
  up = await answers(port);
  if (!up) await new Promise((r) => setTimeout(r, 50));
}
if (!up) {
  console.error(`test:valkey: valkey-server did not answer on 127.0.0.1:${port} within 5 s`);
  process.exit(1);
}
const version = spawnSync('valkey-server', ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`test:valkey: ${version}, on 127.0.0.1:${port}`);

const vitest = spawn(
  process.execPath,
  [
    `${root}node_modules/vitest/vitest.mjs`,
    'run',
    ...(process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['test/redis']),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, SPILLWAY_TEST_SERVER: 'valkey', SPILLWAY_TEST_REDIS_PORT: String(port) },
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    vitest.kill(signal);
  });
}
vitest.on('exit', (code) => {
  stopValkey();
  process.exit(code ?? 1); // no code: ended by a signal, so not green
});
