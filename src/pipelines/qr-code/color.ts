/**
 * QR colors: `#rgb`, `#rrggbb` or `#rrggbbaa` in any case, normalized to lowercase `#rrggbbaa`
 * so that every spelling of one color canonicalizes (and hashes) the same.
 */

/** A color split into 0..255 channels; `alpha` 255 is opaque. */
export interface Rgba {
  red: number;
  green: number;
  blue: number;
  alpha: number;
}

const COLOR_PATTERN = /^#(?:[0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

/** `#rrggbbaa` in lowercase, or `undefined` when `value` is not one of the accepted spellings. */
export function normalizeColor(value: string): string | undefined {
  if (!COLOR_PATTERN.test(value)) return undefined;
  const hex = value.slice(1).toLowerCase();
  if (hex.length === 3) return `#${[...hex].map((digit) => digit + digit).join('')}ff`;
  return hex.length === 6 ? `#${hex}ff` : `#${hex}`;
}

/** The channels of a normalized `#rrggbbaa` color. */
export function rgbaOf(normalized: string): Rgba {
  const channel = (index: number): number => Number.parseInt(normalized.slice(1 + 2 * index, 3 + 2 * index), 16);
  return { red: channel(0), green: channel(1), blue: channel(2), alpha: channel(3) };
}
