// The console needs no Node.js API: the preload only tells the page it runs in the desktop app. Sandboxed and
// context-isolated, it reaches the page through contextBridge alone.
import { contextBridge } from 'electron';

contextBridge.exposeInMainWorld('weftDesktop', Object.freeze({ platform: process.platform, sandboxed: process.sandboxed === true }));
