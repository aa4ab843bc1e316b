#!/usr/bin/env node
// Stage "convert": a small command-line converter over sharp. Reads any image sharp reads (PNG,
// JPEG, WebP, GIF, AVIF, TIFF, SVG), applies its EXIF orientation, converts to sRGB and writes a
// metadata-free PNG to $KILN_OUTPUT_DIR/image.png. Exit 65 (permanent) for an unreadable image.
import { join } from 'node:path';
import sharp from 'sharp';

const [source] = process.argv.slice(2);
try {
  const image = sharp(source, { limitInputPixels: 100_000_000 }).rotate().toColourspace('srgb');
  const { width, height } = await image.png().toFile(join(process.env.KILN_OUTPUT_DIR, 'image.png'));
  console.log(`::output width=${width}`);
  console.log(`::output height=${height}`);
} catch (err) {
  console.error(`convert: cannot read ${source}: ${err.message}`);
  process.exit(65);
}
