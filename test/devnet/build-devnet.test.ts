/**
 * The devnet builder is deterministic: two builds give byte-identical files, and they are the
 * committed fixtures (so a changed layout, artifact or dependency cannot slip in unnoticed).
 * Its extension point adds contracts without moving anything that was there.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildDevnet, writeDevnet } from '../../scripts/devnet/build.ts'
import { GENESIS_TIMESTAMP } from '../../scripts/devnet/config.ts'
import { EXTENSIONS, fixedAddress, fixedDeployer, type FixedDeployment } from '../../scripts/devnet/fixed-deployments.ts'
import { DEVNET_DIR, GENESIS_PATH, REGISTRY_PATH } from '../../scripts/devnet/paths.ts'

const FILES = ['genesis.json', 'registry.json'] as const
/** one build (64 funded dev accounts, ~2,400 build blocks): about 6 s alone, much more on a busy machine */
const BUILD_TIMEOUT_MS = 120_000

describe('build-devnet', () => {
  const dirs = [mkdtempSync(join(tmpdir(), 'devnet-a-')), mkdtempSync(join(tmpdir(), 'devnet-b-'))]
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

  it('gives byte-identical files on two runs, equal to the committed fixtures/devnet', async () => {
    for (const dir of dirs) await writeDevnet(dir)
    for (const file of FILES) {
      const a = readFileSync(join(dirs[0]!, file), 'utf8')
      const b = readFileSync(join(dirs[1]!, file), 'utf8')
      expect(a === b, `${file} differs between two builds`).toBe(true)
      const committed = readFileSync(join(DEVNET_DIR, file), 'utf8')
      expect(a === committed, `${file} differs from the committed one: run npm run build:devnet (then npx tsx scripts/record-txs.ts)`).toBe(true)
    }
  }, BUILD_TIMEOUT_MS * 2)

  it('writes a go-ethereum genesis with every fork up to prague active from the start', () => {
    const genesis = JSON.parse(readFileSync(GENESIS_PATH, 'utf8'))
    expect(genesis.config).toMatchObject({ chainId: 31337, londonBlock: 0, mergeNetsplitBlock: 0, terminalTotalDifficulty: 0, shanghaiTime: 0, cancunTime: 0, pragueTime: 0 })
    expect(BigInt(genesis.timestamp)).toBe(GENESIS_TIMESTAMP)
    expect(BigInt(genesis.gasLimit)).toBe(30_000_000n)
    expect(BigInt(genesis.baseFeePerGas)).toBe(1_000_000_000n)
    for (const [address, entry] of Object.entries<{ storage?: Record<string, string> }>(genesis.alloc)) {
      expect(address).toMatch(/^0x[0-9a-f]{40}$/)
      for (const [k, v] of Object.entries(entry.storage ?? {})) {
        expect(k).toMatch(/^0x[0-9a-f]{64}$/)
        expect(v).toMatch(/^0x[0-9a-f]{64}$/)
      }
    }
  })

  it('adds extension contracts at fixed addresses without moving or changing anything else', async () => {
    const extension: FixedDeployment = {
      label: 'test-extension',
      artifact: 'DevnetPriceFeed',
      constructorArgs: ({ registry }) => [18, `price of ${registry.tokens[1]!.symbol}`, 1n, 1n],
    }
    // appended after the real extensions, as a new entry of EXTENSIONS would be
    const extended = await buildDevnet({ extensions: [...EXTENSIONS, extension] })
    // compared with the committed build, which the first test proves is what the builder makes
    const base = { genesis: JSON.parse(readFileSync(GENESIS_PATH, 'utf8')), registry: JSON.parse(readFileSync(REGISTRY_PATH, 'utf8')) }
    const address = fixedAddress('test-extension')
    expect(extended.registry.extensions).toEqual({ ...base.registry.extensions, 'test-extension': address })
    expect({ ...extended.registry, extensions: base.registry.extensions }).toEqual(base.registry)
    const added = Object.keys(extended.genesis.alloc).filter((a) => !(a in base.genesis.alloc))
    expect(added.sort()).toEqual([address.toLowerCase(), fixedDeployer('test-extension').address.toLowerCase()].sort())
    for (const [a, entry] of Object.entries(base.genesis.alloc)) expect(extended.genesis.alloc[a], a).toEqual(entry)
  }, BUILD_TIMEOUT_MS)
})
