/**
 * The devnet's contracts come from its registry; VENUES in devnet mode keeps some of the
 * registry's venues (issue 15's benchmark compares Uniswap's own venues with all of them) and
 * refuses a venue the devnet's contracts were not deployed with.
 */
import { describe, expect, it } from 'vitest'
import { devnetContracts, resolveChainContracts } from '../../src/node/chain-contracts.ts'
import { loadConfig } from '../../src/node/config.ts'
import { MAINNET_VENUES, venueContract, venueJson } from '../../src/pools/index.ts'
import { REGISTRY_PATH } from '../support/devnet.ts'

const ALL = devnetContracts(REGISTRY_PATH).venues

describe('devnet venues', () => {
  it('every registry venue by default; VENUES keeps the ones it names, as the registry describes them', () => {
    expect(ALL.map((v) => v.name)).toEqual(['uniswap-v2', 'uniswap-v3', 'devnet-fork-v2', 'devnet-fork-v3', 'uniswap-v4'])
    const uniswap = ALL.filter((v) => v.name.startsWith('uniswap-'))
    const config = loadConfig({ VENUES: JSON.stringify(uniswap.map(venueJson)) })
    expect(config.chain.mode === 'devnet' && config.chain.venues).toEqual(uniswap)
    expect(resolveChainContracts(config).venues).toEqual(uniswap)
    // the shorthand picks by factory
    const v3Only = resolveChainContracts(loadConfig({ V3_FACTORY: venueContract(ALL[1]) }))
    expect(v3Only.venues).toEqual([ALL[1]])
    const unset = loadConfig({})
    expect(unset.chain.mode === 'devnet' && unset.chain.venues).toBeUndefined()
    expect(resolveChainContracts(unset).venues).toEqual(ALL)
  })

  it("a venue the devnet's contracts were not deployed with is refused, naming the ones they accept", () => {
    const config = loadConfig({ VENUES: JSON.stringify([venueJson(MAINNET_VENUES[0])]) })
    expect(() => resolveChainContracts(config)).toThrow(/VENUES: uniswap-v2 \(uniswap-v2, factory 0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f\) is not a venue of the devnet registry .*accept only uniswap-v2 \(uniswap-v2, 0x/)
  })
})
