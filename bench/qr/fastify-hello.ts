/**
 * The baseline server of the QR bench's cached phase: fastify's hello-world (`GET /` ->
 * `{"hello":"world"}`, no logger), as fastify's own benchmarks run it. Started as its own process:
 * `node --import tsx bench/qr/fastify-hello.ts <port>`; listens on 127.0.0.1 only.
 */
import Fastify from 'fastify';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`usage: fastify-hello.ts <port>, got "${process.argv[2]}"`);

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port });
// A clean stop on SIGTERM, so the suite sees exit code 0 and no half-closed sockets linger.
process.once('SIGTERM', () => void app.close());
