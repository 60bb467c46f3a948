// Vitest's global setup for `npm run test:valkey` (vitest.valkey.config.ts): the Redis tests
// again, against Valkey. Starts a valkey-server of its own on a reserved free port on 127.0.0.1
// (nothing kept on disk) before any test file loads, names it to the test processes through
// SPILLWAY_TEST_REDIS_PORT, with SPILLWAY_TEST_SERVER=valkey so that the private servers and
// cluster nodes the tests start are valkey-servers too, and stops it when the run ends. Needs
// valkey-server and valkey-cli: Debian's valkey-server (bookworm-backports; main from trixie).
import { spawnSync } from 'node:child_process';

export default async function setup(): Promise<() => Promise<void>> {
  // Read by the helpers when they load, here and in every test process started after this.
  process.env['SPILLWAY_TEST_SERVER'] = 'valkey';
  const { PrivateRedis, underTest } = await import('./helpers.js');
  const versions = [underTest.server, underTest.cli].map((tool) => {
    const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
    if (r.status !== 0) {
      throw new Error(
        `${tool} is not installed (Debian: ${underTest.debian}); test:valkey needs it`,
      );
    }
    return r.stdout.trim();
  });
  const valkey = await PrivateRedis.start();
  process.env['SPILLWAY_TEST_REDIS_PORT'] = String(valkey.port);
  console.log(`test:valkey: ${versions[0]}, on 127.0.0.1:${valkey.port}`);
  return () => valkey.stop();
}
