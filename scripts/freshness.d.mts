export declare function newestMtime(path: string): number;
export declare function isFresh(outputs: string[], sources: string[]): boolean;
export declare const RENDERER_OUT: string;
export declare function isRendererStale(): boolean;
