// The reference of the upload benchmark: a bare Node HTTP server that writes each
// request body to a file, with no multipart parsing, checks or database. It runs in
// its own process, like Herald, and receives the same bytes from the same client.
// POST /discard reads the body and drops it: what the loopback HTTP transport alone
// carries on this machine, the ceiling of any Node server's upload.
// argv[2]: the folder to write into. Prints its port.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

let n = 0;
const server = http.createServer(async (request, response) => {
  if (request.url === '/discard') {
    request.resume();
    request.on('end', () => response.end('{}'));
    return;
  }
  const file = path.join(process.argv[2], `baseline-${n++}`);
  await pipeline(request, fs.createWriteStream(file, { highWaterMark: 1024 * 1024 }));
  fs.rmSync(file);
  response.end('{}');
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
