import IdpPrimitives
import IdpSdk

/// One user's credentials as an immutable value: the simplest thread-safe provider, and the floor
/// the others are measured against.
///
/// ```swift
/// let provider = StaticCredentials([IdpSdkConstants.USERNAME: "alice", IdpSdkConstants.PASSWORD: "s3cret"])
/// ```
///
/// Threading: immutable, so any number of threads may call it at once with no synchronisation.
/// It keeps one copy of the values per `ThreadStripe` (keys and values of more than 15 UTF-8
/// bytes copied too), made at init, and answers each thread from its stripe's copy: the reference
/// count an answer writes is one only threads of that stripe touch, not one every SDK thread
/// writes. Cost: no lock; when the values are exactly the asked fields, a check of the fields and
/// no allocation; otherwise one dictionary lookup per requested field and the answer.
/// It answers exactly the fields a step requests; a requested field it has no value for ends the
/// flow with ``CredentialProviderError/Code/missingValue``.
public struct StaticCredentials: IdpSdkNonBlockingProvider, Sendable, CustomStringConvertible {
    /// The values by field id.
    public let values: [String: String]
    private let copies: StripeCopies

    /// A provider that answers `values`.
    /// - Parameter values: The values by field id.
    public init(_ values: [String: String]) {
        self.values = values
        copies = StripeCopies(values)
    }

    /// Answers exactly the asked fields from ``values``, on the calling thread, without a lock.
    ///
    /// - Parameter interactionData: The step to answer.
    /// - Returns: The asked fields' values, or ``CredentialProviderError/Code/missingValue`` for an
    ///   asked field without one.
    public func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        copies.withCurrent { .answering(interactionData, from: $0) }
    }

    /// Names the fields, never their values.
    public var description: String { "StaticCredentials(fields: \(values.keys.sorted()))" }
}

/// One copy of a dictionary per `ThreadStripe`, each built with storage of its own.
private final class StripeCopies: Sendable {
    /// A copy, in an object of its own: borrowed through `Unmanaged`, its `let` is read without
    /// retaining the dictionary an extra time.
    private final class Copy: Sendable {
        let values: [String: String]
        init(_ values: [String: String]) { self.values = values }
    }

    /// Owns the copies.
    private let owned: [Copy]
    /// The same copies, unretained. Sound as `nonisolated(unsafe)`: written once in `init`, freed
    /// in `deinit`, only read in between; `owned` keeps every copy alive as long as `self`.
    nonisolated(unsafe) private let copies: UnsafeMutablePointer<Unmanaged<Copy>>
    private let count: Int
    /// Allocations made between the copies and kept alive with them, so that two stripes'
    /// dictionaries are not neighbours in memory (where one stripe's reference-count writes would
    /// evict the line the other reads). Malloc places allocations made in a row next to each other
    /// as a rule, not by guarantee.
    private let spacers: [[UInt8]]

    init(_ values: [String: String]) {
        count = ThreadStripe.count
        var owned: [Copy] = []
        var spacers: [[UInt8]] = []
        for _ in 0..<count {
            spacers.append([UInt8](repeating: 0, count: 256))
            owned.append(Copy(UnsharedCopy.of(values)))
        }
        spacers.append([UInt8](repeating: 0, count: 256))
        self.owned = owned
        self.spacers = spacers
        copies = .allocate(capacity: count)
        copies.initialize(from: owned.map { Unmanaged.passUnretained($0) }, count: count)
    }

    deinit {
        copies.deinitialize(count: count)
        copies.deallocate()
    }

    /// `body` of the calling thread's stripe's copy.
    @inline(__always)
    func withCurrent<Result>(_ body: ([String: String]) -> Result) -> Result {
        copies[ThreadStripe.current & (count - 1)]._withUnsafeGuaranteedRef { body($0.values) }
    }
}
