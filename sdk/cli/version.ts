// The CLI's version, sent at enrollment and shown by --version and doctor (kept equal to the
// package's version by a test).
export const CLI_VERSION = '0.1.0';
