/** The texts of the conformance suite's own refusals (invalid options). */
export const conformanceMessages = {
  invalidOption: (option: string, value: unknown, allowed: string) =>
    `leaseStoreConformance: ${option} must be ${allowed} (got ${typeof value === 'function' ? 'a function' : JSON.stringify(value)})`,
  noFixture: (option: string) => `needs the ${option} fixture, which the options do not give`,
  noCapability: (capability: string) => `the store does not declare ${capability}`,
};
