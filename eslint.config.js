// Lint rules for the whole repository (`npm run lint`, run by npm test's pretest). Formatting is Prettier's job.
import { existsSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { COMPOSITION, CORE_FLOORS, ENGINES as CORE_ENGINES, floorOf } from './src/main/core/floors.mjs';

// Adapters reach the core through the registry (core/registry: resource types, their generic operations and what
// adapters use of core/entities, core/query and core/store), the engines' facades (core/<engine>/index) and a short
// list of primitives; they run no SQL (docs/architecture.md, "Layers").
const ENGINES = [...CORE_ENGINES].sort();
const PRIMITIVES = ['errors', 'ids', 'clock', 'serialQueue', 'context'];
const CORE = String.raw`^(?:\.\./)+core`; // a relative import of src/main/core from an adapter folder
const ADAPTER_IMPORTS = [
  ...ENGINES.map((engine) => ({
    regex: `${CORE}/${engine}(?!/index$)(?:/.*)?$`,
    message: `Adapters reach core/${engine} only through its facade: import from core/${engine}/index (export what is missing there).`,
  })),
  {
    regex: `${CORE}/(?:entities|query|store)(?:/|$)`,
    message: 'Adapters reach core/entities, core/query and core/store only through core/registry (export what is missing there).',
  },
  { regex: `${CORE}/core$`, message: 'Import the Core and Ctx types from core/context.' },
  { regex: `${CORE}/validation$`, message: 'Adapters get patchFields and bodyJsonSchema from core/registry.' },
  { regex: `${CORE}/replyReuse$`, message: 'Adapters get trackReuse and isVolatile from core/ops/index.' },
  {
    regex: `${CORE}(?:/(?!(?:${[...ENGINES, ...PRIMITIVES, 'registry', 'entities', 'query', 'store', 'core', 'validation', 'replyReuse'].join('|')})(?:/|$)).*)?$`,
    message: `Adapters import only core/registry, the engines' facades (core/{${ENGINES.join(',')}}/index) and core/{${PRIMITIVES.join(',')}}.`,
  },
];

// Inside the core, imports go down the floors (src/main/core/floors.mjs, docs/architecture.md "Floors"): a module imports
// its own floor and the floors below, never a higher one (type imports included), and reaches an engine of another
// folder through its facade (<engine>/index) unless it is on the composition floor. One rule block per unit (a folder
// of src/main/core, or a file at its root); test/unit/import-cycles.test.ts checks the same table on the import graph.
const any = (names) => `(?:${names.join('|')})`;
const FLOOR_RULES = CORE_FLOORS.flatMap((floor, level) =>
  floor.units.map((unit) => {
    const root = existsSync(new URL(`./src/main/core/${unit}.ts`, import.meta.url)); // a file at the core's root, or a folder
    const up = root ? String.raw`^\./` : String.raw`^(?:\.\./)+`; // how a module of this unit names the core's root
    const patterns = CORE_FLOORS.slice(level + 1).map((higher, i) => ({
      regex: `${up}${any(higher.units)}(?:/|$)`,
      message: `core/${unit} is on floor ${level} (${floor.name}); core/{${higher.units.join(',')}} is on floor ${level + 1 + i} (${higher.name}), above it: imports go down the floors (docs/architecture.md, Floors).`,
    }));
    if (floor.name !== COMPOSITION) {
      // (engines above are refused by the patterns of the floors above)
      for (const engine of CORE_ENGINES.filter((e) => e !== unit && floorOf(e) <= level)) {
        patterns.push({
          regex: `${up}${engine}/(?!index$)`,
          message: `core/${unit} reaches core/${engine} through its facade: import from core/${engine}/index (export what is missing there).`,
        });
      }
    }
    return {
      files: [root ? `src/main/core/${unit}.ts` : `src/main/core/${unit}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    };
  }),
);

const NO_SQL = {
  selector: 'MemberExpression[property.name=/^(?:getSql|allSql|runSql|touchSql)$/]',
  message: 'No SQL outside src/main/core: call (or add) a core operation.',
};

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'resources/**', '**/*.d.ts', '**/*.d.mts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // a `let` assigned once after closures that read it were made (late initialisation) stays a `let`
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // inputs are checked for control characters with character classes on purpose
      'no-control-regex': 'off',
      // SQL is built in template literals with the store's helpers (`${store.sql.…}`): never in a plain string
      'no-template-curly-in-string': 'error',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // the store is asynchronous: a promise nobody awaits is a write nobody waits for, or an error nobody sees
  {
    files: ['src/**/*.ts', 'src/**/*.tsx', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  // adapters import the registry, the engines' facades and the primitives only (see ADAPTER_IMPORTS)
  {
    files: ['src/main/{api,console,ctrl,events,share}/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ADAPTER_IMPORTS }] },
  },
  // the built-in router asks the core through core/dataPlane/index only
  {
    files: ['src/main/router/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...ADAPTER_IMPORTS,
            {
              regex: `${CORE}/(?:(?:${ENGINES.filter((e) => e !== 'dataPlane').join('|')})/index|registry)$`,
              message: 'The router asks the core through core/dataPlane/index only (export what is missing there).',
            },
          ],
        },
      ],
    },
  },
  // the frontend and the SDK client know nothing of the core (shares reach the frontend through a ShareResolver)
  {
    files: ['src/main/{frontend,sdk}/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: `${CORE}(?:/|$)`, message: 'The frontend and the SDK client import nothing of the core; the composition root wires them.' },
          ],
        },
      ],
    },
  },
  // inside the core: down the floors, across engines through their facades (see FLOOR_RULES)
  ...FLOOR_RULES,
  { files: ['src/main/**/*.ts'], ignores: ['src/main/core/**'], rules: { 'no-restricted-syntax': ['error', NO_SQL] } },
  // tests and benches read untyped JSON replies
  { files: ['test/**', 'bench/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
