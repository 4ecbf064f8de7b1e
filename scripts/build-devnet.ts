/**
 * npm run build:devnet [-- OUT_DIR]
 *
 * Rebuilds the embedded devnet (default OUT_DIR: fixtures/devnet): genesis.json with the real
 * Uniswap V2/V3 contracts, tokens, pools, funded dev accounts and the ETH/USD feed, and
 * registry.json with their addresses. Deterministic: two runs give byte-identical files.
 * After a rebuild, re-record the fixture transactions: npx tsx scripts/record-txs.ts
 */
import { resolve } from 'node:path'
import { writeDevnet } from './devnet/build.ts'
import { DEVNET_DIR } from './devnet/paths.ts'

const outDir = resolve(process.argv[2] ?? DEVNET_DIR)
const started = performance.now()
const build = await writeDevnet(outDir)
const r = build.registry
console.log(
  `devnet written to ${outDir} in ${Math.round(performance.now() - started)} ms: ` +
    `${Object.keys(build.genesis.alloc).length} accounts, ${r.tokens.length} tokens, ${r.v2.pairs.length} V2 pairs and ` +
    `${r.v3.pools.length} V3 pools at Uniswap, ${r.venues.length} venues, ${r.v4.pools.length} V4 pools, ${build.buildBlocks} build blocks`,
)
