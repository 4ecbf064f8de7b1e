/**
 * Checks of configured numbers, shared so every component words a bad setting the same way:
 * `<owner>: <name> must be a positive integer, got <value>` (RangeError). `owner` names the
 * component when the setting's name alone would not (e.g. 'OutboxStore').
 */

/** `value` when it is a safe integer > 0. @throws RangeError */
export function positiveInt(name: string, value: number, owner?: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${prefix(owner)}${name} must be a positive integer, got ${value}`)
  return value
}

/** `value` when it is a safe integer >= 0. @throws RangeError */
export function nonNegativeInt(name: string, value: number, owner?: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${prefix(owner)}${name} must be a non-negative integer, got ${value}`)
  return value
}

/** `value` when it is a finite number > 0 (fractions allowed, e.g. milliseconds). @throws RangeError */
export function positiveNumber(name: string, value: number, owner?: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${prefix(owner)}${name} must be a positive number, got ${value}`)
  return value
}

/** `value` when it is a finite number >= 0. @throws RangeError */
export function nonNegativeNumber(name: string, value: number, owner?: string): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`${prefix(owner)}${name} must be a non-negative number, got ${value}`)
  return value
}

function prefix(owner: string | undefined): string {
  return owner === undefined ? '' : `${owner}: `
}
