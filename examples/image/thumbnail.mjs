#!/usr/bin/env node
// Stage "thumbnail": scales the converted PNG to fit a square of the given size (never enlarging)
// and writes $KILN_OUTPUT_DIR/thumb.png, reporting progress as it goes.
import { join } from 'node:path';
import sharp from 'sharp';

const [source, sizeText = '128'] = process.argv.slice(2);
const size = Number(sizeText);
if (!Number.isInteger(size) || size < 1 || size > 4096) {
  console.error(`thumbnail: size must be an integer from 1 to 4096, got ${sizeText}`);
  process.exit(64);
}
console.log('::progress 10 resizing');
const { width, height } = await sharp(source).resize(size, size, { fit: 'inside', withoutEnlargement: true }).png().toFile(join(process.env.KILN_OUTPUT_DIR, 'thumb.png'));
console.log('::progress 100 written');
console.log(`::output size=${width}x${height}`);
