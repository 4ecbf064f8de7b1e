/** The comparison of an execution with what anvil recorded for a fixture transaction. */
import { expect } from 'vitest'
import { bytesToHexString } from '../../src/chain/quantity.ts'
import type { ExecutionOutcome } from '../../src/evm/simulator.ts'
import { lower, type FixtureTx } from '../support/devnet.ts'

/** Status, receipt gasUsed, return data and logs equal anvil's. */
export function expectFixtureOutcome(result: ExecutionOutcome, fx: FixtureTx): void {
  expect(result.status === 'success' ? 1 : 0).toBe(fx.expected.status)
  expect(result.gasUsed.toString()).toBe(fx.expected.gasUsed)
  expect(bytesToHexString(result.returnData)).toBe(fx.expected.output.toLowerCase())
  expect(result.logs).toEqual(
    fx.expected.logs.map((l) => ({ address: lower(l.address), topics: l.topics.map((t) => t.toLowerCase()), data: l.data.toLowerCase() })),
  )
}
