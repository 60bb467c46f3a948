// The loopback server the client benchmarks call: 200 with a 2-byte body, keep-alive, in a
// child process of its own so its CPU never counts as the client's.
import { spawn } from 'node:child_process';

const serverCode = `
  const http = require('node:http');
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

/** Starts the server; resolves with its URL and the child process (kill it when done). */
export async function startOkServer() {
  const child = spawn(process.execPath, ['-e', serverCode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('error', reject);
  });
  return { url: `http://127.0.0.1:${port}/`, child };
}
