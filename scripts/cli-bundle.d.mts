export declare const CLI_BUNDLE: string;
export declare const SHIM_BUNDLE: string;
export declare function isCliBundleFresh(): boolean;
export declare function buildCliBundle(): Promise<void>;
