/** The texts of InMemoryLeaseStore. */
export const memoryMessages = {
  optionNotBoolean: (option: string, value: unknown) =>
    `InMemoryLeaseStore: ${option} must be true or false (got ${String(value)})`,
} as const;
