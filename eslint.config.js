// ESLint flat config. Besides typescript-eslint's recommended rules it enforces the module
// boundaries of docs/architecture.md: which folder may import which, which drivers each may touch, no cycles.
import { readdirSync } from 'node:fs';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const root = import.meta.dirname;

/** Store drivers and server frameworks: only stores (drivers), http (fastify) and cli may hold them. */
const DRIVERS = ['pg', 'pg/*', 'better-sqlite3', 'ioredis', 'bullmq', 'fastify', 'fastify/*', '@fastify/*'];
/** I/O modules core must not touch (time and ids are injected; files go through ArtifactStore). */
const NODE_IO = ['fs', 'fs/*', 'node:fs', 'node:fs/*', 'net', 'node:net', 'node:http', 'node:https', 'node:child_process'];

/** `no-restricted-imports` for package names (folders are checked by `import-x/no-restricted-paths`). */
function bannedPackages(group, message) {
  return ['error', { patterns: [{ group, message }] }];
}

/** Code every store may share (pure TypeScript over core, no driver); itself a folder of src/stores. */
const SHARED_STORE_CODE = 'shared';

/**
 * One zone per store folder: a store imports core, the shared store code and itself, never
 * another store. The shared folder gets a zone too, so it imports core and itself only.
 */
const storeZones = readdirSync(new URL('./src/stores', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => ({
    target: `./src/stores/${d.name}`,
    from: './src',
    // A Set: for the shared folder itself the last two are one path, and the rule rejects duplicates.
    except: [...new Set(['./core', `./stores/${SHARED_STORE_CODE}`, `./stores/${d.name}`])],
    message: 'A store imports only src/core, src/stores/shared and its own folder; stores never import each other (docs/architecture.md).',
  }));

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', '.tmp/**', 'coverage/**', 'kiln-data/**', 'bench/results/**'],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    plugins: { 'import-x': importX },
    settings: {
      // import-x parses a dependency only if its extension is listed; no-cycle needs .ts parsed.
      'import-x/extensions': ['.ts', '.mts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.mts', '.js', '.mjs', '.json'] })],
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: root,
          zones: [
            {
              target: './src/core',
              from: './src',
              except: ['./core'],
              message: 'src/core is the pure domain: it imports nothing from other src folders (docs/architecture.md, boundary 1).',
            },
            {
              target: './src/engine',
              from: './src',
              except: ['./core', './engine'],
              message: 'src/engine orchestrates over the ports in src/core only: no stores, http, cli or drivers.',
            },
            ...storeZones,
            {
              target: './src/http',
              from: ['./src/stores', './src/cli'],
              message: 'src/http talks to the engine, never to a store directly (and never to the CLI).',
            },
            {
              target: './src/commands',
              from: './src',
              except: ['./core', './commands'],
              message: 'src/commands (command stages: kiln.yaml pipelines that run commands) builds pipeline definitions on src/core only; config and cli use it, never the reverse.',
            },
            {
              target: './src/pipelines',
              from: './src',
              except: ['./index.ts', './pipelines'],
              message: 'Pipelines are built like a user would build them: only on what src/index.ts exports.',
            },
            {
              target: ['./src/config', './src/observe', './src/artifacts'],
              from: ['./src/http', './src/cli', './src/stores'],
              message: 'Imports point one way: cli, http -> engine -> core <- stores.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': bannedPackages([...NODE_IO, ...DRIVERS, 'pino', 'prom-client'], 'src/core does no I/O and holds no driver (docs/architecture.md, boundary 1).'),
    },
  },
  {
    files: ['src/engine/**'],
    rules: {
      'no-restricted-imports': bannedPackages(DRIVERS, 'src/engine works over the Store port; drivers belong to src/stores.'),
    },
  },
  {
    files: ['src/http/**'],
    rules: {
      'no-restricted-imports': bannedPackages(['pg', 'pg/*', 'better-sqlite3', 'ioredis', 'bullmq'], 'src/http reaches the store through the engine only.'),
    },
  },
  {
    files: ['src/commands/**'],
    rules: {
      'no-restricted-imports': bannedPackages(DRIVERS, 'src/commands runs commands over the ports in src/core; drivers belong to src/stores, HTTP to src/http.'),
    },
  },
  {
    files: ['src/stores/**', 'src/pipelines/**', 'src/config/**', 'src/observe/**', 'src/artifacts/**'],
    rules: {
      'no-restricted-imports': bannedPackages(['fastify', 'fastify/*', '@fastify/*'], 'Only src/http serves HTTP.'),
    },
  },
  {
    files: [`src/stores/${SHARED_STORE_CODE}/**`],
    rules: {
      'no-restricted-imports': bannedPackages(DRIVERS, 'src/stores/shared is driver-free: each store keeps its own driver.'),
    },
  },
);
