/**
 * `kiln qr "text" -o out.png [--format svg --size 512 --ecc H --margin 2 --fg #000 --bg #fff]`:
 * renders through the store (the same run, cache and publication as the HTTP API, so a repeat is
 * a cache hit), with a worker in this process, so no server needs to be running.
 */
import { writeFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { Command } from 'commander';
import { ValidationError } from '../../core/errors.ts';
import { QR_PIPELINE } from '../../pipelines/qr-code/pipeline.ts';
import { createQrService, QR_WAIT_MAX_MS } from '../../pipelines/qr-code/qr-service.ts';
import type { CliContext } from '../cli-context.ts';
import { withCommandRuntime, type GlobalOptions } from '../global-options.ts';

interface QrCommandOptions extends GlobalOptions {
  output: string;
  format?: string;
  size?: string;
  scale?: string;
  ecc?: string;
  margin?: string;
  fg?: string;
  bg?: string;
}

const OPTION_FIELDS = ['format', 'size', 'scale', 'ecc', 'margin', 'fg', 'bg'] as const;

/** The request as query-style strings (parsed strictly by the pipeline); format follows `-o`'s extension unless given. */
function requestFields(text: string, opts: QrCommandOptions): Record<string, string> {
  const fields: Record<string, string> = { content: text };
  for (const name of OPTION_FIELDS) {
    const value = opts[name];
    if (value !== undefined) fields[name] = value;
  }
  const ext = extname(opts.output).slice(1).toLowerCase();
  if (fields['format'] === undefined && (ext === 'png' || ext === 'svg')) fields['format'] = ext;
  return fields;
}

async function qr(ctx: CliContext, text: string, opts: QrCommandOptions): Promise<void> {
  const fields = requestFields(text, opts);
  await withCommandRuntime(ctx, opts, async (rt) => {
    if (!rt.kiln.pipelines.has(QR_PIPELINE)) throw new ValidationError(`pipeline ${QR_PIPELINE} is not registered`);
    const worker = rt.createWorker({ queues: rt.kiln.pipelines.get(QR_PIPELINE)?.stages.map((s) => `${QR_PIPELINE}.${s.name}`) ?? [] });
    worker.start();
    try {
      const answer = await createQrService(rt.kiln).request({ raw: fields, source: 'query', waitMs: QR_WAIT_MAX_MS });
      if (answer.kind === 'pending') throw new Error(`render of ${answer.hash} did not finish within ${QR_WAIT_MAX_MS} ms (run ${answer.run.id})`);
      const path = resolve(ctx.cwd, opts.output);
      await writeFile(path, answer.image.bytes);
      ctx.err(`kiln: wrote ${answer.image.bytes.byteLength} bytes (${answer.image.mediaType}, content hash ${answer.hash}) to ${path}`);
    } finally {
      await worker.stop(1_000);
    }
  });
}

/** Registers `kiln qr`. */
export function registerQrCommand(program: Command, ctx: CliContext): void {
  program
    .command('qr <text>')
    .description('render a QR code to a file through the store (no server needed)')
    .requiredOption('-o, --output <file>', 'where to write the image (.png or .svg picks the format)')
    .option('--format <png|svg>', 'image format (default png, or the extension of -o)')
    .option('--size <px>', 'image width and height, 64-4096 (default 512)')
    .option('--scale <px>', 'pixels per module instead of --size')
    .option('--ecc <L|M|Q|H>', 'error correction level (default M)')
    .option('--margin <modules>', 'quiet zone, 0-16 modules (default 4)')
    .option('--fg <color>', 'dark color, #rgb, #rrggbb or #rrggbbaa (default #000)')
    .option('--bg <color>', 'light color (default #fff)')
    .action((text: string, _o: QrCommandOptions, cmd: Command) => qr(ctx, text, cmd.optsWithGlobals<QrCommandOptions>()));
}
