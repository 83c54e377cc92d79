/**
 * A switch list from the environment (`SIM_CHECKS=lag,overlap`): unset or `all` means every name.
 * An unknown name is an error, so a typo cannot silently switch a check off.
 */
export function switchesFromEnv<T extends string>(spec: string | undefined, all: readonly T[]): Set<T> {
  if (!spec || spec === 'all') return new Set(all);
  const names = spec.split(',').map((s) => s.trim());
  const unknown = names.filter((name) => !all.includes(name as T));
  if (unknown.length > 0) throw new Error(`unknown switch(es) ${unknown.join(', ')}; known: ${all.join(', ')}`);
  return new Set(names as T[]);
}
