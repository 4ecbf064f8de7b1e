/**
 * The known contracts' jump analyses made before the first request (src/workers/code-analyses-ahead.ts,
 * interpreter-patches.ts analyseCodeAhead): in the main isolate when the domain opens, in each worker
 * as it warms up, and by the same table a frame would fill.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { DevnetStateSource } from '../../src/chain/memory/devnet-source.ts'
import type { Address, ChainStateSource } from '../../src/chain/types.ts'
import { commonForChain } from '../../src/evm/chain-config.ts'
import { analyseCodeAhead, applyInterpreterPatches, hasSharedAnalysis } from '../../src/evm/interpreter-patches.ts'
import { Simulator } from '../../src/evm/simulator.ts'
import { resolveChainContracts } from '../../src/node/chain-contracts.ts'
import { loadConfig } from '../../src/node/config.ts'
import { openDomainServices, type DomainServices } from '../../src/node/domain.ts'
import { analyseKnownCode, knownCodeAddresses } from '../../src/workers/code-analyses-ahead.ts'
import { GENESIS_PATH, loadRegistry } from '../support/devnet.ts'

const registry = loadRegistry()
const V3_POOL = registry.v3.pools[0]!.address.toLowerCase() as Address
const chain = DevnetStateSource.fromGenesisFile(GENESIS_PATH)
const config = loadConfig({ LOG_LEVEL: 'silent' })
const contracts = resolveChainContracts(config)
/** the genesis accounts with code, and the number of distinct code contents among them */
const withCode = [...chain.genesis.accounts].filter(([, account]) => account.code.length > 0)
const contents = new Set(withCode.map(([, account]) => Buffer.from(account.code).toString('hex'))).size

const opened: DomainServices[] = []
afterAll(async () => {
  for (const domain of opened) await domain.close()
})

describe('known contracts analysed ahead', () => {
  it('lists every devnet genesis account with code, and on a fork the service contracts once each', () => {
    expect(knownCodeAddresses(chain, contracts).sort()).toEqual(withCode.map(([address]) => address).sort())
    expect(knownCodeAddresses(chain, contracts)).toContain(V3_POOL)
    const fork = { kind: 'fork', chainId: chain.chainId } as unknown as ChainStateSource
    const listed = knownCodeAddresses(fork, { ...contracts, baseTokens: [contracts.weth, ...contracts.baseTokens] })
    expect(new Set(listed).size).toBe(listed.length)
    expect(listed).toEqual(expect.arrayContaining([contracts.router.toLowerCase(), contracts.backrunExecutor.toLowerCase(), contracts.weth.toLowerCase()]))
  })

  it('analyses each content once for its Common, as a frame would find it, and leaves no listener on the Common', async () => {
    const common = commonForChain(chain.chainId, config.chain.hardfork)
    const pool = await chain.latest().getCode(V3_POOL)
    expect(hasSharedAnalysis(common, pool)).toBe(false)
    const listeners = common.events.listenerCount('hardforkChanged')
    const ahead = await analyseKnownCode(common, chain.latest(), knownCodeAddresses(chain, contracts))
    expect(common.events.listenerCount('hardforkChanged')).toBe(listeners)
    expect(ahead.contracts).toBe(contents)
    expect(ahead.codeBytes).toBeGreaterThan(100_000)
    // by content: a copy of the pool's code (another array, as another pool's account holds) is found too
    expect(hasSharedAnalysis(common, pool)).toBe(true)
    expect(hasSharedAnalysis(common, pool.slice())).toBe(true)
    // not across Commons
    expect(hasSharedAnalysis(commonForChain(chain.chainId, config.chain.hardfork), pool)).toBe(false)
    // again: nothing new
    expect((await analyseKnownCode(common, chain.latest(), knownCodeAddresses(chain, contracts))).contracts).toBe(0)
  })

  it('gives a pooled EVM the analysis its frames then use: the same answers with and without it', async () => {
    const ahead = new Simulator({ common: commonForChain(chain.chainId, config.chain.hardfork) })
    const cold = new Simulator({ common: commonForChain(chain.chainId, config.chain.hardfork) })
    await analyseKnownCode(ahead.common, chain.latest(), [V3_POOL])
    // slot0() of the pool: jumps in its dispatcher, so a frame analyses (or finds) its code
    const call = { from: '0x0000000000000000000000000000000000000001' as Address, to: V3_POOL, data: '0x3850c7bd' as const }
    const [a, b] = [await ahead.call(ahead.openState(chain.latest()), call), await cold.call(cold.openState(chain.latest()), call)]
    expect(a.status).toBe('success')
    expect([a.status, a.gasUsed, a.returnData, a.logs]).toEqual([b.status, b.gasUsed, b.returnData, b.logs])
    expect(hasSharedAnalysis(cold.common, await chain.latest().getCode(V3_POOL))).toBe(true)
  })

  it('does not analyse empty code', async () => {
    await applyInterpreterPatches()
    const common = commonForChain(chain.chainId, config.chain.hardfork)
    expect(analyseCodeAhead({ common, _opcodeMap: [] }, new Uint8Array(0))).toBe(false)
  })

  it('the main isolate holds every known content before its first request (WORKERS=0)', async () => {
    const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '0' }), { log: { warn: () => {} } })
    opened.push(domain)
    expect(domain.codeAnalysesAhead?.contracts).toBe(contents)
    for (const [, account] of withCode) expect(hasSharedAnalysis(domain.simulator.common, account.code)).toBe(true)
  })

  it('each worker has analysed them as it warmed up, before its first task', async () => {
    const domain = await openDomainServices(loadConfig({ LOG_LEVEL: 'silent', WORKERS: '2' }), { log: { warn: () => {} } })
    opened.push(domain)
    const byWorker = [...domain.workers!.codeAnalysesAhead().values()]
    expect(byWorker).toHaveLength(2)
    for (const ahead of byWorker) {
      expect(ahead?.contracts).toBe(contents)
      expect(ahead?.codeBytes).toBe(domain.codeAnalysesAhead?.codeBytes)
    }
  }, 60_000)
})
