// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Uniswap V4 hooks of the devnet (scripts/devnet/v4-hooks.ts), one of each kind the quote search
/// treats differently (README "Venues"):
/// - DevnetSwapCounterHook: afterSwap only, without a return delta, so it cannot change a swap's
///   amounts: the search quotes its pool with the exact math. Its pool has a dynamic fee that its
///   owner sets in the PoolManager (updateDynamicLPFee), which the math reads from slot0.
/// - DevnetDirectionalFeeHook: beforeSwap with an LP-fee override, a different fee per direction:
///   the search cannot model it from the pool's state, so its pool is quoted by executing the route.
/// A V4 hook's permissions are the low 14 bits of its address (v4-core Hooks.sol), so each is
/// deployed by DevnetCreate2Deployer at a CREATE2 salt the build mines for those bits; each checks
/// its own address in its constructor.
///
/// The structs and selectors are v4-core's (IHooks, PoolKey, SwapParams): Currency and IHooks are
/// addresses in the ABI, BalanceDelta and BeforeSwapDelta int256. No interface is declared, so the
/// compile script emits no artifact for a generic name.

/// v4-core PoolKey
struct DevnetPoolKey {
    address currency0;
    address currency1;
    uint24 fee;
    int24 tickSpacing;
    address hooks;
}

/// v4-core SwapParams
struct DevnetSwapParams {
    bool zeroForOne;
    int256 amountSpecified;
    uint160 sqrtPriceLimitX96;
}

/// @title DevnetCreate2Deployer
/// @notice CREATE2 with the caller's salt and init code: the devnet build deploys hooks through it
/// at addresses whose low bits are their permissions.
contract DevnetCreate2Deployer {
    error DeployFailed();

    event Deployed(address indexed deployed, bytes32 salt);

    function deploy(bytes32 salt, bytes calldata initCode) external returns (address deployed) {
        bytes memory code = initCode;
        assembly ("memory-safe") {
            deployed := create2(0, add(code, 0x20), mload(code), salt)
        }
        if (deployed == address(0)) revert DeployFailed();
        emit Deployed(deployed, salt);
    }
}

/// Shared by both hooks: the PoolManager they answer, their permission bits and the dynamic-fee call.
abstract contract DevnetHookBase {
    /// v4-core Hooks.ALL_HOOK_MASK: the permission bits of a hook's address
    uint160 internal constant ALL_HOOK_MASK = (1 << 14) - 1;
    uint160 internal constant AFTER_INITIALIZE_FLAG = 1 << 12;
    uint160 internal constant BEFORE_SWAP_FLAG = 1 << 7;
    uint160 internal constant AFTER_SWAP_FLAG = 1 << 6;
    /// LPFeeLibrary.OVERRIDE_FEE_FLAG: beforeSwap's fee is used for this swap only
    uint24 internal constant OVERRIDE_FEE_FLAG = 0x400000;
    bytes4 internal constant UPDATE_DYNAMIC_LP_FEE =
        bytes4(keccak256("updateDynamicLPFee((address,address,uint24,int24,address),uint24)"));

    address public immutable poolManager;

    error NotPoolManager();
    /// the hook is not at an address whose low bits are exactly its permissions
    error WrongHookAddress(address hook, uint160 expectedFlags);
    error FeeUpdateFailed();

    constructor(address poolManager_, uint160 flags) {
        poolManager = poolManager_;
        if (uint160(address(this)) & ALL_HOOK_MASK != flags) revert WrongHookAddress(address(this), flags);
    }

    modifier onlyPoolManager() {
        if (msg.sender != poolManager) revert NotPoolManager();
        _;
    }

    /// sets a dynamic-fee pool's LP fee in the PoolManager (only the key's hook may)
    function _setLpFee(DevnetPoolKey memory key, uint24 fee) internal {
        (bool ok,) = poolManager.call(abi.encodeWithSelector(UPDATE_DYNAMIC_LP_FEE, key, fee));
        if (!ok) revert FeeUpdateFailed();
    }
}

/// @title DevnetSwapCounterHook
/// @notice afterSwap only: counts the swaps of each pool and the input they took. Its owner sets
/// the LP fee of its dynamic-fee pools (a fee the swap math reads from slot0: nothing per swap).
contract DevnetSwapCounterHook is DevnetHookBase {
    address public immutable owner;
    /// PoolId => swaps seen
    mapping(bytes32 => uint256) public swapCount;

    error NotOwner();

    constructor(address poolManager_, address owner_) DevnetHookBase(poolManager_, AFTER_SWAP_FLAG) {
        owner = owner_;
    }

    function setLpFee(DevnetPoolKey calldata key, uint24 fee) external {
        if (msg.sender != owner) revert NotOwner();
        _setLpFee(key, fee);
    }

    function afterSwap(address, DevnetPoolKey calldata key, DevnetSwapParams calldata, int256, bytes calldata)
        external
        onlyPoolManager
        returns (bytes4, int128)
    {
        swapCount[keccak256(abi.encode(key))] += 1;
        return (this.afterSwap.selector, 0);
    }
}

/// @title DevnetDirectionalFeeHook
/// @notice beforeSwap returns an LP-fee override per direction (feeZeroForOne, feeOneForZero), so
/// the fee a swap pays depends on the swap, not on the pool's state; afterInitialize stores
/// feeZeroForOne as the pool's LP fee (what slot0 shows, and what an estimate from it would use).
contract DevnetDirectionalFeeHook is DevnetHookBase {
    uint24 public immutable feeZeroForOne;
    uint24 public immutable feeOneForZero;

    constructor(address poolManager_, uint24 feeZeroForOne_, uint24 feeOneForZero_)
        DevnetHookBase(poolManager_, AFTER_INITIALIZE_FLAG | BEFORE_SWAP_FLAG)
    {
        feeZeroForOne = feeZeroForOne_;
        feeOneForZero = feeOneForZero_;
    }

    function afterInitialize(address, DevnetPoolKey calldata key, uint160, int24)
        external
        onlyPoolManager
        returns (bytes4)
    {
        _setLpFee(key, feeZeroForOne);
        return this.afterInitialize.selector;
    }

    function beforeSwap(address, DevnetPoolKey calldata, DevnetSwapParams calldata params, bytes calldata)
        external
        view
        onlyPoolManager
        returns (bytes4, int256, uint24)
    {
        uint24 fee = params.zeroForOne ? feeZeroForOne : feeOneForZero;
        return (this.beforeSwap.selector, 0, fee | OVERRIDE_FEE_FLAG);
    }
}
