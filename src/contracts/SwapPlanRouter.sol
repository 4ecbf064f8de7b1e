// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title SwapPlanRouter
/// @notice Executes a swap plan (src/routing/swap-plan.ts) in one call: the input is split over
/// legs, each leg is a path of one to three hops through Uniswap V2 pairs and V3 pools. Enforces a
/// minimum output and a deadline, pays the recipient, then optionally runs a partner's post-swap
/// call (a backrun) in the same transaction.
///
/// Trust model, in short:
/// - Users approve this contract (it is the quote's `spender`). It only ever moves tokens of
///   msg.sender, and only into pools it has proven genuine (CREATE2 address from the Uniswap
///   factory and init-code hash), so a crafted plan cannot route a user's tokens into a fake pool.
/// - The V3 callback pays only the one pool this contract is swapping with at that moment.
/// - The post-swap call never runs from this contract: this contract holds users' approvals, so an
///   arbitrary call from it (say token.transferFrom(victim, attacker, x)) would drain them. It runs
///   from SwapPlanRouterCallProxy, a separate contract that nobody approves and that holds nothing.
/// - No storage writes except transient (reentrancy lock, armed pool); no admin, no upgrades, no
///   approvals of its own, no token balance between transactions.
///
/// Tokens are assumed plain: amounts are computed, not measured by balance differences (like
/// Uniswap's own exact-input routes), so fee-on-transfer and rebasing tokens are not supported.
contract SwapPlanRouter {
    /// @notice One swap through one pool. The direction (zeroForOne) is not a field: it follows
    /// from the token addresses (token0 is the lower one) and so cannot disagree with the pool.
    struct Hop {
        /// 0 = Uniswap V2 pair, 1 = Uniswap V3 pool
        uint8 protocol;
        /// must equal the CREATE2 address of (tokenIn, tokenOut[, fee]) under the factory
        address pool;
        /// tokenIn is the previous hop's tokenOut (the plan's tokenIn for the first hop)
        address tokenOut;
        /// V3 fee tier in hundredths of a bip (500, 3000, 10000); ignored for V2 pairs
        uint24 fee;
    }

    /// @notice A share of the input sent down one path of 1..MAX_HOPS hops.
    struct Leg {
        uint256 amountIn;
        Hop[] hops;
    }

    /// @notice The legs' amountIn sum to amountIn; every leg ends in tokenOut.
    struct Plan {
        address tokenIn;
        address tokenOut;
        uint256 amountIn;
        Leg[] legs;
    }

    uint8 internal constant PROTOCOL_V2 = 0;
    uint8 internal constant PROTOCOL_V3 = 1;
    uint256 internal constant MAX_HOPS = 3;

    /// TickMath.MIN_SQRT_RATIO + 1 and MAX_SQRT_RATIO - 1: no price limit, an exact-input swap
    /// takes all of its input unless the pool runs out of liquidity altogether.
    uint160 internal constant MIN_SQRT_PRICE_LIMIT = 4295128740;
    uint160 internal constant MAX_SQRT_PRICE_LIMIT = 1461446703485210103287273052203988822378723970341;

    // Selectors of the external functions called without an interface (so the compile script does
    // not emit artifacts for generic interface names that other contracts may want to define).
    bytes4 internal constant V2_GET_RESERVES = bytes4(keccak256("getReserves()"));
    bytes4 internal constant V2_SWAP = bytes4(keccak256("swap(uint256,uint256,address,bytes)"));
    bytes4 internal constant V3_SWAP = bytes4(keccak256("swap(address,bool,int256,uint160,bytes)"));
    bytes4 internal constant WETH_DEPOSIT = bytes4(keccak256("deposit()"));

    /// Constructor arguments, as immutables (in the code: no SLOAD on the hot path).
    address public immutable weth;
    address public immutable v2Factory;
    bytes32 public immutable v2PairInitCodeHash;
    address public immutable v3Factory;
    bytes32 public immutable v3PoolInitCodeHash;
    /// @notice The account the post-swap call comes from (msg.sender at the post-call target).
    SwapPlanRouterCallProxy public immutable postCallProxy;

    /// Reentrancy lock for swap(), released at its end.
    bool private transient locked;
    /// The V3 pool swap() is calling right now; the only account whose callback is paid. One-shot:
    /// the callback disarms it, so a pool is paid at most once per swap call.
    address private transient armedPool;

    event Swapped(
        address indexed sender,
        address indexed recipient,
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 amountOut
    );

    error Expired();
    error InsufficientOutput(uint256 amountOut, uint256 minAmountOut);
    error Reentrancy();
    error EmptyPlan();
    /// the legs' amountIn do not add up to the plan's amountIn
    error AmountInMismatch(uint256 legsAmountIn, uint256 amountIn);
    /// a leg has no hop or more than MAX_HOPS
    error InvalidHopCount(uint256 hops);
    error InvalidProtocol(uint8 protocol);
    /// the hop's pool is not the factory's pool for its tokens (and fee)
    error InvalidPool(address pool);
    /// a leg's last hop does not end in the plan's tokenOut
    error PathMismatch(address tokenOut);
    /// msg.value must be zero, or exactly amountIn with tokenIn == WETH
    error InvalidEthValue();
    /// the router never holds output: paying itself would strand it
    error InvalidRecipient();
    /// a V3 pool took less than the hop's input (it ran out of liquidity)
    error PartialFill(uint256 amountIn, uint256 amountTaken);
    error AmountTooLarge();
    error UnexpectedCallback();
    error TransferFailed(address token);

    constructor(
        address weth_,
        address v2Factory_,
        bytes32 v2PairInitCodeHash_,
        address v3Factory_,
        bytes32 v3PoolInitCodeHash_
    ) {
        weth = weth_;
        v2Factory = v2Factory_;
        v2PairInitCodeHash = v2PairInitCodeHash_;
        v3Factory = v3Factory_;
        v3PoolInitCodeHash = v3PoolInitCodeHash_;
        postCallProxy = new SwapPlanRouterCallProxy();
    }

    /// @notice Swaps plan.amountIn of plan.tokenIn for at least minAmountOut of plan.tokenOut.
    /// @param plan the legs and hops; see the structs
    /// @param minAmountOut reverts with InsufficientOutput below this
    /// @param recipient receives tokenOut; address(0) means msg.sender
    /// @param deadline reverts with Expired when block.timestamp is past it
    /// @param postCallTarget address(0) for none; else called with postCallData from
    ///        postCallProxy after the recipient is paid; its revert reverts the whole swap
    /// @param postCallData calldata of the post-swap call
    /// @return amountOut tokenOut paid to the recipient
    /// @dev msg.sender approves this contract for tokenIn. Or, when tokenIn is WETH, it may send
    /// exactly amountIn as ETH instead, which is wrapped here and paid from this contract.
    function swap(
        Plan calldata plan,
        uint256 minAmountOut,
        address recipient,
        uint256 deadline,
        address postCallTarget,
        bytes calldata postCallData
    ) external payable returns (uint256 amountOut) {
        if (locked) revert Reentrancy();
        locked = true;
        // checked first: a stale transaction fails before it does any work
        if (block.timestamp > deadline) revert Expired();
        if (recipient == address(0)) recipient = msg.sender;
        else if (recipient == address(this)) revert InvalidRecipient();

        address payer = msg.sender;
        if (msg.value != 0) {
            if (plan.tokenIn != weth || msg.value != plan.amountIn) revert InvalidEthValue();
            (bool wrapped,) = weth.call{value: msg.value}(abi.encodeWithSelector(WETH_DEPOSIT));
            if (!wrapped) revert TransferFailed(weth);
            payer = address(this);
        }
        amountOut = _executeLegs(plan, payer, recipient);
        if (amountOut < minAmountOut) revert InsufficientOutput(amountOut, minAmountOut);
        emit Swapped(msg.sender, recipient, plan.tokenIn, plan.tokenOut, plan.amountIn, amountOut);

        // The recipient is paid and this contract holds nothing of the user's; the post call runs
        // from the proxy, which no one has approved. A revert there bubbles up unchanged.
        if (postCallTarget != address(0)) postCallProxy.forward(postCallTarget, postCallData);
        locked = false;
    }

    /// @notice Pays the V3 pool armed by the current hop; rejects every other caller.
    /// @dev The data is what _swapV3 encoded, passed back verbatim by the (verified) pool.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        if (msg.sender != armedPool) revert UnexpectedCallback();
        armedPool = address(0);
        (address token, address payer) = abi.decode(data, (address, address));
        // exact input: the positive delta is what the pool is owed (the input side)
        uint256 amount = uint256(amount0Delta > 0 ? amount0Delta : amount1Delta);
        _pay(token, payer, msg.sender, amount);
    }

    /// Runs every leg; returns the total paid to the recipient.
    function _executeLegs(Plan calldata plan, address payer, address recipient) private returns (uint256 amountOut) {
        Leg[] calldata legs = plan.legs;
        if (legs.length == 0) revert EmptyPlan();
        address tokenIn = plan.tokenIn;
        address tokenOut = plan.tokenOut;
        uint256 legsAmountIn;
        for (uint256 i; i < legs.length; ++i) {
            legsAmountIn += legs[i].amountIn;
            amountOut += _executeLeg(legs[i], tokenIn, tokenOut, payer, recipient);
        }
        // checked after the legs (one loop); a mismatch reverts everything they did
        if (legsAmountIn != plan.amountIn) revert AmountInMismatch(legsAmountIn, plan.amountIn);
    }

    /// Runs one leg and returns what its last hop paid the recipient. Tokens move straight from
    /// pool to pool where the next pool takes its input by transfer (V2); they stop at this contract
    /// only in front of a V3 pool, which pulls its input through the callback.
    function _executeLeg(Leg calldata leg, address tokenIn, address tokenOut, address payer, address recipient)
        private
        returns (uint256 amount)
    {
        Hop[] calldata hops = leg.hops;
        if (hops.length == 0 || hops.length > MAX_HOPS) revert InvalidHopCount(hops.length);
        address lastTokenOut = hops[hops.length - 1].tokenOut;
        if (lastTokenOut != tokenOut) revert PathMismatch(lastTokenOut);
        amount = leg.amountIn;
        address pool = _verifiedPool(hops[0], tokenIn);
        // a V2 pair must hold its input before swap(): pull it from the payer straight into the pair
        if (hops[0].protocol == PROTOCOL_V2) _pay(tokenIn, payer, pool, amount);

        for (uint256 i; i < hops.length; ++i) {
            (address to, address nextPool) =
                i + 1 < hops.length ? _nextHopTarget(hops[i + 1], hops[i].tokenOut) : (recipient, address(0));
            amount = _swap(hops[i], pool, tokenIn, amount, to, payer);
            // from the second hop on, the input is either already in its V2 pair or held here
            tokenIn = hops[i].tokenOut;
            payer = address(this);
            pool = nextPool;
        }
    }

    /// Where a hop sends its output when `next` follows: straight into the next pair when that is
    /// V2 (it takes input by transfer), else to this contract, which pays the V3 pool in the callback.
    function _nextHopTarget(Hop calldata next, address tokenIn) private view returns (address to, address nextPool) {
        nextPool = _verifiedPool(next, tokenIn);
        to = next.protocol == PROTOCOL_V2 ? nextPool : address(this);
    }

    /// One hop through a verified pool; returns its output.
    function _swap(Hop calldata hop, address pool, address tokenIn, uint256 amountIn, address to, address payer)
        private
        returns (uint256)
    {
        bool zeroForOne = tokenIn < hop.tokenOut;
        return hop.protocol == PROTOCOL_V2
            ? _swapV2(pool, zeroForOne, amountIn, to)
            : _swapV3(pool, tokenIn, zeroForOne, amountIn, to, payer);
    }

    /// The hop's pool, after proving it is the factory's pool for (tokenIn, hop.tokenOut[, fee]).
    function _verifiedPool(Hop calldata hop, address tokenIn) private view returns (address pool) {
        pool = hop.pool;
        uint8 protocol = hop.protocol;
        address tokenOut = hop.tokenOut;
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
            uint24 fee = hop.fee;
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
        if (pool != expected) revert InvalidPool(pool);
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
    function _swapV2(address pair, bool zeroForOne, uint256 amountIn, address to) private returns (uint256 amountOut) {
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

    /// UniswapV2Library.getAmountOut on the pair's current reserves.
    function _v2AmountOut(address pair, bool zeroForOne, uint256 amountIn) private view returns (uint256) {
        (uint256 reserve0, uint256 reserve1) = _getReserves(pair);
        (uint256 reserveIn, uint256 reserveOut) = zeroForOne ? (reserve0, reserve1) : (reserve1, reserve0);
        // an empty pair gives 0 here and pair.swap reverts with INSUFFICIENT_OUTPUT_AMOUNT
        uint256 amountInWithFee = amountIn * 997;
        return (amountInWithFee * reserveOut) / (reserveIn * 1000 + amountInWithFee);
    }

    /// V3 hop, exact input; the pool is paid in uniswapV3SwapCallback by `payer`.
    function _swapV3(address pool, address tokenIn, bool zeroForOne, uint256 amountIn, address to, address payer)
        private
        returns (uint256 amountOut)
    {
        if (amountIn > uint256(type(int256).max)) revert AmountTooLarge();
        armedPool = pool;
        (bool ok, bytes memory ret) = pool.call(
            abi.encodeWithSelector(
                V3_SWAP,
                to,
                zeroForOne,
                int256(amountIn),
                zeroForOne ? MIN_SQRT_PRICE_LIMIT : MAX_SQRT_PRICE_LIMIT,
                abi.encode(tokenIn, payer)
            )
        );
        if (!ok) _bubble(ret);
        // reverts on short return data: an address without code "succeeds" with none
        (int256 amount0, int256 amount1) = abi.decode(ret, (int256, int256));
        (int256 taken, int256 given) = zeroForOne ? (amount0, amount1) : (amount1, amount0);
        // A partial fill would leave input stranded here (or undercharge a later hop's math).
        if (uint256(taken) != amountIn) revert PartialFill(amountIn, uint256(taken));
        amountOut = uint256(-given);
    }

    /// Reserves of a V2 pair; reverts when the address answers with less than two words (no code).
    function _getReserves(address pair) private view returns (uint256 reserve0, uint256 reserve1) {
        bytes4 selector = V2_GET_RESERVES;
        bool ok;
        assembly ("memory-safe") {
            mstore(0x00, selector)
            // Yul evaluates arguments right to left: the staticcall runs before returndatasize
            ok := and(gt(returndatasize(), 0x3f), staticcall(gas(), pair, 0x00, 0x04, 0x00, 0x40))
            reserve0 := mload(0x00)
            reserve1 := mload(0x20)
        }
        if (!ok) revert InvalidPool(pair);
    }

    /// Pays `amount` of `token` to `to`, from this contract's balance or by transferFrom(payer).
    function _pay(address token, address payer, address to, uint256 amount) private {
        bool ok;
        assembly ("memory-safe") {
            let m := mload(0x40)
            let size
            switch eq(payer, address())
            case 1 {
                // transfer(address,uint256)
                mstore(m, 0xa9059cbb00000000000000000000000000000000000000000000000000000000)
                mstore(add(m, 0x04), to)
                mstore(add(m, 0x24), amount)
                size := 0x44
            }
            default {
                // transferFrom(address,address,uint256)
                mstore(m, 0x23b872dd00000000000000000000000000000000000000000000000000000000)
                mstore(add(m, 0x04), payer)
                mstore(add(m, 0x24), to)
                mstore(add(m, 0x44), amount)
                size := 0x64
            }
            ok := call(gas(), token, 0, m, size, 0x00, 0x20)
            // Success means: returned true, or returned nothing from an account with code
            // (USDT-style tokens return nothing; an address without code returns nothing too).
            ok := and(ok, or(and(gt(returndatasize(), 0x1f), eq(mload(0x00), 1)), and(iszero(returndatasize()), gt(extcodesize(token), 0))))
        }
        if (!ok) revert TransferFailed(token);
    }

    function _bubble(bytes memory ret) private pure {
        assembly ("memory-safe") {
            revert(add(ret, 0x20), mload(ret))
        }
    }
}

/// @title SwapPlanRouterCallProxy
/// @notice Runs SwapPlanRouter's post-swap call. It exists so that the call does not come from the
/// router, which users approve: whatever the target and data, the call can only act with the
/// rights of this proxy, which holds no tokens and no approvals. Only the router may use it
/// (deployed by the router's constructor).
contract SwapPlanRouterCallProxy {
    address public immutable router;

    error OnlyRouter();

    constructor() {
        router = msg.sender;
    }

    /// @notice Calls target with data; a revert is bubbled up with its data unchanged.
    function forward(address target, bytes calldata data) external {
        if (msg.sender != router) revert OnlyRouter();
        assembly ("memory-safe") {
            let m := mload(0x40)
            calldatacopy(m, data.offset, data.length)
            // return data is not needed on success; on failure it is the revert reason
            if iszero(call(gas(), target, 0, m, data.length, 0, 0)) {
                returndatacopy(m, 0, returndatasize())
                revert(m, returndatasize())
            }
        }
    }
}
