export declare const REPOSITORY: string;
export declare const BUNDLE: string;
export declare const BUNDLE_INPUTS: string;
export declare function staleBundleReason(): string | undefined;
