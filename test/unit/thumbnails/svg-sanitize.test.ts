import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import sharp from 'sharp';
import { StageFailure } from '../../../src/index.ts';
import { sanitizeSvg, SVG_SANITIZE_DEFAULTS } from '../../../src/pipelines/thumbnails/media/svg-sanitize.ts';
import { parseXml, type XmlElement } from '../../../src/pipelines/thumbnails/media/xml-parse.ts';
import { hostileSvg, pngBombHeader } from '../../support/asset-fixtures.ts';

const SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">';

function clean(svg: string): string {
  return Buffer.from(sanitizeSvg(Buffer.from(svg))).toString('utf8');
}

function wrap(body: string): string {
  return `${SVG_OPEN}${body}</svg>`;
}

function refusedAs(svg: string | Uint8Array, reason: string, options = {}): void {
  assert.throws(
    () => sanitizeSvg(typeof svg === 'string' ? Buffer.from(svg) : svg, options),
    (err: unknown) => err instanceof StageFailure && err.code === 'ASSET_UNREADABLE' && err.errorClass === 'permanent' && err.details?.['reason'] === reason,
    reason,
  );
}

async function dataUrl(bytes: Uint8Array, mediaType: string): Promise<string> {
  return `data:${mediaType};base64,${Buffer.from(bytes).toString('base64')}`;
}

/** Every element and attribute of a sanitized document, for invariant checks. */
function walk(element: XmlElement, visit: (element: XmlElement) => void): void {
  visit(element);
  for (const child of element.children) if (child.kind === 'element') walk(child, visit);
}

/** The sanitizer's promises, checked on its output. */
function assertSafe(output: string): void {
  const root = parseXml(output, { maxDepth: 256, maxNodes: 1_000_000 });
  walk(root, (element) => {
    assert.equal(element.ns, 'http://www.w3.org/2000/svg');
    assert.ok(!['script', 'foreignObject'].includes(element.local), element.local);
    for (const { local, value } of element.attributes) {
      assert.ok(!/^on/i.test(local), `handler ${local}`);
      if (local === 'href') assert.match(value, /^(#[^\s]+|data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+)$/, `href ${value}`);
      for (const m of value.matchAll(/url\s*\(\s*['"]?([^'")]*)/gi)) assert.match(m[1] ?? '', /^#/, `url in ${local}`);
    }
    if (element.local === 'style') {
      const css = element.children.map((c) => (c.kind === 'text' ? c.text : '')).join('');
      assert.ok(!/[@\\]|\/\*/.test(css), css);
    }
  });
}

describe('sanitizeSvg removes', () => {
  const targets = { remoteUrl: 'http://127.0.0.1:9/x', localPath: '/var/secret/secret.png' };

  test('scripts, handlers, foreignObject and every external reference of the hostile fixture', () => {
    const output = clean(hostileSvg(targets).toString());
    assertSafe(output);
    for (const needle of ['script', 'onload', 'onclick', 'foreignObject', '127.0.0.1', 'secret', 'file:', '@import', 'xml-stylesheet', 'alert']) {
      assert.ok(!output.includes(needle), `${needle} is gone: ${output}`);
    }
    assert.match(output, /<rect class="bg" x="0" y="0" width="20" height="20" fill="#0000ff"\/>/, 'the safe content stays');
  });

  test('namespace tricks: prefixed script, rebound xlink prefix, foreign namespaces', () => {
    const output = clean(
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:s="http://www.w3.org/2000/svg" xmlns:l="http://www.w3.org/1999/xlink" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:i="http://www.inkscape.org/namespaces/inkscape">` +
        `<s:script>alert(1)</s:script><h:script>alert(2)</h:script><image l:href="/etc/passwd" width="1" height="1"/>` +
        `<s:rect i:label="x" width="1" height="1" l:href="#ok"/><i:path d="M0 0"/></svg>`,
    );
    assertSafe(output);
    assert.ok(!output.includes('alert') && !output.includes('/etc/passwd') && !output.includes('inkscape'), output);
    assert.match(output, /<rect width="1" height="1" xlink:href="#ok"\/>/);
  });

  test('non-fragment url() in presentation attributes and style attributes', () => {
    const output = clean(
      wrap(
        `<rect id="a" fill="url(http://x/p.svg#p)" stroke="url(#g) red" filter="url('file:///f')" clip-path="url( /etc/c )" mask="URL(m.svg)" style="fill: url(http://x)"/>` +
          `<rect id="b" style="fill: url(#g); stroke: blue"/><rect id="c" fill="\\75 rl(http://x)" stroke="red"/>`,
      ),
    );
    assertSafe(output);
    assert.match(output, /<rect id="c" stroke="red"\/>/, 'a CSS escape that could spell url( is dropped');
    assert.match(output, /<rect id="a" stroke="url\(#g\) red"\/>/);
    assert.match(output, /<rect id="b" style="fill: url\(#g\); stroke: blue"\/>/);
  });

  test('style sheets that import, escape, hide url() in comments or use image functions', () => {
    for (const css of ['@import "x.css";', '.a{fill:\\75 rl(http://x)}', '.a{background:image-set("x.png" 1x)}', '@font-face{src:url(f.woff)}', '.a{fill:url(x.svg#g)}', '.a{fill:url(#g', '/* open']) {
      const output = clean(wrap(`<style>${css}</style><rect class="a"/>`));
      assert.ok(!output.includes('<style'), `${css} -> ${output}`);
    }
    const kept = clean(wrap('<style>.a { fill: url(#g) } /* note */ .b > .c { stroke: red }</style>'));
    assert.match(kept, /<style>\.a \{ fill: url\(#g\) \}   \.b &gt; \.c \{ stroke: red \}<\/style>/);
    // A comment inside the word "url" leaves two harmless tokens, and no comment, in the output.
    const split = clean(wrap('<style>.a{fill:ur/**/l(http://x)}</style>'));
    assertSafe(split);
    assert.ok(!split.includes('/*'));
  });

  test('href to anything but a fragment, and data: on non-image elements', () => {
    const output = clean(
      wrap(
        `<use href="other.svg#a"/><use xlink:href="#a"/><a href="javascript:alert(1)"><rect/></a><a href="https://x"><rect/></a>` +
          `<use href="data:image/png;base64,iVBORw0KGgo="/><feImage href="../x.png"/><image src="/etc/x"/>`,
      ),
    );
    assertSafe(output);
    assert.ok(!/other\.svg|javascript|https|data:|\.\.\/|src=/.test(output), output);
    assert.match(output, /<use xlink:href="#a"\/>/);
  });
});

describe('sanitizeSvg keeps embedded rasters only when they are what they claim and small', () => {
  test('a PNG data URL is kept, in canonical form with the sniffed type', async () => {
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#00ff00' } }).png().toBuffer();
    const jpeg = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#00ff00' } }).jpeg().toBuffer();
    const wrapped = `data:image/png;base64,${png.toString('base64').replace(/(.{20})/g, '$1\n')}`;
    const output = clean(wrap(`<image href="${wrapped}"/><image xlink:href="${await dataUrl(jpeg, 'image/png')}"/>`));
    assert.ok(output.includes(`href="${await dataUrl(png, 'image/png')}"`), 'line breaks removed');
    assert.ok(output.includes(`xlink:href="${await dataUrl(jpeg, 'image/jpeg')}"`), 'the bytes decide the type');
  });

  test('SVG, HTML, non-base64 and decompression-bomb data URLs are removed', async () => {
    const bomb = await dataUrl(pngBombHeader(), 'image/png');
    const cases = [
      await dataUrl(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="/etc/x"/></svg>'), 'image/svg+xml'),
      await dataUrl(Buffer.from('<html></html>'), 'text/html'),
      await dataUrl(Buffer.from('not a png'), 'image/png'),
      'data:image/png,%89PNG',
      bomb,
    ];
    for (const href of cases) {
      const output = clean(wrap(`<image href="${href}"/>`));
      assert.ok(!output.includes('data:'), href.slice(0, 40));
    }
  });
});

describe('sanitizeSvg refuses', () => {
  test('DOCTYPE and entity declarations (XXE, billion laughs)', () => {
    refusedAs('<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&xxe;</svg>', 'doctype');
    refusedAs('<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg/>', 'doctype');
  });

  test('documents that do not parse, are not UTF-8 or are not SVG', () => {
    refusedAs('<svg><g></svg>', 'syntax');
    refusedAs(Buffer.from('\ufeff<svg/>', 'utf16le'), 'encoding');
    refusedAs('<html xmlns="http://www.w3.org/1999/xhtml"/>', 'not-svg');
    refusedAs('<svg xmlns="urn:other"/>', 'not-svg');
  });

  test('input over the size limit', () => {
    const big = wrap(`<desc>${'x'.repeat(SVG_SANITIZE_DEFAULTS.maxBytes)}</desc>`);
    refusedAs(big, 'too-large');
    refusedAs(wrap('<desc>abc</desc>'), 'too-large', { maxBytes: 50 });
  });

  test('a use bomb and a reference cycle', () => {
    let body = '<rect id="l0" width="1" height="1"/>';
    for (let level = 1; level <= 8; level++) {
      body += `<g id="l${level}">${`<use href="#l${level - 1}"/>`.repeat(10)}</g>`;
    }
    refusedAs(wrap(`<defs>${body}</defs><use href="#l8"/>`), 'too-complex');
    refusedAs(wrap('<g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g>'), 'reference-cycle');
    refusedAs(wrap(`<defs>${body}</defs>`), 'too-complex', { maxExpandedNodes: 1000 });
  });
});

describe('sanitizeSvg output', () => {
  test('is idempotent and canonical', () => {
    const once = sanitizeSvg(hostileSvg({ remoteUrl: 'http://127.0.0.1:9', localPath: '/tmp/x.png' }));
    assert.deepEqual(Buffer.from(sanitizeSvg(once)), Buffer.from(once));
    const text = clean(`<svg xmlns="http://www.w3.org/2000/svg" a="1&#9;2&#10;3 &quot;q&quot; &lt;"><text>a &lt; b &amp; c</text></svg>`);
    assert.ok(text.includes('a="1&#9;2&#10;3 &quot;q&quot; &lt;"'), text);
    assert.ok(text.includes('<text>a &lt; b &amp; c</text>'), text);
  });

  test('an SVG without xmlns is read as SVG and gets the namespace', () => {
    assert.match(clean('<svg width="5" height="5"><rect width="5" height="5"/></svg>'), /^<\?xml[^>]*>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  test('property: whatever goes into href, url() and style, only fragments and raster data come out', () => {
    const dangerous = fc.constantFrom(
      '#ok', ' #ok ', 'http://x', '//x', '/etc/passwd', '../a', 'file:///x', 'FILE:x', 'data:image/svg+xml,<svg/>', 'javascript:x', '#a#b', '# x',
      'url(#g)', 'url(http://x)', "url('#g')", 'url("/x")', 'URL ( /x )', '\\75rl(/x)', '@import "x"', '/*', '*/', '&amp;', '&#35;x', ';', ')', '(', '"', "'",
    );
    const value = fc.array(dangerous, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
    const escape = (s: string): string => s.replace(/&(?!amp;|#35;)/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    fc.assert(
      fc.property(value, value, value, (href, fill, style) => {
        const svg = wrap(`<image href="${escape(href)}" fill="${escape(fill)}" style="${escape(style)}"/><use xlink:href="${escape(href)}"/><style>${escape(style)}</style>`);
        assertSafe(clean(svg));
      }),
      { numRuns: 300 },
    );
  });
});
