/**
 * The error a promise rejects with, checked to be of `type`: for tests that go on to read its
 * fields (reason, details, message). A promise that resolves fails the test.
 */
import { expect } from 'vitest'

export async function rejectionOf<E extends Error>(run: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await run
  } catch (error) {
    expect(error).toBeInstanceOf(type)
    return error as E
  }
  throw new Error(`expected the promise to reject with a ${type.name}`)
}
