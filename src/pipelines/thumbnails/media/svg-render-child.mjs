// The process an SVG is rasterized in (see svg-process.ts). Plain JavaScript, so it starts without
// a TypeScript loader. It takes ONE message {svg, options} (sanitized bytes and resvg options),
// answers {ok, png, width, height} or {ok: false, message}, and exits. A render that runs past its
// budget, or whose attempt was aborted, is ended by SIGKILL from the parent: native code cannot be
// interrupted any other way, and a process is the unit the OS stops at once.
import { Resvg } from '@resvg/resvg-js';

process.once('message', (message) => {
  let answer;
  try {
    const image = new Resvg(Buffer.from(message.svg), message.options).render();
    answer = { ok: true, png: image.asPng(), width: image.width, height: image.height };
  } catch (err) {
    answer = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  process.send(answer, () => process.exit(0));
});
