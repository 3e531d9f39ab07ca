/// Memory and threads with many flows parked at the IDP.
package struct MemoryRow: Codable, Sendable, Equatable {
    /// The flows parked at the IDP at once.
    package var parkedFlows: Int
    /// Resident bytes per parked flow.
    package var bytesPerFlow: Double
    /// The process's OS threads while the flows were parked.
    package var threads: Int
    /// The SDK's `maximumWorkerThreads`.
    package var poolLimit: Int
    /// Resident bytes before the flows started.
    package var rssBeforeBytes: UInt64
    /// Resident bytes with every flow parked.
    package var rssParkedBytes: UInt64

    /// A memory row.
    /// - Parameters:
    ///   - parkedFlows: The flows parked at once.
    ///   - bytesPerFlow: Resident bytes per parked flow.
    ///   - threads: The OS threads while they were parked.
    ///   - poolLimit: The SDK's worker thread limit.
    ///   - rssBeforeBytes: Resident bytes before.
    ///   - rssParkedBytes: Resident bytes with every flow parked.
    package init(parkedFlows: Int, bytesPerFlow: Double, threads: Int, poolLimit: Int, rssBeforeBytes: UInt64, rssParkedBytes: UInt64) {
        self.parkedFlows = parkedFlows
        self.bytesPerFlow = bytesPerFlow
        self.threads = threads
        self.poolLimit = poolLimit
        self.rssBeforeBytes = rssBeforeBytes
        self.rssParkedBytes = rssParkedBytes
    }

    enum CodingKeys: String, CodingKey {
        case parkedFlows = "parked_flows", bytesPerFlow = "bytes_per_flow", threads, poolLimit = "pool_limit"
        case rssBeforeBytes = "rss_before_bytes", rssParkedBytes = "rss_parked_bytes"
    }
}
