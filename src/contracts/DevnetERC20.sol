// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title DevnetERC20
/// @notice A plain ERC-20 for the embedded devnet: configurable name, symbol and decimals, and a
/// mint that only the deployer may call (the devnet builder mints the liquidity and the dev
/// accounts' balances with it). No hooks, no fees, no rebasing, so swaps through it behave like
/// swaps through the common mainnet tokens.
/// @dev Storage layout is fixed on purpose (balanceOf at slot 0, allowance at slot 1) so that
/// balance and allowance overrides can be written without slot discovery. An allowance of
/// type(uint256).max is never decreased, like WETH9 and OpenZeppelin 5, which keeps the gas of a
/// swap from a max-approved account equal to mainnet's.
contract DevnetERC20 {
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    uint256 public totalSupply;
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    address public immutable minter;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        minter = msg.sender;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == minter, "DevnetERC20: only minter");
        require(to != address(0), "DevnetERC20: mint to zero");
        totalSupply += amount;
        // cannot overflow: totalSupply bounds every balance
        unchecked {
            balanceOf[to] += amount;
        }
        emit Transfer(address(0), to, amount);
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= amount, "DevnetERC20: insufficient allowance");
            unchecked {
                allowance[from][msg.sender] = allowed - amount;
            }
        }
        _transfer(from, to, amount);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) private {
        require(to != address(0), "DevnetERC20: transfer to zero");
        uint256 balance = balanceOf[from];
        require(balance >= amount, "DevnetERC20: insufficient balance");
        unchecked {
            balanceOf[from] = balance - amount;
            balanceOf[to] += amount;
        }
        emit Transfer(from, to, amount);
    }
}
