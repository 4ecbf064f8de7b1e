// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {UniswapPoolAccess} from "./UniswapPoolAccess.sol";

/// @title SwapPlanRouter
/// @notice Executes a swap plan (src/routing/swap-plan.ts) in one call: the input is split over
/// legs, each leg is a path of one to three hops through V2-style pairs and V3-style pools of the
/// venues trusted at deployment (UniswapPoolAccess) and Uniswap V4 pools (with or without hooks,
/// ERC-20 or native ETH) in the PoolManager given at deployment, which one route may mix. Enforces a
/// minimum output and a deadline, pays the recipient, then optionally runs a partner's post-swap
/// call (a backrun) in the same transaction.
///
/// Trust model, in short:
/// - Users approve this contract (it is the quote's `spender`). It only ever moves tokens of
///   msg.sender, and only into pools it has proven genuine (CREATE2 address from a trusted venue's
///   factory and init-code hash), so a crafted plan cannot route a user's tokens into a fake pool.
/// - The V3 callbacks (Uniswap's and PancakeSwap's name) pay only the one pool this contract is
///   swapping with at that moment, which it proved genuine before calling it.
/// - A V4 hop runs inside PoolManager.unlock: unlockCallback answers only the configured
///   PoolManager, and only while this contract's own unlock is in flight (one-shot, like a V3 pool's
///   arming); it swaps, then settles exactly the input (sync, transfer, settle) and takes the output
///   to the hop's destination (flash accounting: the PoolManager's unlock reverts unless every delta
///   is zero). The key it swaps on is built here (the hop's tokens, fee, tick spacing and hooks), so
///   a plan cannot send a user's tokens anywhere but the PoolManager. A hook named by the plan is
///   called by the PoolManager, never by this contract, and gets no approval: whatever it does to
///   the swap's amounts, this contract pays exactly the hop's input and the plan's minimum output
///   still holds.
/// - Native ETH V4 pools (currency0 = address(0)) are crossed as WETH: the hop's WETH side is
///   unwrapped and settled as value, or taken as ETH and wrapped, so plans stay ERC-20 throughout.
///   ETH is accepted only from WETH (withdraw) and the PoolManager (take).
/// - The post-swap call never runs from this contract: this contract holds users' approvals, so an
///   arbitrary call from it (say token.transferFrom(victim, attacker, x)) would drain them. It runs
///   from SwapPlanRouterCallProxy, a separate contract that nobody approves and that holds nothing.
/// - No storage writes except transient (reentrancy lock, armed pool); no admin, no upgrades, no
///   approvals of its own, no token balance between transactions.
///
/// Tokens are assumed plain: amounts are computed, not measured by balance differences (like
/// Uniswap's own exact-input routes), so fee-on-transfer and rebasing tokens are not supported.
contract SwapPlanRouter is UniswapPoolAccess {
    /// @notice One swap through one pool. The direction (zeroForOne) is not a field: it follows
    /// from the token addresses (token0 is the lower one) and so cannot disagree with the pool.
    struct Hop {
        /// 0 = V2-style pair, 1 = V3-style pool, 2 = Uniswap V4 pool, 3 = Uniswap V4 pool whose key
        /// holds native ETH (address(0)) where the hop's tokens hold WETH
        uint8 protocol;
        /// must equal the CREATE2 address of (tokenIn, tokenOut[, fee]) under a trusted venue; for
        /// a V4 hop, the PoolManager
        address pool;
        /// tokenIn is the previous hop's tokenOut (the plan's tokenIn for the first hop)
        address tokenOut;
        /// V3 fee tier or V4 LP fee in hundredths of a bip (500, 3000, 10000); ignored for V2 pairs,
        /// which swap at their venue's fee
        uint24 fee;
        /// V4 only: the pool key's tick spacing (0 for V2 and V3 hops)
        int24 tickSpacing;
        /// V4 only: the pool key's hooks contract (address(0): none; always 0 for V2 and V3 hops)
        address hooks;
    }

    /// @notice Uniswap V4's PoolKey (currency0 < currency1; address(0) is native ETH).
    struct PoolKey {
        address currency0;
        address currency1;
        uint24 fee;
        int24 tickSpacing;
        address hooks;
    }

    /// @notice Uniswap V4's SwapParams: amountSpecified < 0 is an exact input.
    struct SwapParams {
        bool zeroForOne;
        int256 amountSpecified;
        uint160 sqrtPriceLimitX96;
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

    uint256 internal constant MAX_HOPS = 3;
    uint8 internal constant PROTOCOL_V4 = 2;
    uint8 internal constant PROTOCOL_V4_NATIVE = 3;

    // Selectors of the external functions called without an interface (so the compile script does
    // not emit artifacts for generic interface names that other contracts may want to define).
    bytes4 internal constant WETH_DEPOSIT = bytes4(keccak256("deposit()"));
    bytes4 internal constant WETH_WITHDRAW = bytes4(keccak256("withdraw(uint256)"));
    bytes4 internal constant V4_UNLOCK = bytes4(keccak256("unlock(bytes)"));
    bytes4 internal constant V4_SWAP =
        bytes4(keccak256("swap((address,address,uint24,int24,address),(bool,int256,uint160),bytes)"));
    bytes4 internal constant V4_SYNC = bytes4(keccak256("sync(address)"));
    bytes4 internal constant V4_SETTLE = bytes4(keccak256("settle()"));
    bytes4 internal constant V4_TAKE = bytes4(keccak256("take(address,address,uint256)"));

    /// Constructor arguments, as immutables (in the code: no SLOAD on the hot path).
    address public immutable weth;
    /// @notice Uniswap V4's PoolManager (address(0): no V4 hops).
    address public immutable poolManager;
    /// @notice The account the post-swap call comes from (msg.sender at the post-call target).
    SwapPlanRouterCallProxy public immutable postCallProxy;

    /// Reentrancy lock for swap(), released at its end.
    bool private transient locked;
    /// The V3 pool swap() is calling right now; the only account whose callback is paid. One-shot:
    /// the callback disarms it, so a pool is paid at most once per swap call.
    address private transient armedPool;
    /// Set while this contract's PoolManager.unlock runs; unlockCallback disarms it (one-shot).
    bool private transient v4Unlocking;

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
    /// ETH sent by anyone but WETH (unwrapping) or the PoolManager (a native take)
    error UnexpectedEth();
    error TransferFailed(address token);

    constructor(address weth_, V2Venue[] memory v2Venues_, V3Venue[] memory v3Venues_, address poolManager_)
        UniswapPoolAccess(v2Venues_, v3Venues_)
    {
        weth = weth_;
        poolManager = poolManager_;
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

    /// @notice ETH arrives only mid-swap: from WETH when a native V4 hop unwraps its input, from the
    /// PoolManager when it takes a native output (wrapped at once).
    receive() external payable {
        if (msg.sender != weth && msg.sender != poolManager) revert UnexpectedEth();
    }

    /// @notice Pays the V3 pool armed by the current hop; rejects every other caller.
    /// @dev The data is what _swapV3 encoded, passed back verbatim by the (verified) pool.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        _payArmedPool(amount0Delta, amount1Delta, data);
    }

    /// @notice The same for PancakeSwap V3 pools, which call back under this name.
    function pancakeV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        _payArmedPool(amount0Delta, amount1Delta, data);
    }

    function _payArmedPool(int256 amount0Delta, int256 amount1Delta, bytes calldata data) private {
        if (msg.sender != armedPool) revert UnexpectedCallback();
        armedPool = address(0);
        (address token, address payer) = abi.decode(data, (address, address));
        // exact input: the positive delta is what the pool is owed (the input side)
        uint256 amount = uint256(amount0Delta > 0 ? amount0Delta : amount1Delta);
        _pay(token, payer, msg.sender, amount);
    }

    /// @notice PoolManager.unlock's callback for a V4 hop (_swapV4): swap, pay exactly the input,
    /// take the output to the hop's destination. Answers only the PoolManager during our own unlock.
    /// A native currency (address(0)) is paid from WETH unwrapped here and settled as value, and
    /// taken as ETH, wrapped here and sent on as WETH.
    function unlockCallback(bytes calldata data) external returns (bytes memory) {
        if (msg.sender != poolManager || !v4Unlocking) revert UnexpectedCallback();
        v4Unlocking = false;
        (PoolKey memory key, bool zeroForOne, uint256 amountIn, address payer, address to) =
            abi.decode(data, (PoolKey, bool, uint256, address, address));
        (bool ok, bytes memory ret) = msg.sender.call(
            abi.encodeWithSelector(
                V4_SWAP,
                key,
                SwapParams(zeroForOne, -int256(amountIn), zeroForOne ? MIN_SQRT_PRICE_LIMIT : MAX_SQRT_PRICE_LIMIT),
                bytes("")
            )
        );
        if (!ok) _bubble(ret);
        int256 delta = abi.decode(ret, (int256));
        // BalanceDelta: amount0 in the high 128 bits, amount1 in the low 128 (the caller's view:
        // negative is owed to the pool; a hook's return deltas are already in it)
        int128 amount0 = int128(delta >> 128);
        int128 amount1 = int128(delta);
        (int128 taken, int128 given) = zeroForOne ? (-amount0, amount1) : (-amount1, amount0);
        if (uint256(int256(taken)) != amountIn) revert PartialFill(amountIn, uint256(int256(taken)));
        (address currencyIn, address currencyOut) = zeroForOne ? (key.currency0, key.currency1) : (key.currency1, key.currency0);
        if (currencyIn == address(0)) {
            // the hop's WETH: here already (a previous hop's output, or wrapped msg.value), or the payer's
            if (payer != address(this)) _pay(weth, payer, address(this), amountIn);
            _wethCall(abi.encodeWithSelector(WETH_WITHDRAW, amountIn), 0);
            (ok, ret) = msg.sender.call{value: amountIn}(abi.encodeWithSelector(V4_SETTLE));
            if (!ok) _bubble(ret);
        } else {
            _v4Call(abi.encodeWithSelector(V4_SYNC, currencyIn));
            _pay(currencyIn, payer, msg.sender, amountIn);
            _v4Call(abi.encodeWithSelector(V4_SETTLE));
        }
        uint256 amountOut = uint256(int256(given));
        if (currencyOut == address(0)) {
            _v4Call(abi.encodeWithSelector(V4_TAKE, address(0), address(this), amountOut));
            _wethCall(abi.encodeWithSelector(WETH_DEPOSIT), amountOut);
            if (to != address(this)) _pay(weth, address(this), to, amountOut);
        } else {
            _v4Call(abi.encodeWithSelector(V4_TAKE, currencyOut, to, amountOut));
        }
        return abi.encode(amountOut);
    }

    function _wethCall(bytes memory data, uint256 value) private {
        (bool ok, bytes memory ret) = weth.call{value: value}(data);
        if (!ok) _bubble(ret);
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
        // the V2 venue fee of the hop about to run (0 for a V3 or V4 pool); each pool is verified
        // before anything moves into it
        uint256 feeBps = _verifiedHop(hops[0], tokenIn);
        // a V2 pair must hold its input before swap(): pull it from the payer straight into the pair
        if (hops[0].protocol == PROTOCOL_V2) _pay(tokenIn, payer, hops[0].pool, amount);

        for (uint256 i; i < hops.length; ++i) {
            (address to, uint256 nextFeeBps) =
                i + 1 < hops.length ? _nextHopTarget(hops[i + 1], hops[i].tokenOut) : (recipient, uint256(0));
            amount = _swap(hops[i], tokenIn, amount, to, payer, feeBps);
            // from the second hop on, the input is either already in its V2 pair or held here
            tokenIn = hops[i].tokenOut;
            payer = address(this);
            feeBps = nextFeeBps;
        }
    }

    /// Where a hop sends its output when `next` follows: straight into the next pair when that is
    /// V2 (it takes input by transfer), else to this contract, which pays the V3 pool in the
    /// callback (or settles it with the V4 PoolManager). Verifies the next pool; returns its V2
    /// venue fee.
    function _nextHopTarget(Hop calldata next, address tokenIn) private view returns (address to, uint256 feeBps) {
        feeBps = _verifiedHop(next, tokenIn);
        to = next.protocol == PROTOCOL_V2 ? next.pool : address(this);
    }

    /// A V4 hop names the configured PoolManager (its key is built in _swapV4; a native one has
    /// WETH on one side); any other hop is a trusted venue's pool and names no hooks.
    function _verifiedHop(Hop calldata hop, address tokenIn) private view returns (uint256 feeBps) {
        if (hop.protocol < PROTOCOL_V4) {
            if (hop.hooks != address(0)) revert InvalidPool(hop.pool);
            return _verifiedPool(hop.protocol, hop.pool, tokenIn, hop.tokenOut, hop.fee);
        }
        if (hop.protocol > PROTOCOL_V4_NATIVE) revert InvalidProtocol(hop.protocol);
        if (hop.pool != poolManager || poolManager == address(0) || tokenIn == hop.tokenOut) revert InvalidPool(hop.pool);
        if (hop.protocol == PROTOCOL_V4_NATIVE && tokenIn != weth && hop.tokenOut != weth) revert InvalidPool(hop.pool);
        return 0;
    }

    /// One hop through a verified pool (hop.pool); returns its output.
    function _swap(Hop calldata hop, address tokenIn, uint256 amountIn, address to, address payer, uint256 feeBps)
        private
        returns (uint256)
    {
        bool zeroForOne = tokenIn < hop.tokenOut;
        if (hop.protocol == PROTOCOL_V2) return _swapV2(hop.pool, zeroForOne, amountIn, to, feeBps);
        if (hop.protocol == PROTOCOL_V3) return _swapV3(hop.pool, tokenIn, zeroForOne, amountIn, to, payer);
        return _swapV4(hop, tokenIn, amountIn, to, payer);
    }

    /// V4 hop, exact input, in one PoolManager.unlock (settled in unlockCallback by `payer`).
    function _swapV4(Hop calldata hop, address tokenIn, uint256 amountIn, address to, address payer)
        private
        returns (uint256 amountOut)
    {
        // BalanceDelta amounts are int128
        if (amountIn > uint256(int256(type(int128).max))) revert AmountTooLarge();
        (PoolKey memory key, bool zeroForOne) = _v4Key(hop, tokenIn);
        v4Unlocking = true;
        (bool ok, bytes memory ret) =
            poolManager.call(abi.encodeWithSelector(V4_UNLOCK, abi.encode(key, zeroForOne, amountIn, payer, to)));
        if (!ok) _bubble(ret);
        // unlock returns the callback's bytes, ABI-encoded
        amountOut = abi.decode(abi.decode(ret, (bytes)), (uint256));
    }

    /// The hop's PoolKey and direction. In a native hop WETH stands for address(0), which is
    /// always currency0.
    function _v4Key(Hop calldata hop, address tokenIn) private view returns (PoolKey memory key, bool zeroForOne) {
        address currencyIn = tokenIn;
        address currencyOut = hop.tokenOut;
        if (hop.protocol == PROTOCOL_V4_NATIVE) {
            if (currencyIn == weth) currencyIn = address(0);
            else currencyOut = address(0);
        }
        zeroForOne = currencyIn < currencyOut;
        (address currency0, address currency1) = zeroForOne ? (currencyIn, currencyOut) : (currencyOut, currencyIn);
        key = PoolKey(currency0, currency1, hop.fee, hop.tickSpacing, hop.hooks);
    }

    function _v4Call(bytes memory data) private {
        (bool ok, bytes memory ret) = poolManager.call(data);
        if (!ok) _bubble(ret);
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
