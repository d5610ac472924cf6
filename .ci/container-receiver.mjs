// The host side of .ci/container: an HTTP receiver for Herald's webhook channel.
// POST /hook records a delivery and answers 200; GET /deliveries lists them.
// It prints its port on the first line of its output.
import http from 'node:http';

const deliveries = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/hook') {
      deliveries.push({ id: req.headers['webhook-id'], body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else if (req.method === 'GET' && req.url === '/deliveries') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(deliveries));
    } else {
      res.writeHead(404).end();
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
