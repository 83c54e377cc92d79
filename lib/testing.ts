// Placeholder until the testing kit (issue 13 item 4) is merged; the build needs the entry to exist.
export {};
