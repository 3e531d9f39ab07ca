/// Work too heavy to do while holding a lock on the flow path: the product notes it where it is
/// done (``LockProfiler/noteHeavyWork(_:)``), and while lock profiling is on each note is counted
/// against the labelled locks its thread holds then. A hold time shows heavy work only when it
/// runs long; a note shows it every time, on any machine.
@usableFromInline
package enum HeavyWork: UInt8, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    /// A SHA-256 digest.
    case hash
    /// Random bytes drawn (a token, a salt, an id).
    case random
    /// A page or form rendered.
    case render
    /// A large block allocated (a chunk of a log or a table).
    case largeAllocation

    @usableFromInline package var description: String {
        switch self {
        case .hash: "SHA-256"
        case .random: "randomness"
        case .render: "rendering"
        case .largeAllocation: "large allocation"
        }
    }

    /// The kinds whose bits (one per raw value) are set in `bits`.
    static func kinds(in bits: UInt64) -> Set<HeavyWork> {
        Set(allCases.filter { bits & 1 << UInt64($0.rawValue) != 0 })
    }

    @usableFromInline package static func < (lhs: HeavyWork, rhs: HeavyWork) -> Bool { lhs.rawValue < rhs.rawValue }
}
