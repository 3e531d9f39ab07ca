/// One provider strategy at one thread count.
package struct ProviderRow: Codable, Sendable, Equatable {
    /// The strategy's name (a provider, or another SDK's pattern).
    package var strategy: String
    /// `"product"` (a provider of CredentialProviders) or `"peer"` (another SDK's pattern).
    package var kind: String
    /// Whether this is the recommended provider (`CredentialStore`).
    package var recommended: Bool
    /// The OS threads calling at once.
    package var threads: Int
    /// Wall-clock nanoseconds per call of all threads together.
    package var nsPerCall: Double
    /// The calls all threads made in the measured time.
    package var calls: UInt64

    /// A provider row.
    /// - Parameters:
    ///   - strategy: The strategy's name.
    ///   - kind: `"product"` or `"peer"`.
    ///   - recommended: Whether this is the recommended provider.
    ///   - threads: The OS threads calling at once.
    ///   - nsPerCall: Wall-clock nanoseconds per call of all threads together.
    ///   - calls: The calls all threads made.
    package init(strategy: String, kind: String, recommended: Bool, threads: Int, nsPerCall: Double, calls: UInt64) {
        self.strategy = strategy
        self.kind = kind
        self.recommended = recommended
        self.threads = threads
        self.nsPerCall = nsPerCall
        self.calls = calls
    }

    enum CodingKeys: String, CodingKey { case strategy, kind, recommended, threads, nsPerCall = "ns_per_call", calls }
}

/// One floor (the cheapest synchronized operation of its kind) at one thread count.
package struct FloorRow: Codable, Sendable, Equatable {
    /// The name prefix of the rows of idp-bench's `idp` section (the IDP's own operations, set
    /// against the Mutex floor measured with them), which are shown in a table of their own.
    package static let idpPrefix = "IDP: "
    /// The floor the `idp` section's operations are set against.
    package static let idpFloor = idpPrefix + "Mutex + dictionary lookup"

    /// Whether this row belongs to the `idp` section.
    package var isIdpOperation: Bool { name.hasPrefix(Self.idpPrefix) }

    /// The floor's or the operation's name.
    package var name: String
    /// The OS threads running it at once.
    package var threads: Int
    /// Wall-clock nanoseconds per operation of all threads together.
    package var nsPerOp: Double
    /// The operations all threads made in the measured time.
    package var ops: UInt64

    /// A floor row.
    /// - Parameters:
    ///   - name: The floor's or the operation's name.
    ///   - threads: The OS threads running it at once.
    ///   - nsPerOp: Wall-clock nanoseconds per operation of all threads together.
    ///   - ops: The operations all threads made.
    package init(name: String, threads: Int, nsPerOp: Double, ops: UInt64) {
        self.name = name
        self.threads = threads
        self.nsPerOp = nsPerOp
        self.ops = ops
    }

    enum CodingKeys: String, CodingKey { case name, threads, nsPerOp = "ns_per_op", ops }
}
