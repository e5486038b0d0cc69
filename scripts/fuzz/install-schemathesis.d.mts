// The types of install-schemathesis.mjs, for the tests that import it.
export declare const schemathesisSettings: string
export declare function installSchemathesis (options?: { onInstall?: (folder: string) => void }): Promise<string>
