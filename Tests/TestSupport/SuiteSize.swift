import Foundation

/// The sizes of the suite's heaviest tests: the full ones where `IDPHARNESS_FULL_SUITE=1` asks for
/// them, smaller ones in a plain `swift test` (and CI). Each smaller size still fails
/// what its test exists to catch; the full ones show it with a margin.
public enum SuiteSize {
    /// Whether the full sizes are asked for.
    public static let isFull = ProcessInfo.processInfo.environment["IDPHARNESS_FULL_SUITE"] == "1"

    /// `full` where the full sizes are asked for, `smaller` otherwise.
    public static func pick<T>(_ smaller: T, full: T) -> T { isFull ? full : smaller }
}
