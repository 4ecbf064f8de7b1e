// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Chainlink's AggregatorV3Interface, as price consumers call it.
interface AggregatorV3Interface {
    function decimals() external view returns (uint8);

    function description() external view returns (string memory);

    function version() external view returns (uint256);

    function getRoundData(uint80 _roundId)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/// @title DevnetPriceFeed
/// @notice A Chainlink-style price feed for the embedded devnet (the service converts profits to
/// USD with it). The owner can publish new rounds so tests can move the price.
/// @dev The first round's timestamp is a constructor argument rather than block.timestamp: the
/// devnet is built at fixed times before its genesis, and a feed that looks hours stale at
/// genesis would trip staleness checks.
contract DevnetPriceFeed is AggregatorV3Interface {
    struct Round {
        int256 answer;
        uint64 startedAt;
        uint64 updatedAt;
    }

    uint256 public constant override version = 4;
    uint8 public immutable override decimals;
    address public immutable owner;
    string public override description;
    uint80 public latestRound;
    mapping(uint80 => Round) private rounds;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer, uint64 initialUpdatedAt) {
        decimals = decimals_;
        description = description_;
        owner = msg.sender;
        _publish(initialAnswer, initialUpdatedAt);
    }

    function updateAnswer(int256 answer) external {
        require(msg.sender == owner, "DevnetPriceFeed: only owner");
        _publish(answer, uint64(block.timestamp));
    }

    function getRoundData(uint80 roundId)
        external
        view
        override
        returns (uint80, int256, uint256, uint256, uint80)
    {
        Round memory r = rounds[roundId];
        // Chainlink reverts for rounds that do not exist
        require(r.updatedAt != 0, "No data present");
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }

    function latestRoundData() external view override returns (uint80, int256, uint256, uint256, uint80) {
        uint80 roundId = latestRound;
        Round memory r = rounds[roundId];
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }

    /// @notice Chainlink's legacy AggregatorInterface view, still read by many integrations.
    function latestAnswer() external view returns (int256) {
        return rounds[latestRound].answer;
    }

    function _publish(int256 answer, uint64 timestamp) private {
        require(answer > 0, "DevnetPriceFeed: answer must be positive");
        uint80 roundId = latestRound + 1;
        latestRound = roundId;
        rounds[roundId] = Round(answer, timestamp, timestamp);
        emit AnswerUpdated(answer, roundId, timestamp);
    }
}
