import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ValidationError } from '../../../src/core/errors.ts';
import { DEFAULT_SVG_RENDER_BUDGET_MS } from '../../../src/pipelines/thumbnails/media/normalize.ts';
import { parseThumbnailsSettings, thumbnailsSettings } from '../../../src/pipelines/thumbnails/settings.ts';

describe('thumbnails settings', () => {
  test('svgRenderBudgetMs defaults to 30 s and takes a positive integer', () => {
    assert.equal(DEFAULT_SVG_RENDER_BUDGET_MS, 30_000);
    assert.equal(thumbnailsSettings(parseThumbnailsSettings(undefined)).svgRenderBudgetMs, 30_000);
    assert.equal(thumbnailsSettings(parseThumbnailsSettings({ svgRenderBudgetMs: 2_000 })).svgRenderBudgetMs, 2_000);
    for (const bad of [0, -5, 1.5, '30s']) {
      assert.throws(() => parseThumbnailsSettings({ svgRenderBudgetMs: bad }), (err: unknown) => err instanceof ValidationError && /svgRenderBudgetMs must be a positive integer/.test(err.message), String(bad));
    }
  });

  test('its own output parses to the same settings', () => {
    const once = parseThumbnailsSettings({ svgRenderBudgetMs: 5_000, maxPixels: 1_000 });
    assert.deepEqual(parseThumbnailsSettings(once), once);
  });
});
