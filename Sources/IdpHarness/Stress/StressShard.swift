extension SystemStress {
    /// One of `count` disjoint parts of a campaign's runs: shard `index` makes the campaign's runs
    /// `index`, `index + count`, `index + 2 × count`, … (numbered from 1), each with the seeds the
    /// unsharded campaign gives that run. So N machines of a CI matrix, each running one shard of
    /// the same seed with the same budget, together make exactly the runs one machine would make
    /// with N times the budget, and ``Report/merged(_:)`` puts their reports together.
    ///
    /// ```swift
    /// var options = SystemStress.Options(seed: 7, runs: 500)
    /// options.shard = try SystemStress.Shard(parsing: "2/4")   // runs 2, 6, 10, …
    /// ```
    public struct Shard: Sendable, Hashable, CustomStringConvertible {
        /// Which part, from 1.
        public let index: Int
        /// How many parts the campaign is split into.
        public let count: Int

        /// The whole campaign: every run.
        public static let whole = Shard(unchecked: 1, of: 1)

        private init(unchecked index: Int, of count: Int) {
            self.index = index
            self.count = count
        }

        /// Part `index` of `count`.
        /// - Throws: ``StressError`` unless 1 ≤ `index` ≤ `count`.
        public init(_ index: Int, of count: Int) throws(StressError) {
            guard count >= 1, (1...count).contains(index) else {
                throw StressError("a shard is K/N with 1 ≤ K ≤ N; got \(index)/\(count)")
            }
            self.init(unchecked: index, of: count)
        }

        /// The shard `K/N` names.
        /// - Throws: ``StressError`` when `text` is not `K/N` with 1 ≤ K ≤ N.
        public init(parsing text: String) throws(StressError) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
                throw StressError("a shard is K/N (such as 2/4); got '\(text)'")
            }
            try self.init(index, of: count)
        }

        /// Whether the campaign's run `run` (from 1) is this shard's.
        public func owns(run: Int) -> Bool { (run - 1) % count == index - 1 }

        /// `K/N`.
        public var description: String { "\(index)/\(count)" }
    }
}
