/**
 * SVG sanitizer: parse -> filter -> serialize. The input is parsed by a strict XML parser
 * (`xml-parse.ts`), filtered by allowlists, and the output is written by our own serializer with
 * canonical namespaces (SVG as the default namespace, `xlink:` and `xml:` only), every attribute
 * value and text escaped. The renderer therefore never sees the uploaded bytes, only a document
 * whose every element, attribute and reference passed the filter; parser differences between the
 * sanitizer and resvg cannot smuggle anything through, because the output has one reading.
 *
 * Kept: SVG-namespace (or un-namespaced) elements on the rendering allowlist below, unprefixed
 * attributes, `xlink:href` and `xml:space`. Removed: `<script>`, `<foreignObject>`, animation,
 * unknown and foreign-namespace elements (with their content), event-handler attributes
 * (`on*`), `src`, `xml:base` and other namespaced attributes, comments and processing
 * instructions, attribute values with a backslash (a possible CSS escape), and every reference
 * that is not a same-document `#fragment` (or, on images, a bounded raster `data:` URL; see
 * `svg-references.ts`); CSS follows `svg-css.ts`. Refused
 * (permanent `ASSET_UNREADABLE`): input over the size limit, not UTF-8, malformed, with a DOCTYPE
 * or entity declarations, nested too deep, too many nodes, or `<use>`/`url(#)` references that
 * expand past the node budget (the "use bomb") or form a cycle.
 */
import { assetFailure } from './asset-failure.ts';
import { sanitizeCss } from './svg-css.ts';
import { canonicalEmbeddedImage, hasOnlyFragmentUrls, isFragmentReference } from './svg-references.ts';
import { checkReferenceExpansion } from './svg-expansion.ts';
import { serializeSvg, SVG_NAMESPACE, XLINK_NAMESPACE } from './svg-serialize.ts';
import { parseXml, XML_NAMESPACE, XmlRejectedError, type XmlAttribute, type XmlElement, type XmlNode } from './xml-parse.ts';

/** Largest SVG accepted, in bytes. {@link INSPECT_HEAD_BYTES} is at least this, so inspect sees whole SVGs. */
export const SVG_MAX_BYTES = 4 * 1024 * 1024;

/** Limits of {@link sanitizeSvg}; every field has a default in {@link SVG_SANITIZE_DEFAULTS}. */
export interface SanitizeSvgOptions {
  /** Largest input, in bytes. */
  maxBytes?: number;
  /** Deepest element nesting. */
  maxDepth?: number;
  /** Most elements plus text nodes in the input. */
  maxNodes?: number;
  /** Most nodes after expanding `<use>` and `url(#id)` references (each use counts its target again). */
  maxExpandedNodes?: number;
  /** Most pixels of one embedded `data:` raster image (resvg decodes those in full). */
  maxEmbeddedImagePixels?: number;
}

/** Default limits of {@link sanitizeSvg}. */
export const SVG_SANITIZE_DEFAULTS: Readonly<Required<SanitizeSvgOptions>> = Object.freeze({
  maxBytes: SVG_MAX_BYTES,
  maxDepth: 128,
  maxNodes: 200_000,
  maxExpandedNodes: 1_000_000,
  maxEmbeddedImagePixels: 4096 * 4096,
});

/**
 * Elements resvg renders (or needs to render others), by local name. Everything else goes,
 * subtree included: `script`, `foreignObject`, `animate*`/`set` (a thumbnail is one still
 * frame), `metadata`, `a`'s HTML cousins, editor namespaces.
 */
const ALLOWED_ELEMENTS: ReadonlySet<string> = new Set([
  'svg', 'g', 'defs', 'symbol', 'use', 'switch', 'a', 'title', 'desc', 'style',
  'path', 'rect', 'circle', 'ellipse', 'line', 'polyline', 'polygon', 'image',
  'text', 'tspan', 'textPath',
  'linearGradient', 'radialGradient', 'stop', 'pattern', 'clipPath', 'mask', 'marker',
  'filter', 'feBlend', 'feColorMatrix', 'feComponentTransfer', 'feComposite', 'feConvolveMatrix',
  'feDiffuseLighting', 'feDisplacementMap', 'feDistantLight', 'feDropShadow', 'feFlood', 'feFuncA',
  'feFuncB', 'feFuncG', 'feFuncR', 'feGaussianBlur', 'feImage', 'feMerge', 'feMergeNode',
  'feMorphology', 'feOffset', 'fePointLight', 'feSpecularLighting', 'feSpotLight', 'feTile', 'feTurbulence',
]);

/** Elements whose `href` may also be an embedded raster `data:` URL. */
const IMAGE_ELEMENTS: ReadonlySet<string> = new Set(['image', 'feImage']);

/** Attribute names we write back: ASCII NCNames, so the serialized name has exactly one reading. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * Returns a safe re-serialization of `svg` (UTF-8) under the policy of this module, or throws a
 * permanent `ASSET_UNREADABLE` StageFailure whose `details.reason` says why it was refused.
 * Idempotent: sanitizing sanitized output returns the same bytes.
 */
export function sanitizeSvg(svg: Uint8Array, options: SanitizeSvgOptions = {}): Uint8Array {
  const limits = { ...SVG_SANITIZE_DEFAULTS, ...options };
  if (svg.byteLength > limits.maxBytes) {
    throw unreadable('too-large', `SVG has ${svg.byteLength} bytes, more than the ${limits.maxBytes} accepted`, { limitBytes: limits.maxBytes });
  }
  const root = parseSvgTree(svg, limits);
  if (!isSvgNamespace(root.ns) || root.local !== 'svg') throw unreadable('not-svg', 'the root element is not <svg>');
  const clean = filterElement(root, limits.maxEmbeddedImagePixels);
  if (clean === null) throw unreadable('not-svg', 'the root element is not <svg>');
  const expansion = checkReferenceExpansion(clean, limits.maxExpandedNodes);
  if (expansion !== 'ok') throw unreadable(expansion, `SVG references ${expansion === 'reference-cycle' ? 'form a cycle' : `expand past ${limits.maxExpandedNodes} nodes`}`);
  return new TextEncoder().encode(serializeSvg(clean));
}

function parseSvgTree(svg: Uint8Array, limits: Required<SanitizeSvgOptions>): XmlElement {
  let text: string;
  try {
    // fatal: malformed UTF-8 (or UTF-16, which is not UTF-8) is refused rather than replaced.
    text = new TextDecoder('utf-8', { fatal: true }).decode(svg);
  } catch (err) {
    throw unreadable('encoding', 'SVG is not valid UTF-8', {}, err);
  }
  try {
    return parseXml(text, { maxDepth: limits.maxDepth, maxNodes: limits.maxNodes });
  } catch (err) {
    if (err instanceof XmlRejectedError) throw unreadable(err.reason, `SVG refused: ${err.message}`, { offset: err.offset }, err);
    throw err;
  }
}

function unreadable(reason: string, message: string, details: Record<string, unknown> = {}, cause?: unknown): Error {
  return assetFailure('ASSET_UNREADABLE', message, { reason, ...details }, cause);
}

/** Un-namespaced elements are read as SVG (hand-written files often omit `xmlns`). */
function isSvgNamespace(ns: string | null): boolean {
  return ns === null || ns === SVG_NAMESPACE;
}

/** The element with its allowed attributes and children, or null when it must go (subtree included). */
function filterElement(element: XmlElement, maxEmbeddedPixels: number): XmlElement | null {
  if (!isSvgNamespace(element.ns) || !ALLOWED_ELEMENTS.has(element.local)) return null;
  const attributes = element.attributes.flatMap((a) => filterAttribute(element.local, a, maxEmbeddedPixels));
  if (element.local === 'style') {
    const css = sanitizeCss(element.children.map((c) => (c.kind === 'text' ? c.text : '')).join(''));
    if (css === null) return null;
    return { kind: 'element', ns: SVG_NAMESPACE, local: 'style', attributes, children: [{ kind: 'text', text: css }] };
  }
  const children: XmlNode[] = [];
  for (const child of element.children) {
    const kept = child.kind === 'text' ? child : filterElement(child, maxEmbeddedPixels);
    if (kept !== null) children.push(kept);
  }
  return { kind: 'element', ns: SVG_NAMESPACE, local: element.local, attributes, children };
}

/** The attribute as it may be written back (zero or one of them). */
function filterAttribute(elementName: string, attribute: XmlAttribute, maxEmbeddedPixels: number): XmlAttribute[] {
  const { ns, local, value } = attribute;
  if (ns === XLINK_NAMESPACE && local === 'href') return filterHref(elementName, attribute, maxEmbeddedPixels);
  if (ns === XML_NAMESPACE && local === 'space') return [attribute];
  // Any other namespaced attribute (xml:base, xlink:role, editor data) is dropped.
  if (ns !== null || !PLAIN_NAME.test(local) || /^on/i.test(local) || local === 'src') return [];
  if (local === 'href') return filterHref(elementName, attribute, maxEmbeddedPixels);
  if (local === 'style') {
    const css = sanitizeCss(value);
    return css === null ? [] : [{ ns: null, local, value: css }];
  }
  // Presentation attributes reference resources with url(): fill, clip-path, mask, filter, marker-*,
  // cursor. A backslash could be a CSS escape spelling one, so such values go too.
  if (value.includes('\\')) return [];
  return /url\s*\(/i.test(value) && !hasOnlyFragmentUrls(value) ? [] : [attribute];
}

/** `href`/`xlink:href`: a same-document fragment, or on images a bounded raster `data:` URL. */
function filterHref(elementName: string, attribute: XmlAttribute, maxEmbeddedPixels: number): XmlAttribute[] {
  if (isFragmentReference(attribute.value)) return [{ ...attribute, value: attribute.value.trim() }];
  if (!IMAGE_ELEMENTS.has(elementName)) return [];
  const embedded = canonicalEmbeddedImage(attribute.value, maxEmbeddedPixels);
  return embedded === null ? [] : [{ ...attribute, value: embedded }];
}
