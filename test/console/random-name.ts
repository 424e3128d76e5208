// Short random suffixes, so each test's workspaces and names are its own.
export const randomSuffix = (): string => Math.random().toString(36).slice(2, 8);
