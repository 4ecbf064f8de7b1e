/**
 * The committed src/contracts/artifacts are what scripts/compile-contracts.ts makes of the
 * sources today (npm start and the devnet builder use them without compiling).
 */
import { describe, expect, it } from 'vitest'
import { compileContracts, staleArtifacts } from '../../scripts/compile-contracts.ts'

describe('contract artifacts', () => {
  it('are up to date with src/contracts/*.sol', () => {
    const artifacts = compileContracts()
    expect(artifacts.has('DevnetERC20')).toBe(true)
    expect(artifacts.has('DevnetPriceFeed')).toBe(true)
    expect(staleArtifacts(artifacts), 'run npx tsx scripts/compile-contracts.ts').toEqual([])
  })
})
