// The S3-compatible server of the tests, as its own process (test/support/s3-server.ts starts it):
// s3rver on 127.0.0.1:<port> (0: any free port) keeping its objects under <dir>. Prints
// `{"port":N}` once it listens; SIGTERM closes it.
import S3rver from 's3rver';

const [port, directory] = process.argv.slice(2);
const server = new S3rver({ port: Number(port), address: '127.0.0.1', silent: true, directory });
const { port: listening } = await server.run();
process.stdout.write(`${JSON.stringify({ port: listening })}\n`);
process.once('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
