/**
 * A probe's numeric setting from the environment: the variable's value, or `fallback` when it is
 * unset; anything but a finite positive number is an error naming the variable.
 */
export function positiveFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${process.env[name]}`)
  return value
}
