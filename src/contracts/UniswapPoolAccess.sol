// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title UniswapPoolAccess
/// @notice What SwapPlanRouter and BackrunExecutor share to touch Uniswap pools safely: proving a
/// pool is the factory's (its CREATE2 address), V2 amounts from reserves, and a V2 swap call.
/// Pools are called without interfaces, by selector, so the compile script emits no artifacts for
/// generic interface names.
abstract contract UniswapPoolAccess {
    uint8 internal constant PROTOCOL_V2 = 0;
    uint8 internal constant PROTOCOL_V3 = 1;

    /// TickMath.MIN_SQRT_RATIO + 1 and MAX_SQRT_RATIO - 1: no price limit, an exact-input swap
    /// takes all of its input unless the pool runs out of liquidity altogether.
    uint160 internal constant MIN_SQRT_PRICE_LIMIT = 4295128740;
    uint160 internal constant MAX_SQRT_PRICE_LIMIT = 1461446703485210103287273052203988822378723970341;

    bytes4 internal constant V2_GET_RESERVES = bytes4(keccak256("getReserves()"));
    bytes4 internal constant V2_SWAP = bytes4(keccak256("swap(uint256,uint256,address,bytes)"));
    bytes4 internal constant V3_SWAP = bytes4(keccak256("swap(address,bool,int256,uint160,bytes)"));

    /// Constructor arguments, as immutables (in the code: no SLOAD on the hot path).
    address public immutable v2Factory;
    bytes32 public immutable v2PairInitCodeHash;
    address public immutable v3Factory;
    bytes32 public immutable v3PoolInitCodeHash;

    error InvalidProtocol(uint8 protocol);
    /// the hop's pool is not the factory's pool for its tokens (and fee), or has no code
    error InvalidPool(address pool);

    constructor(address v2Factory_, bytes32 v2PairInitCodeHash_, address v3Factory_, bytes32 v3PoolInitCodeHash_) {
        v2Factory = v2Factory_;
        v2PairInitCodeHash = v2PairInitCodeHash_;
        v3Factory = v3Factory_;
        v3PoolInitCodeHash = v3PoolInitCodeHash_;
    }

    /// `pool`, after proving it is the factory's pool for (tokenIn, tokenOut[, fee]).
    function _verifiedPool(uint8 protocol, address pool, address tokenIn, address tokenOut, uint24 fee)
        internal
        view
        returns (address)
    {
        (address token0, address token1) = tokenIn < tokenOut ? (tokenIn, tokenOut) : (tokenOut, tokenIn);
        address expected;
        if (protocol == PROTOCOL_V2) {
            // UniswapV2Library.pairFor: salt = keccak256(abi.encodePacked(token0, token1))
            bytes32 salt;
            assembly ("memory-safe") {
                // 40 packed bytes in the scratch space: token0 at 0x00, token1 at 0x14
                mstore(0x00, shl(96, token0))
                mstore(0x14, shl(96, token1))
                salt := keccak256(0x00, 0x28)
            }
            expected = _create2Address(v2Factory, salt, v2PairInitCodeHash);
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
            expected = _create2Address(v3Factory, salt, v3PoolInitCodeHash);
        } else {
            revert InvalidProtocol(protocol);
        }
        // Same tokens in and out give an address no factory deploys: no code, caught at the swap.
        if (pool != expected) revert InvalidPool(pool);
        return pool;
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

    /// V2 hop; the pair already holds amountIn. Output by UniswapV2Library.getAmountOut (0.3% fee).
    function _swapV2(address pair, bool zeroForOne, uint256 amountIn, address to) internal returns (uint256 amountOut) {
        amountOut = _v2AmountOut(pair, zeroForOne, amountIn);
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

    /// UniswapV2Library.getAmountOut (0.3% fee) on the pair's current reserves.
    function _v2AmountOut(address pair, bool zeroForOne, uint256 amountIn) internal view returns (uint256) {
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
        uint256 amountInWithFee = amountIn * 997;
        return (amountInWithFee * reserveOut) / (reserveIn * 1000 + amountInWithFee);
    }
}
