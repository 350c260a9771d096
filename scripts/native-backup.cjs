// electron-builder's npmRebuild rebuilds native modules for Electron inside the project's own node_modules, which
// would leave npm start and npm test with binaries Node cannot load. These hooks keep a copy of Node's builds
// before that rebuild and put them back after packaging; npm start and npm test restore them too if packaging
// was interrupted (scripts/prepare.mjs).
const { cpSync, existsSync, mkdirSync, rmSync } = require('node:fs');
const { dirname, join } = require('node:path');

const ROOT = join(__dirname, '..');
/** The V8-ABI binaries that differ between Node and Electron (argon2 uses Node-API: one binary for both). */
const NODE_ABI_FILES = ['better-sqlite3/build/Release/better_sqlite3.node'];
const backupDir = (root) => join(root, 'out', 'node-abi-backup');

function saveNodeBuilds(root = ROOT) {
  if (existsSync(backupDir(root))) return false; // an earlier backup still holds Node's builds
  for (const file of NODE_ABI_FILES) {
    const from = join(root, 'node_modules', file);
    if (!existsSync(from)) continue;
    mkdirSync(dirname(join(backupDir(root), file)), { recursive: true });
    cpSync(from, join(backupDir(root), file));
  }
  return true;
}

function restoreNodeBuilds(root = ROOT) {
  if (!existsSync(backupDir(root))) return false;
  for (const file of NODE_ABI_FILES) {
    const saved = join(backupDir(root), file);
    if (existsSync(saved)) cpSync(saved, join(root, 'node_modules', file));
  }
  rmSync(backupDir(root), { recursive: true, force: true });
  return true;
}

module.exports = {
  NODE_ABI_FILES,
  saveNodeBuilds,
  restoreNodeBuilds,
  /** electron-builder: before it rebuilds dependencies for Electron (true = go on and rebuild) */
  beforeBuild: async () => {
    saveNodeBuilds();
    return true;
  },
  /** electron-builder: after every artifact is built */
  afterAllArtifactBuild: async () => {
    restoreNodeBuilds();
    return [];
  },
};
