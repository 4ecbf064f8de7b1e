// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {UniswapPoolAccess} from "./UniswapPoolAccess.sol";

/// @title BackrunExecutor
/// @notice Captures the arbitrage a user's swap leaves behind, in the same transaction, without
/// capital: a cycle of two or three Uniswap V2/V3 pools and Uniswap V4 pools (in the PoolManager
/// given at deployment, with or without hooks, ERC-20 or native ETH crossed as WETH) from
/// startToken back to startToken is run on credit from
/// the cycle's first pool, the pool is repaid from the proceeds, and what is left
/// (the gross profit, in startToken) is split between the user (a refund) and the operator's
/// beneficiary.
///
/// How a partner integrates: after its swap, in the same transaction (so nothing can come between
/// the swap and the backrun), call this contract with the calldata the service returned:
///
///     (bool ok,) = backrunContract.call(backrunCalldata);
///     // require(ok) or not: the partner's choice. A backrun that is no longer profitable reverts
///     // with InsufficientProfit and, when ok is ignored, costs the user only the gas of the attempt.
///
/// Two entry points run the same cycle and pay out alike; they differ only in the profit check:
/// - backrun(..., minProfit, ...) reverts with InsufficientProfit when the gross profit is below
///   minProfit (what eth_backrun answers: the partner's swap and the backrun in one transaction).
/// - backrunExact(..., expectedProfit, ...) reverts with ProfitMismatch unless the gross profit is
///   exactly expectedProfit, above as well as below. For a backrun planned on a given state and
///   reported at its profit (a searcher's backrun transaction in a bundle): if anything moved the
///   cycle's pools before it (other bundles placed first in the block), it does not land at all
///   rather than realize a profit other than the one reported.
///
/// Nothing needs to be approved or sent to this contract, and its caller (msg.sender) does not
/// matter: anyone may call backrun() or backrunExact(). The refund goes to refundRecipient when
/// the calldata names one, otherwise (refundRecipient = address(0)) to tx.origin, the account that
/// signed the transaction carrying the swap. A backrun sent as a transaction of its own (appended to the
/// user's transaction in a bundle, signed by the searcher) must name the user as refundRecipient:
/// there tx.origin is the searcher. Likewise when a relayer or bundler signs the transaction
/// carrying the swap instead of the user.
///
/// With the project's SwapPlanRouter the backrun is the swap's post call: postCallTarget = this
/// contract, postCallData = the backrun calldata, passed through unchanged. The router makes the
/// call from its SwapPlanRouterCallProxy (msg.sender here is the proxy, tx.origin is still the
/// user, so refundRecipient = address(0) refunds the user), after the user's output is paid. The router bubbles a revert of its post call, so there
/// a failed backrun reverts the whole swap: set minProfit with that in mind.
///
/// Trust model:
/// - No approvals, no admin, no upgrades, no storage writes except transient ones; no token
///   balance between transactions: every amount moved is computed, and the cycle's proceeds are
///   paid out in full (repayment, refund, beneficiary) before backrun() (or backrunExact()) returns.
/// - Every pool of the cycle is proven genuine before anything moves: it must be the CREATE2
///   address of its tokens (and fee) under one of the venues (factory or pool deployer, init-code
///   hash) given at construction; a V2 pair then swaps at its venue's fee. Cycles may mix venues.
/// - A callback is accepted only from the one pool this contract is swapping with at that moment
///   (the armed pool, in transient storage: set only to a pool proven genuine, only while a
///   backrun is in progress, cleared by the callback it expects). A V2 callback must also report
///   this contract as the initiator of the swap. Any other call to a callback reverts.
/// - A V4 hop names the PoolManager given at deployment; the key it swaps on is built here (the
///   hop's tokens, fee, tick spacing and hooks; hookData is always empty). A native-ETH V4 hop
///   (protocol 3) holds WETH in the cycle where its key holds address(0): its ETH input is WETH
///   unwrapped here and settled as value, its ETH output is taken here and wrapped at once, so the
///   cycle only ever holds WETH. ETH is accepted only from WETH (unwrapping) and the PoolManager
///   (a native take), mid-backrun. unlockCallback answers only that PoolManager,
///   and only while this contract's own unlock is in flight (one-shot, like the armed pool). When
///   the cycle starts with a V4 hop, the whole cycle runs inside one unlock: the first swap's input
///   is owed to the PoolManager (flash accounting) and settled from the proceeds at the end; a
///   later V4 hop of a cycle that starts elsewhere runs in an unlock of its own. Either way every
///   V4 hop settles exactly its input (sync, transfer, settle; settle{value} for ETH) and takes
///   exactly its output, so the PoolManager's unlock ends with every delta zero or reverts. A hook's
///   return deltas are in the swap's BalanceDelta: the hop pays and takes what it says, and a hook
///   that makes the hop take other than its whole input reverts it (PartialFill).
/// - backrun() and backrunExact() share one reentrancy lock: neither can be entered while either runs.
///
/// Tokens are assumed plain (no fee on transfer, no rebasing), as for Uniswap's own exact-input
/// routes: amounts are computed, not measured by balance differences.
contract BackrunExecutor is UniswapPoolAccess {
    /// @notice One swap through one pool, exactly as SwapPlanRouter's Hop. The hop's tokenIn is
    /// the previous hop's tokenOut (startToken for the first hop); the direction follows from the
    /// token addresses (token0 is the lower one).
    struct Hop {
        /// 0 = V2-style pair, 1 = V3-style pool, 2 = Uniswap V4 pool, 3 = Uniswap V4 pool whose key
        /// holds native ETH (address(0)) where the hop's tokens hold WETH
        uint8 protocol;
        /// must equal the CREATE2 address of (tokenIn, tokenOut[, fee]) under a trusted venue; for
        /// a V4 hop, the PoolManager
        address pool;
        address tokenOut;
        /// V3 fee tier or V4 LP fee in hundredths of a bip (500, 3000, 10000); ignored for V2
        /// pairs, which swap at their venue's fee
        uint24 fee;
        /// V4 only: the pool key's tick spacing (ignored for V2 and V3 hops)
        int24 tickSpacing;
        /// V4 only: the pool key's hooks contract (address(0): none; must be 0 for V2 and V3 hops)
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

    uint256 internal constant MIN_HOPS = 2;
    uint256 internal constant MAX_HOPS = 3;
    uint256 internal constant BPS = 10_000;
    uint8 internal constant PROTOCOL_V4 = 2;
    uint8 internal constant PROTOCOL_V4_NATIVE = 3;
    /// v4Unlock: no unlock of ours in flight, one V4 hop's, or a whole cycle's (it starts with a V4 hop)
    uint8 private constant V4_IDLE = 0;
    uint8 private constant V4_ONE_HOP = 1;
    uint8 private constant V4_CYCLE = 2;

    // Selectors of the PoolManager's functions, called without an interface (so the compile script
    // emits no artifacts for generic interface names).
    bytes4 internal constant V4_UNLOCK = bytes4(keccak256("unlock(bytes)"));
    bytes4 internal constant V4_SWAP =
        bytes4(keccak256("swap((address,address,uint24,int24,address),(bool,int256,uint160),bytes)"));
    bytes4 internal constant V4_SYNC = bytes4(keccak256("sync(address)"));
    bytes4 internal constant V4_SETTLE = bytes4(keccak256("settle()"));
    bytes4 internal constant V4_TAKE = bytes4(keccak256("take(address,address,uint256)"));
    bytes4 internal constant WETH_DEPOSIT = bytes4(keccak256("deposit()"));
    bytes4 internal constant WETH_WITHDRAW = bytes4(keccak256("withdraw(uint256)"));

    /// @notice Receives the gross profit minus the refund (the operator's configured beneficiary).
    address public immutable beneficiary;
    /// @notice Uniswap V4's PoolManager (address(0): no V4 hops).
    address public immutable poolManager;
    /// @notice WETH, which stands for native ETH in a native-ETH V4 hop (address(0): no such hops).
    address public immutable weth;

    // Transient state, in this order so that each variable has a slot of its own (a write is one
    // TSTORE, not a read-modify-write of a packed slot).
    /// Reentrancy lock of backrun() and backrunExact(), released at their end.
    bool private transient locked;
    /// The cycle's gross profit, handed from the first pool's callback back to _backrun().
    uint256 private transient cycleProfit;
    /// The pool whose callback is expected now (0 when none). One-shot: the callback clears it.
    address private transient armedPool;
    /// The cycle's V2 venue fees in basis points, 16 bits per hop (hop i at bits 16i), found when
    /// its pools were verified and read by the swaps (0 for a V3 hop).
    uint256 private transient hopFeesBps;
    /// Which unlock of ours the PoolManager is running (V4_ONE_HOP, V4_CYCLE), V4_IDLE when none:
    /// set just before PoolManager.unlock, cleared by the unlockCallback it expects (one-shot).
    uint8 private transient v4Unlock;

    /// @notice A backrun paid out grossProfit of startToken: refund to the refund recipient
    /// (refundRecipient, or tx.origin when that is address(0)), the rest to the beneficiary.
    event Backrun(address indexed startToken, uint256 grossProfit, uint256 refund);

    /// the cycle's proceeds minus what the first pool is owed (negative: a loss) is below minProfit
    error InsufficientProfit(int256 profit, uint256 minProfit);
    /// backrunExact(): the cycle's proceeds minus what the first pool is owed (negative: a loss) is
    /// not expectedProfit (the pools are not in the state the backrun was planned on)
    error ProfitMismatch(int256 profit, uint256 expectedProfit);
    /// a cycle has MIN_HOPS to MAX_HOPS hops
    error InvalidHopCount(uint256 hops);
    /// the last hop does not end in startToken
    error CycleNotClosed(address tokenOut);
    /// amountIn is 0 or above type(int256).max
    error InvalidAmountIn(uint256 amountIn);
    /// refundBps is above 10000
    error InvalidRefundBps(uint256 refundBps);
    /// refundRecipient is this contract (the refund would be stuck here)
    error InvalidRefundRecipient(address refundRecipient);
    error InvalidBeneficiary();
    /// a V3 or V4 pool took less than the hop's input (it ran out of liquidity)
    error PartialFill(uint256 amountIn, uint256 amountTaken);
    /// a V4 hop's input is above type(int128).max (BalanceDelta amounts are int128)
    error AmountTooLarge(uint256 amount);
    error Reentrancy();
    error UnexpectedCallback();
    error TransferFailed(address token);
    /// ETH sent by anyone but WETH (unwrapping) or the PoolManager (a native take)
    error UnexpectedEth();

    /// @param weth_ WETH: a native-ETH V4 hop's ETH is wrapped and unwrapped through it; address(0)
    /// for none (then native-ETH V4 hops revert)
    /// @param poolManager_ Uniswap V4's PoolManager; address(0) for none (then V4 hops revert)
    constructor(
        address weth_,
        V2Venue[] memory v2Venues_,
        V3Venue[] memory v3Venues_,
        address beneficiary_,
        address poolManager_
    ) UniswapPoolAccess(v2Venues_, v3Venues_) {
        // profit paid to address(0) fails with most tokens; paid to this contract, it would be stuck
        if (beneficiary_ == address(0) || beneficiary_ == address(this)) revert InvalidBeneficiary();
        beneficiary = beneficiary_;
        poolManager = poolManager_;
        weth = weth_;
    }

    /// @notice ETH arrives only mid-backrun: from WETH when a native V4 hop unwraps its input, from
    /// the PoolManager when it takes a native output (wrapped at once). WETH9 sends it with a 2300
    /// gas stipend: this reads immutables only.
    receive() external payable {
        if (msg.sender != weth && msg.sender != poolManager) revert UnexpectedEth();
    }

    /// @notice Runs the cycle `hops` from startToken back to startToken on credit from its first
    /// pool and pays out the profit: refundBps/10000 of it (rounded down) to refundRecipient (to
    /// tx.origin when refundRecipient is address(0)), the rest to the beneficiary.
    /// @param startToken the token the cycle starts and ends in, and the profit's token
    /// @param amountIn what the first pool is paid (after the other hops, from their proceeds)
    /// @param hops 2 or 3 hops chained token to token, the last one ending in startToken
    /// @param minProfit reverts with InsufficientProfit when the gross profit is below this
    /// @param refundBps share of the gross profit refunded, in basis points (0..10000)
    /// @param refundRecipient receives the refund; address(0) means tx.origin (the backrun runs in
    /// the user's own transaction). Name the user explicitly when someone else signs the
    /// transaction, e.g. a searcher's backrun transaction appended to the user's in a bundle.
    /// Not this contract.
    /// @return grossProfit the cycle's proceeds minus amountIn, in startToken
    function backrun(
        address startToken,
        uint256 amountIn,
        Hop[] calldata hops,
        uint256 minProfit,
        uint16 refundBps,
        address refundRecipient
    ) external returns (uint256 grossProfit) {
        return _backrun(startToken, amountIn, hops, minProfit, false, refundBps, refundRecipient);
    }

    /// @notice backrun() that lands only on the state it was planned on: the same cycle, checks,
    /// payout and Backrun event, but it reverts with ProfitMismatch unless the gross profit is
    /// exactly expectedProfit (a higher profit reverts too, as does a lower one or a loss).
    /// @dev The profit the cycle realizes is a function of the pools' state, so a backrun that
    /// matched its expectedProfit when planned fails once something moved the cycle's pools
    /// before it (e.g. other bundles placed first in the block): its bundle then fails instead of
    /// landing at a profit other than the one reported for it.
    /// @param startToken the token the cycle starts and ends in, and the profit's token
    /// @param amountIn what the first pool is paid (after the other hops, from their proceeds)
    /// @param hops 2 or 3 hops chained token to token, the last one ending in startToken
    /// @param expectedProfit the only gross profit accepted; anything else reverts with
    /// ProfitMismatch(profit, expectedProfit)
    /// @param refundBps share of the gross profit refunded, in basis points (0..10000)
    /// @param refundRecipient receives the refund; address(0) means tx.origin. Not this contract.
    /// @return grossProfit the cycle's proceeds minus amountIn, in startToken: expectedProfit
    function backrunExact(
        address startToken,
        uint256 amountIn,
        Hop[] calldata hops,
        uint256 expectedProfit,
        uint16 refundBps,
        address refundRecipient
    ) external returns (uint256 grossProfit) {
        return _backrun(startToken, amountIn, hops, expectedProfit, true, refundBps, refundRecipient);
    }

    /// backrun() and backrunExact(): `profit` is minProfit, or expectedProfit when `exact`; the
    /// first pool's callback checks the gross profit against it (_completeCycle).
    function _backrun(
        address startToken,
        uint256 amountIn,
        Hop[] calldata hops,
        uint256 profit,
        bool exact,
        uint16 refundBps,
        address refundRecipient
    ) private returns (uint256 grossProfit) {
        if (locked) revert Reentrancy();
        locked = true;
        if (refundBps > BPS) revert InvalidRefundBps(refundBps);
        if (refundRecipient == address(this)) revert InvalidRefundRecipient(refundRecipient);
        // the V3 pools take an int256; a V2 pair cannot hold more than a uint112 anyway
        if (amountIn == 0 || amountIn > uint256(type(int256).max)) revert InvalidAmountIn(amountIn);
        // Every pool is proven genuine before anything moves; the callbacks trust the armed pool.
        _verifyCycle(startToken, hops);

        // the first pool's callback gets this back verbatim (_completeCycle reads it)
        address pool = _flash(startToken, amountIn, hops, abi.encode(amountIn, profit, exact, hops));
        // A pool that did not call back has no code (its CREATE2 address is right, but nothing is
        // deployed there): nothing moved. Otherwise the callback has checked the profit and repaid
        // the pool, and the profit is all this contract holds of startToken.
        if (armedPool != address(0)) revert InvalidPool(pool);
        grossProfit = cycleProfit;
        uint256 refund = grossProfit * refundBps / BPS;
        if (refund != 0) _transfer(startToken, refundRecipient == address(0) ? tx.origin : refundRecipient, refund);
        if (grossProfit != refund) _transfer(startToken, beneficiary, grossProfit - refund);
        emit Backrun(startToken, grossProfit, refund);
        locked = false;
    }

    /// Checks the hop count, proves every pool a trusted venue's and the cycle closed, and keeps the
    /// V2 hops' venue fees for the swaps (hopFeesBps).
    function _verifyCycle(address startToken, Hop[] calldata hops) private {
        uint256 n = hops.length;
        if (n < MIN_HOPS || n > MAX_HOPS) revert InvalidHopCount(n);
        address tokenIn = startToken;
        uint256 fees;
        for (uint256 i; i < n; ++i) {
            Hop calldata hop = hops[i];
            if (hop.protocol >= PROTOCOL_V4) {
                _verifyV4Hop(hop, tokenIn);
            } else {
                if (hop.hooks != address(0)) revert InvalidPool(hop.pool);
                fees |= _verifiedPool(hop.protocol, hop.pool, tokenIn, hop.tokenOut, hop.fee) << (16 * i);
            }
            tokenIn = hop.tokenOut;
        }
        if (tokenIn != startToken) revert CycleNotClosed(tokenIn);
        hopFeesBps = fees;
    }

    /// A V4 hop names the configured PoolManager and two ERC-20 tokens (the key is built from them,
    /// the fee, the tick spacing and the hooks when it swaps): a wrong fee, spacing or hooks names a
    /// pool the PoolManager does not have, and its swap reverts. A native-ETH hop has WETH on one
    /// side (its address(0) in the key).
    function _verifyV4Hop(Hop calldata hop, address tokenIn) private view {
        if (hop.protocol > PROTOCOL_V4_NATIVE) revert InvalidProtocol(hop.protocol);
        if (
            hop.pool != poolManager || poolManager == address(0) || tokenIn == hop.tokenOut || tokenIn == address(0)
                || hop.tokenOut == address(0)
        ) revert InvalidPool(hop.pool);
        if (hop.protocol == PROTOCOL_V4_NATIVE && (weth == address(0) || (tokenIn != weth && hop.tokenOut != weth))) {
            revert InvalidPool(hop.pool);
        }
    }

    /// The hop's PoolKey and direction from tokenIn. In a native hop WETH stands for address(0),
    /// which is always currency0.
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

    /// Swaps amountIn on the first pool, output first: the rest of the cycle and the repayment run
    /// in the pool's callback (a V4 pool: in this contract's unlockCallback), which gets `data` =
    /// abi.encode(amountIn, profit, exact, hops) back verbatim.
    function _flash(address startToken, uint256 amountIn, Hop[] calldata hops, bytes memory data)
        private
        returns (address pool)
    {
        Hop calldata first = hops[0];
        pool = first.pool;
        bool zeroForOne = startToken < first.tokenOut;
        if (first.protocol >= PROTOCOL_V4) {
            // the whole cycle runs in the unlock; nothing is armed (unlockCallback checks v4Unlock)
            v4Unlock = V4_CYCLE;
            _call(pool, abi.encodeWithSelector(V4_UNLOCK, data));
            if (v4Unlock != V4_IDLE) revert UnexpectedCallback();
            return pool;
        }
        armedPool = pool;
        if (first.protocol == PROTOCOL_V2) {
            // flash swap: the output comes here first, uniswapV2Call repays amountIn
            uint256 amountOut = _v2AmountOut(pool, zeroForOne, amountIn, hopFeesBps & 0xffff);
            (uint256 amount0Out, uint256 amount1Out) = zeroForOne ? (uint256(0), amountOut) : (amountOut, uint256(0));
            _call(pool, abi.encodeWithSelector(V2_SWAP, amount0Out, amount1Out, address(this), data));
        } else {
            // a V3 pool pays its output before its callback: straight into the next pair when that is V2
            Hop calldata next = hops[1];
            address to = next.protocol == PROTOCOL_V2 ? next.pool : address(this);
            uint160 limit = zeroForOne ? MIN_SQRT_PRICE_LIMIT : MAX_SQRT_PRICE_LIMIT;
            _call(pool, abi.encodeWithSelector(V3_SWAP, to, zeroForOne, int256(amountIn), limit, data));
        }
    }

    /// @notice The first pool's flash-swap callback when it is a V2 pair.
    /// @dev Only the armed pair, and only for a swap this contract started.
    function uniswapV2Call(address sender, uint256 amount0, uint256 amount1, bytes calldata data) external {
        _v2FlashCallback(sender, amount0, amount1, data);
    }

    /// @notice The same for PancakeSwap V2 pairs, which call back under this name.
    function pancakeCall(address sender, uint256 amount0, uint256 amount1, bytes calldata data) external {
        _v2FlashCallback(sender, amount0, amount1, data);
    }

    function _v2FlashCallback(address sender, uint256 amount0, uint256 amount1, bytes calldata data) private {
        if (msg.sender != armedPool || sender != address(this)) revert UnexpectedCallback();
        armedPool = address(0);
        // a V2 flash swap is owed exactly amountIn (the first word of data)
        _completeCycle(data, uint256(bytes32(data[:32])), amount0 + amount1, PROTOCOL_V2);
    }

    /// @notice A V3 pool's callback: the first pool's (run the rest of the cycle, then repay it) or
    /// a later hop's (pay its input from this contract's proceeds).
    /// @dev Only the armed pool. The data is what this contract passed to that pool's swap: one word
    /// (the token to pay) for a later hop, the cycle for the first pool.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        _v3SwapCallback(amount0Delta, amount1Delta, data);
    }

    /// @notice The same for PancakeSwap V3 pools, which call back under this name.
    function pancakeV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) external {
        _v3SwapCallback(amount0Delta, amount1Delta, data);
    }

    function _v3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata data) private {
        if (msg.sender != armedPool) revert UnexpectedCallback();
        armedPool = address(0);
        // exact input: the positive delta is owed to the pool, the negative one was paid out
        (uint256 owed, uint256 received) = amount0Delta > 0
            ? (uint256(amount0Delta), uint256(-amount1Delta))
            : (uint256(amount1Delta), uint256(-amount0Delta));
        if (data.length == 32) {
            _transfer(address(uint160(uint256(bytes32(data)))), msg.sender, owed);
        } else {
            _completeCycle(data, owed, received, PROTOCOL_V3);
        }
    }

    /// @notice PoolManager.unlock's callback. For a cycle that starts with a V4 hop (V4_CYCLE): the
    /// first swap, taken on credit, then the rest of the cycle, then the first swap's input settled
    /// from the proceeds. For a later V4 hop (V4_ONE_HOP): that swap, its input settled from this
    /// contract's balance and its output taken to the hop's destination.
    /// @dev Only the configured PoolManager, and only during this contract's own unlock (one-shot).
    function unlockCallback(bytes calldata data) external returns (bytes memory) {
        uint8 mode = v4Unlock;
        if (msg.sender != poolManager || mode == V4_IDLE) revert UnexpectedCallback();
        v4Unlock = V4_IDLE;
        if (mode == V4_ONE_HOP) return abi.encode(_v4OneHop(data));
        _v4Cycle(data);
        return "";
    }

    /// V4_ONE_HOP: data = abi.encode(key, zeroForOne, amountIn, to), made by _swapV4InUnlock;
    /// returns the hop's output.
    function _v4OneHop(bytes calldata data) private returns (uint256) {
        (PoolKey memory key, bool zeroForOne, uint256 amountIn, address to) =
            abi.decode(data, (PoolKey, bool, uint256, address));
        return _v4SwapSettled(key, zeroForOne, amountIn, to);
    }

    /// V4_CYCLE: data = abi.encode(amountIn, profit, exact, hops), made by _backrun(); hops[0] is
    /// V4, and the cycle starts in the token its last hop ends in (verified closed).
    function _v4Cycle(bytes calldata data) private {
        uint256 amountIn = uint256(bytes32(data[:32]));
        Hop[] calldata hops = _hopsOf(data);
        Hop calldata first = hops[0];
        // the output goes straight into the next pair when that is V2, else here
        address to = hops[1].protocol == PROTOCOL_V2 ? hops[1].pool : address(this);
        (PoolKey memory key, bool zeroForOne) = _v4Key(first, hops[hops.length - 1].tokenOut);
        uint256 received = _v4Swap(key, zeroForOne, amountIn, to);
        _completeCycle(data, amountIn, received, PROTOCOL_V4);
    }

    /// The hops of data = abi.encode(amountIn, profit, exact, hops), made by _backrun() and passed
    /// back verbatim by a verified pool or the PoolManager: its layout is the canonical one.
    function _hopsOf(bytes calldata data) private pure returns (Hop[] calldata hops) {
        assembly ("memory-safe") {
            let array := add(data.offset, calldataload(add(data.offset, 0x60)))
            hops.length := calldataload(array)
            hops.offset := add(array, 0x20)
        }
    }

    /// Runs hops[1..] on the first pool's output, checks the profit and repays the first pool
    /// `owed` of startToken: msg.sender (the verified armed pool) for a V2 or V3 first hop; for a V4
    /// first hop, the PoolManager by settling what its first swap left owed.
    function _completeCycle(bytes calldata data, uint256 owed, uint256 received, uint8 firstProtocol) private {
        uint256 amountIn;
        uint256 bound;
        bool exact;
        // data = abi.encode(amountIn, profit, exact, hops), made by _backrun() and passed back
        // verbatim by the verified pool: its layout is the canonical one.
        assembly ("memory-safe") {
            amountIn := calldataload(data.offset)
            bound := calldataload(add(data.offset, 0x20))
            exact := calldataload(add(data.offset, 0x40))
        }
        Hop[] calldata hops = _hopsOf(data);
        if (owed != amountIn) revert PartialFill(amountIn, owed);
        // a V2 pair paid its output here; a V3 or V4 pool paid it straight into a V2 second pair already
        if (firstProtocol == PROTOCOL_V2 && hops[1].protocol == PROTOCOL_V2) _transfer(hops[0].tokenOut, hops[1].pool, received);
        // inside a V4 cycle's unlock, later V4 hops swap in it directly (an unlock cannot nest)
        bool unlocked = firstProtocol == PROTOCOL_V4;
        uint256 amount = _runHops(hops, received, unlocked);
        address tokenIn = hops[hops.length - 1].tokenOut;
        // tokenIn is startToken now. Both amounts are at most type(int256).max (a V3 pool's
        // int256, a V2 pair's uint112, or amountIn as checked by _backrun()).
        int256 profit = int256(amount) - int256(owed);
        if (exact) {
            // backrunExact(): bound is expectedProfit, the only profit accepted
            if (profit < 0 || uint256(profit) != bound) revert ProfitMismatch(profit, bound);
        } else if (profit < 0 || uint256(profit) < bound) {
            // backrun(): bound is minProfit
            revert InsufficientProfit(profit, bound);
        }
        if (unlocked) {
            // the first swap's input currency: address(0) when it is a native hop's WETH side
            _v4Settle(hops[0].protocol == PROTOCOL_V4_NATIVE && tokenIn == weth ? address(0) : tokenIn, owed);
        } else {
            _transfer(tokenIn, msg.sender, owed);
        }
        cycleProfit = uint256(profit);
    }

    /// Runs hops[1..] on `amount` of hops[0].tokenOut; returns what the last hop paid here.
    function _runHops(Hop[] calldata hops, uint256 amount, bool unlocked) private returns (uint256) {
        uint256 n = hops.length;
        address tokenIn = hops[0].tokenOut;
        uint256 fees = hopFeesBps;
        for (uint256 i = 1; i < n; ++i) {
            Hop calldata hop = hops[i];
            // output straight into the next pair when that is V2, else here (the last hop's too)
            address to = address(this);
            if (i + 1 < n && hops[i + 1].protocol == PROTOCOL_V2) to = hops[i + 1].pool;
            if (hop.protocol == PROTOCOL_V2) {
                amount = _swapV2(hop.pool, tokenIn < hop.tokenOut, amount, to, (fees >> (16 * i)) & 0xffff);
            } else if (hop.protocol == PROTOCOL_V3) {
                amount = _swapV3(hop.pool, tokenIn, tokenIn < hop.tokenOut, amount, to);
            } else {
                (PoolKey memory key, bool zeroForOne) = _v4Key(hop, tokenIn);
                amount = unlocked ? _v4SwapSettled(key, zeroForOne, amount, to) : _swapV4InUnlock(key, zeroForOne, amount, to);
            }
            tokenIn = hop.tokenOut;
        }
        return amount;
    }

    /// A V4 hop after the first of a cycle that did not start in V4: one unlock of its own, whose
    /// callback swaps, settles the input from this contract and takes the output to `to`.
    function _swapV4InUnlock(PoolKey memory key, bool zeroForOne, uint256 amountIn, address to)
        private
        returns (uint256 amountOut)
    {
        v4Unlock = V4_ONE_HOP;
        bytes memory ret =
            _callReturning(poolManager, abi.encodeWithSelector(V4_UNLOCK, abi.encode(key, zeroForOne, amountIn, to)));
        if (v4Unlock != V4_IDLE) revert UnexpectedCallback();
        // unlock returns the callback's bytes, ABI-encoded
        amountOut = abi.decode(abi.decode(ret, (bytes)), (uint256));
    }

    /// A V4 swap inside an unlock, its input paid now from this contract's balance: swap, take the
    /// output to `to`, then settle the input.
    function _v4SwapSettled(PoolKey memory key, bool zeroForOne, uint256 amountIn, address to)
        private
        returns (uint256 amountOut)
    {
        amountOut = _v4Swap(key, zeroForOne, amountIn, to);
        _v4Settle(zeroForOne ? key.currency0 : key.currency1, amountIn);
    }

    /// A V4 exact-input swap inside an unlock: takes the output to `to` (native ETH wrapped first)
    /// and leaves the input owed to the PoolManager (settled by the caller). Reverts unless the pool
    /// takes all of amountIn.
    function _v4Swap(PoolKey memory key, bool zeroForOne, uint256 amountIn, address to)
        private
        returns (uint256 amountOut)
    {
        if (amountIn > uint256(int256(type(int128).max))) revert AmountTooLarge(amountIn);
        amountOut = _v4SwapOutput(key, zeroForOne, amountIn);
        address currencyOut = zeroForOne ? key.currency1 : key.currency0;
        if (currencyOut == address(0)) {
            _call(poolManager, abi.encodeWithSelector(V4_TAKE, address(0), address(this), amountOut));
            _callWithValue(weth, abi.encodeWithSelector(WETH_DEPOSIT), amountOut);
            if (to != address(this)) _transfer(weth, to, amountOut);
        } else {
            _call(poolManager, abi.encodeWithSelector(V4_TAKE, currencyOut, to, amountOut));
        }
    }

    /// PoolManager.swap of exactly amountIn on `key` (hookData empty); returns the output it
    /// credits. The BalanceDelta already holds the hook's return deltas, if any.
    function _v4SwapOutput(PoolKey memory key, bool zeroForOne, uint256 amountIn) private returns (uint256 amountOut) {
        SwapParams memory params =
            SwapParams(zeroForOne, -int256(amountIn), zeroForOne ? MIN_SQRT_PRICE_LIMIT : MAX_SQRT_PRICE_LIMIT);
        int256 delta = abi.decode(_callReturning(poolManager, abi.encodeWithSelector(V4_SWAP, key, params, bytes(""))), (int256));
        // BalanceDelta: amount0 in the high 128 bits, amount1 in the low 128 (this contract's view:
        // negative is owed to the PoolManager)
        (int128 owedSide, int128 givenSide) =
            zeroForOne ? (int128(delta >> 128), int128(delta)) : (int128(delta), int128(delta >> 128));
        uint256 taken = uint256(-int256(owedSide));
        // A partial fill would leave input stranded here.
        if (taken != amountIn) revert PartialFill(amountIn, taken);
        amountOut = uint256(int256(givenSide));
    }

    /// Pays the PoolManager `amount` of `currency` owed in the current unlock: sync, transfer,
    /// settle; native ETH (address(0)): WETH unwrapped here, settled as value.
    function _v4Settle(address currency, uint256 amount) private {
        if (currency == address(0)) {
            _call(weth, abi.encodeWithSelector(WETH_WITHDRAW, amount));
            _callWithValue(poolManager, abi.encodeWithSelector(V4_SETTLE), amount);
        } else {
            _call(poolManager, abi.encodeWithSelector(V4_SYNC, currency));
            _transfer(currency, poolManager, amount);
            _call(poolManager, abi.encodeWithSelector(V4_SETTLE));
        }
    }

    /// V3 hop after the first, exact input; the pool is paid from this contract in its callback.
    function _swapV3(address pool, address tokenIn, bool zeroForOne, uint256 amountIn, address to)
        private
        returns (uint256 amountOut)
    {
        armedPool = pool;
        bytes4 selector = V3_SWAP;
        uint256 taken;
        bool answered;
        // amountIn is a previous hop's output: at most a V3 pool's int256 or a V2 pair's uint112
        assembly ("memory-safe") {
            // pool.swap(to, zeroForOne, amountIn, sqrtPriceLimit, abi.encode(tokenIn))
            let m := mload(0x40)
            mstore(m, selector)
            mstore(add(m, 0x04), to)
            mstore(add(m, 0x24), zeroForOne)
            mstore(add(m, 0x44), amountIn)
            switch zeroForOne
            case 1 { mstore(add(m, 0x64), MIN_SQRT_PRICE_LIMIT) }
            default { mstore(add(m, 0x64), MAX_SQRT_PRICE_LIMIT) }
            mstore(add(m, 0x84), 0xa0)
            mstore(add(m, 0xa4), 0x20)
            mstore(add(m, 0xc4), tokenIn)
            if iszero(call(gas(), pool, 0, m, 0xe4, 0, 0)) {
                returndatacopy(m, 0, returndatasize())
                revert(m, returndatasize())
            }
            // (int256 amount0, int256 amount1); an address without code returns nothing
            answered := gt(returndatasize(), 0x3f)
            if answered {
                returndatacopy(m, 0, 0x40)
                // the input side is amount0 when zeroForOne; the output side is negative
                taken := mload(add(m, shl(5, iszero(zeroForOne))))
                amountOut := sub(0, mload(add(m, shl(5, zeroForOne))))
            }
        }
        if (!answered) revert InvalidPool(pool);
        // A partial fill would leave input stranded here.
        if (taken != amountIn) revert PartialFill(amountIn, taken);
    }

    /// Transfers `amount` of `token` from this contract to `to`.
    function _transfer(address token, address to, uint256 amount) private {
        bool ok;
        assembly ("memory-safe") {
            let m := mload(0x40)
            // transfer(address,uint256)
            mstore(m, 0xa9059cbb00000000000000000000000000000000000000000000000000000000)
            mstore(add(m, 0x04), to)
            mstore(add(m, 0x24), amount)
            ok := call(gas(), token, 0, m, 0x44, 0x00, 0x20)
            // returned true, or returned nothing from an account with code (USDT-style)
            ok := and(ok, or(and(gt(returndatasize(), 0x1f), eq(mload(0x00), 1)), and(iszero(returndatasize()), gt(extcodesize(token), 0))))
        }
        if (!ok) revert TransferFailed(token);
    }

    /// Calls target with data and returns what it returned; a revert is bubbled up unchanged. An
    /// address without code returns nothing, which the caller's decoding then refuses.
    function _callReturning(address target, bytes memory data) private returns (bytes memory ret) {
        bool ok;
        (ok, ret) = target.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
    }

    /// Calls target with data; a revert is bubbled up with its data unchanged. Return data unused.
    function _call(address target, bytes memory data) private {
        _callWithValue(target, data, 0);
    }

    /// _call sending `value` wei.
    function _callWithValue(address target, bytes memory data, uint256 value) private {
        assembly ("memory-safe") {
            if iszero(call(gas(), target, value, add(data, 0x20), mload(data), 0, 0)) {
                let m := mload(0x40)
                returndatacopy(m, 0, returndatasize())
                revert(m, returndatasize())
            }
        }
    }
}
