import pkg from '../../package.json';

export const WEFT_VERSION = `v${pkg.version}`;
/** Set at build time by electron-vite's define; under tsx it is the process start. */
export const BUILD_DATE = new Date().toISOString().replace('T', ' ').slice(0, 19);
export const REVISION = 'weft';
