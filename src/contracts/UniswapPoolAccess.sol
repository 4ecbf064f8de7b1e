// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title UniswapPoolAccess
/// @notice What SwapPlanRouter and BackrunExecutor share to touch Uniswap-style pools safely: the
/// venues they trust (set at deployment, immutable), proving a pool is a trusted venue's (its
/// CREATE2 address), V2 amounts from reserves at the venue's fee, and a V2 swap call.
/// Pools are called without interfaces, by selector, so the compile script emits no artifacts for
/// generic interface names.
///
/// A venue is one deployment of V2-style pairs (Uniswap, Sushi, Pancake, ...: factory, pair
/// init-code hash, swap fee) or of V3-style pools (the account that CREATE2-deploys them and the
/// pool init-code hash). A hop does not name its venue: its pool is accepted when it is the CREATE2
/// address of its tokens (and fee) under one of the trusted venues of its kind, tried in order,
/// and a V2 hop then swaps at that venue's fee. So a plan cannot pass off a pool of an untrusted
/// factory, nor a pair of one venue at another venue's fee.
abstract contract UniswapPoolAccess {
    uint8 internal constant PROTOCOL_V2 = 0;
    uint8 internal constant PROTOCOL_V3 = 1;
    /// Venues per kind held in immutables (a code read each, no SLOAD on the hot path).
    uint256 public constant MAX_VENUES_PER_KIND = 4;
    uint256 internal constant FEE_SCALE = 10_000;

    /// TickMath.MIN_SQRT_RATIO + 1 and MAX_SQRT_RATIO - 1: no price limit, an exact-input swap
    /// takes all of its input unless the pool runs out of liquidity altogether.
    uint160 internal constant MIN_SQRT_PRICE_LIMIT = 4295128740;
    uint160 internal constant MAX_SQRT_PRICE_LIMIT = 1461446703485210103287273052203988822378723970341;

    bytes4 internal constant V2_GET_RESERVES = bytes4(keccak256("getReserves()"));
    bytes4 internal constant V2_SWAP = bytes4(keccak256("swap(uint256,uint256,address,bytes)"));
    bytes4 internal constant V3_SWAP = bytes4(keccak256("swap(address,bool,int256,uint160,bytes)"));

    /// @notice A deployment of V2-style pairs: pairs live at CREATE2(factory,
    /// keccak256(token0 ++ token1), initCodeHash) and swap at feeBps (Uniswap 30, Pancake 25).
    struct V2Venue {
        address factory;
        bytes32 initCodeHash;
        uint16 feeBps;
    }

    /// @notice A deployment of V3-style pools: pools live at CREATE2(poolDeployer,
    /// keccak256(abi.encode(token0, token1, fee)), initCodeHash). The pool deployer is the factory
    /// for Uniswap and Sushi, a separate PoolDeployer for PancakeSwap.
    struct V3Venue {
        address poolDeployer;
        bytes32 initCodeHash;
    }

    // Constructor arguments, as immutables: slot i holds venue i of its kind (unused slots are zero
    // and never tried: the counts bound the search).
    uint256 internal immutable v2VenueCount;
    uint256 internal immutable v3VenueCount;
    address internal immutable v2Factory0;
    address internal immutable v2Factory1;
    address internal immutable v2Factory2;
    address internal immutable v2Factory3;
    bytes32 internal immutable v2InitCodeHash0;
    bytes32 internal immutable v2InitCodeHash1;
    bytes32 internal immutable v2InitCodeHash2;
    bytes32 internal immutable v2InitCodeHash3;
    uint256 internal immutable v2FeeBps0;
    uint256 internal immutable v2FeeBps1;
    uint256 internal immutable v2FeeBps2;
    uint256 internal immutable v2FeeBps3;
    address internal immutable v3Deployer0;
    address internal immutable v3Deployer1;
    address internal immutable v3Deployer2;
    address internal immutable v3Deployer3;
    bytes32 internal immutable v3InitCodeHash0;
    bytes32 internal immutable v3InitCodeHash1;
    bytes32 internal immutable v3InitCodeHash2;
    bytes32 internal immutable v3InitCodeHash3;

    error InvalidProtocol(uint8 protocol);
    /// the hop's pool is not a trusted venue's pool for its tokens (and fee), or has no code
    error InvalidPool(address pool);
    /// no venue, more than MAX_VENUES_PER_KIND of a kind, a zero factory or deployer, a fee of 100% or more
    error InvalidVenues();

    constructor(V2Venue[] memory v2, V3Venue[] memory v3) {
        if (v2.length + v3.length == 0 || v2.length > MAX_VENUES_PER_KIND || v3.length > MAX_VENUES_PER_KIND) {
            revert InvalidVenues();
        }
        for (uint256 i; i < v2.length; ++i) {
            if (v2[i].factory == address(0) || v2[i].feeBps >= FEE_SCALE) revert InvalidVenues();
        }
        for (uint256 i; i < v3.length; ++i) {
            if (v3[i].poolDeployer == address(0)) revert InvalidVenues();
        }
        v2VenueCount = v2.length;
        v3VenueCount = v3.length;
        V2Venue memory a = _v2At(v2, 0);
        V2Venue memory b = _v2At(v2, 1);
        V2Venue memory c = _v2At(v2, 2);
        V2Venue memory d = _v2At(v2, 3);
        (v2Factory0, v2InitCodeHash0, v2FeeBps0) = (a.factory, a.initCodeHash, a.feeBps);
        (v2Factory1, v2InitCodeHash1, v2FeeBps1) = (b.factory, b.initCodeHash, b.feeBps);
        (v2Factory2, v2InitCodeHash2, v2FeeBps2) = (c.factory, c.initCodeHash, c.feeBps);
        (v2Factory3, v2InitCodeHash3, v2FeeBps3) = (d.factory, d.initCodeHash, d.feeBps);
        V3Venue memory e = _v3At(v3, 0);
        V3Venue memory f = _v3At(v3, 1);
        V3Venue memory g = _v3At(v3, 2);
        V3Venue memory h = _v3At(v3, 3);
        (v3Deployer0, v3InitCodeHash0) = (e.poolDeployer, e.initCodeHash);
        (v3Deployer1, v3InitCodeHash1) = (f.poolDeployer, f.initCodeHash);
        (v3Deployer2, v3InitCodeHash2) = (g.poolDeployer, g.initCodeHash);
        (v3Deployer3, v3InitCodeHash3) = (h.poolDeployer, h.initCodeHash);
    }

    /// @notice The trusted V2-style venues, in the order pools are tried.
    function v2Venues() external view returns (V2Venue[] memory venues) {
        venues = new V2Venue[](v2VenueCount);
        for (uint256 i; i < venues.length; ++i) {
            (address factory, bytes32 initCodeHash, uint256 feeBps) = _v2Venue(i);
            venues[i] = V2Venue(factory, initCodeHash, uint16(feeBps));
        }
    }

    /// @notice The trusted V3-style venues, in the order pools are tried.
    function v3Venues() external view returns (V3Venue[] memory venues) {
        venues = new V3Venue[](v3VenueCount);
        for (uint256 i; i < venues.length; ++i) {
            (address deployer, bytes32 initCodeHash) = _v3Venue(i);
            venues[i] = V3Venue(deployer, initCodeHash);
        }
    }

    /// Proves `pool` is a trusted venue's pool for (tokenIn, tokenOut[, fee]); returns the V2
    /// venue's fee in basis points (0 for a V3 pool, whose fee the pool applies itself).
    function _verifiedPool(uint8 protocol, address pool, address tokenIn, address tokenOut, uint24 fee)
        internal
        view
        returns (uint256 feeBps)
    {
        (address token0, address token1) = tokenIn < tokenOut ? (tokenIn, tokenOut) : (tokenOut, tokenIn);
        if (protocol == PROTOCOL_V2) {
            // UniswapV2Library.pairFor: salt = keccak256(abi.encodePacked(token0, token1))
            bytes32 salt;
            assembly ("memory-safe") {
                // 40 packed bytes in the scratch space: token0 at 0x00, token1 at 0x14
                mstore(0x00, shl(96, token0))
                mstore(0x14, shl(96, token1))
                salt := keccak256(0x00, 0x28)
            }
            // unrolled over the immutable slots: the first venue costs one comparison
            uint256 n = v2VenueCount;
            if (n > 0 && pool == _create2Address(v2Factory0, salt, v2InitCodeHash0)) return v2FeeBps0;
            if (n > 1 && pool == _create2Address(v2Factory1, salt, v2InitCodeHash1)) return v2FeeBps1;
            if (n > 2 && pool == _create2Address(v2Factory2, salt, v2InitCodeHash2)) return v2FeeBps2;
            if (n > 3 && pool == _create2Address(v2Factory3, salt, v2InitCodeHash3)) return v2FeeBps3;
        } else if (protocol == PROTOCOL_V3) {
            // v3-periphery PoolAddress.computeAddress: salt = keccak256(abi.encode(token0, token1, fee))
            bytes32 salt;
            assembly ("memory-safe") {
                let m := mload(0x40)
                mstore(m, token0)
                mstore(add(m, 0x20), token1)
                mstore(add(m, 0x40), fee)
                salt := keccak256(m, 0x60)
            }
            uint256 n = v3VenueCount;
            if (n > 0 && pool == _create2Address(v3Deployer0, salt, v3InitCodeHash0)) return 0;
            if (n > 1 && pool == _create2Address(v3Deployer1, salt, v3InitCodeHash1)) return 0;
            if (n > 2 && pool == _create2Address(v3Deployer2, salt, v3InitCodeHash2)) return 0;
            if (n > 3 && pool == _create2Address(v3Deployer3, salt, v3InitCodeHash3)) return 0;
        } else {
            revert InvalidProtocol(protocol);
        }
        // Same tokens in and out give an address no factory deploys: it matches no venue either.
        revert InvalidPool(pool);
    }

    function _v2Venue(uint256 i) private view returns (address, bytes32, uint256) {
        if (i == 0) return (v2Factory0, v2InitCodeHash0, v2FeeBps0);
        if (i == 1) return (v2Factory1, v2InitCodeHash1, v2FeeBps1);
        if (i == 2) return (v2Factory2, v2InitCodeHash2, v2FeeBps2);
        return (v2Factory3, v2InitCodeHash3, v2FeeBps3);
    }

    function _v3Venue(uint256 i) private view returns (address, bytes32) {
        if (i == 0) return (v3Deployer0, v3InitCodeHash0);
        if (i == 1) return (v3Deployer1, v3InitCodeHash1);
        if (i == 2) return (v3Deployer2, v3InitCodeHash2);
        return (v3Deployer3, v3InitCodeHash3);
    }

    function _v2At(V2Venue[] memory v, uint256 i) private pure returns (V2Venue memory none) {
        if (i < v.length) return v[i];
    }

    function _v3At(V3Venue[] memory v, uint256 i) private pure returns (V3Venue memory none) {
        if (i < v.length) return v[i];
    }

    /// address(keccak256(0xff ++ factory ++ salt ++ initCodeHash)[12:]), as CREATE2 places it.
    function _create2Address(address factory, bytes32 salt, bytes32 initCodeHash) private pure returns (address a) {
        assembly ("memory-safe") {
            let m := mload(0x40)
            // 0xff in byte 11, the factory in bytes 12..31: the 85 hashed bytes start at m + 11
            mstore(m, or(shl(160, 0xff), factory))
            mstore(add(m, 0x20), salt)
            mstore(add(m, 0x40), initCodeHash)
            a := and(keccak256(add(m, 0x0b), 0x55), 0xffffffffffffffffffffffffffffffffffffffff)
        }
    }

    /// V2 hop; the pair already holds amountIn. Output by UniswapV2Library.getAmountOut at the
    /// pair's venue fee (feeBps, from _verifiedPool).
    function _swapV2(address pair, bool zeroForOne, uint256 amountIn, address to, uint256 feeBps)
        internal
        returns (uint256 amountOut)
    {
        amountOut = _v2AmountOut(pair, zeroForOne, amountIn, feeBps);
        (uint256 amount0Out, uint256 amount1Out) = zeroForOne ? (uint256(0), amountOut) : (amountOut, uint256(0));
        bytes4 selector = V2_SWAP;
        assembly ("memory-safe") {
            // pair.swap(amount0Out, amount1Out, to, ""), encoded by hand: no allocation, no return copy
            let m := mload(0x40)
            mstore(m, selector)
            mstore(add(m, 0x04), amount0Out)
            mstore(add(m, 0x24), amount1Out)
            mstore(add(m, 0x44), to)
            mstore(add(m, 0x64), 0x80) // offset of the bytes argument
            mstore(add(m, 0x84), 0) // its length: no flash-swap callback
            if iszero(call(gas(), pair, 0, m, 0xa4, 0, 0)) {
                returndatacopy(m, 0, returndatasize())
                revert(m, returndatasize())
            }
        }
    }

    /// UniswapV2Library.getAmountOut at feeBps on the pair's current reserves, on a 10000 scale:
    /// for 30 bps the very quotient of Uniswap's 997/1000 (both terms are ten times theirs), and
    /// PancakeSwap's own 9975/10000 for 25 bps.
    function _v2AmountOut(address pair, bool zeroForOne, uint256 amountIn, uint256 feeBps) internal view returns (uint256) {
        bytes4 selector = V2_GET_RESERVES;
        bool ok;
        uint256 reserve0;
        uint256 reserve1;
        assembly ("memory-safe") {
            mstore(0x00, selector)
            // Yul evaluates arguments right to left: the staticcall runs before returndatasize
            ok := and(gt(returndatasize(), 0x3f), staticcall(gas(), pair, 0x00, 0x04, 0x00, 0x40))
            reserve0 := mload(0x00)
            reserve1 := mload(0x20)
        }
        // an address without code answers with nothing
        if (!ok) revert InvalidPool(pair);
        (uint256 reserveIn, uint256 reserveOut) = zeroForOne ? (reserve0, reserve1) : (reserve1, reserve0);
        // an empty pair gives 0 here and pair.swap reverts with INSUFFICIENT_OUTPUT_AMOUNT
        uint256 amountInWithFee = amountIn * (FEE_SCALE - feeBps);
        return (amountInWithFee * reserveOut) / (reserveIn * FEE_SCALE + amountInWithFee);
    }
}
