/**
 * The CSS policy of the SVG sanitizer, for `<style>` text and `style` attributes. CSS is not
 * re-serialized from a parse, so the policy refuses, rather than repairs, whatever could spell an
 * external reference in a way a simple scan might miss:
 * - comments are removed first (so a comment placed inside the word `url` cannot hide it), and
 *   the result, with no comments left, is what the renderer gets;
 * - any backslash refuses the whole text (CSS escapes can spell `url`, `@import` in hex);
 * - any `@` refuses it (`@import`, `@font-face { src: url() }` load resources);
 * - every `url(...)` must be a same-document `#fragment`;
 * - functions that take image URLs as plain strings (`image()`, `image-set()`, `cross-fade()`,
 *   `element()`, `src()`) refuse it.
 * Refused text is dropped whole: a `<style>` element or a `style` attribute, never half of one.
 */
import { hasOnlyFragmentUrls } from './svg-references.ts';

const COMMENT = /\/\*[\s\S]*?\*\//g;
const STRING_URL_FUNCTION = /(?:image-set|image|cross-fade|element|src)\s*\(/i;

/** The CSS with comments removed when it passes the policy above, else null. */
export function sanitizeCss(css: string): string | null {
  // A comment becomes a space: in CSS a comment separates tokens, it never joins them.
  const text = css.replace(COMMENT, ' ');
  if (text.includes('/*') || /[\\@]/.test(text)) return null;
  if (STRING_URL_FUNCTION.test(text) || !hasOnlyFragmentUrls(text)) return null;
  return text;
}
