// The baseline of the benchmark: a bare Fastify server with no auth, no database
// and no validation, answering with payloads computed before it starts. It runs in
// its own process, like Herald, so both are measured the same way.
//
// argv[2]: a JSON file { integrations, posts, created } holding the values Herald
// answered for the same requests in this run (so the payloads have the same size
// and shape). The handlers return those values as objects: Fastify serialises them
// on every request, as it does for any JSON route.
import fs from 'node:fs';
import Fastify from 'fastify';

const payloads = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const postsText = JSON.stringify(payloads.posts);

const app = Fastify({ logger: false });
app.get('/integrations', async () => payloads.integrations);
app.get('/posts', async () => payloads.posts);
// The same bytes as /posts, pre-serialised: the ceiling of what one process can send.
app.get('/posts-text', async (_request, reply) => reply.type('application/json; charset=utf-8').send(postsText));
// Fastify parses the JSON body (the same body Herald receives), the answer is fixed.
app.post('/posts', async (_request, reply) => reply.code(201).send(payloads.created));

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
