/**
 * SVG detection from the first bytes, since file-type does not detect SVG (it reports an XML
 * declaration as `application/xml` at most). An SVG is text whose root element is `<svg>`
 * (optionally prefixed, `<x:svg>`), after an optional UTF-8 byte-order mark, XML declaration,
 * comments, processing instructions, a DOCTYPE (with or without internal subset) and whitespace.
 * This only recognizes the format; whether the document is acceptable is the sanitizer's call.
 */

const ROOT_SVG = /^<(?:[A-Za-z_][\w.-]*:)?svg[\s/>]/;
const DOCTYPE = /^<!DOCTYPE[^[>]*(?:\[[\s\S]*?\])?\s*>/i;
/** The prologue of real SVGs is short; scanning more of a large file would only slow non-SVGs. */
const PROLOGUE_SCAN_CHARS = 64 * 1024;

/** True when `head` (the first bytes of a file) starts an SVG document. */
export function looksLikeSvg(head: Uint8Array): boolean {
  const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  // latin1 maps bytes 1:1, so markup positions stay byte positions and invalid UTF-8 cannot throw.
  let text = Buffer.from(head.buffer, head.byteOffset + bom, Math.min(head.byteLength - bom, PROLOGUE_SCAN_CHARS)).toString('latin1');
  for (;;) {
    text = text.trimStart();
    if (ROOT_SVG.test(text)) return true;
    const skipped = skipPrologItem(text);
    if (skipped === undefined) return false;
    text = text.slice(skipped);
  }
}

/** Length of the XML declaration, comment, PI or DOCTYPE at the start of `text`, if one is there. */
function skipPrologItem(text: string): number | undefined {
  const end = (token: string, from: number): number | undefined => {
    const at = text.indexOf(token, from);
    return at < 0 ? undefined : at + token.length;
  };
  if (text.startsWith('<?')) return end('?>', 2);
  if (text.startsWith('<!--')) return end('-->', 4);
  if (/^<!DOCTYPE/i.test(text)) return DOCTYPE.exec(text)?.[0].length;
  return undefined;
}
