/** Types of compiled-entry.mjs (plain JavaScript so that .mjs entry points can use it without tsx). */
export declare function compiledEntry(entry: string, log?: (line: string) => void): Promise<string | undefined>;
export declare function nodeArgsFor(entry: string, args?: readonly string[], log?: (line: string) => void): Promise<string[]>;
