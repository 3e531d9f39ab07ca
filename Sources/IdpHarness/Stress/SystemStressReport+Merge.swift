extension SystemStress.Report {
    /// The report of a campaign's shards together: every count summed (runs, flows, MC events,
    /// decisions, faults, each invariant's triggers, judgments and excused judgments,
    /// interleavings, partially controlled and undecided runs), the runs not exercised listed, the
    /// earliest failure in the campaign's run order with the shard that found it, the earliest
    /// interleaving reached, and the longest shard's wall time (the shards ran side by side).
    ///
    /// ```swift
    /// let campaign = try SystemStress.Report.merged([shard1, shard2])   // as one run of both budgets
    /// ```
    /// - Throws: ``StressError`` when there is no report, when the reports are of different
    ///   campaigns (``campaign``) or split into different shard counts, or when a shard comes twice.
    public static func merged(_ reports: [Self]) throws(StressError) -> Self {
        guard let first = reports.first else { throw StressError("nothing to merge: no report") }
        let shards = reports.flatMap(\.shards)
        for report in reports where report.campaign != first.campaign {
            throw StressError("the reports are of different campaigns: '\(first.campaign)' and '\(report.campaign)'")
        }
        guard Set(shards.map(\.count)).count == 1 else {
            throw StressError("the reports split their campaign differently: shards \(shards.map(\.description).joined(separator: ", "))")
        }
        guard Set(shards).count == shards.count else {
            throw StressError("a shard comes twice: \(shards.map(\.description).sorted().joined(separator: ", "))")
        }
        var merged = Self()
        merged.campaign = first.campaign
        merged.shards = shards.sorted { $0.index < $1.index }
        for report in reports { merged.add(report) }
        return merged
    }

    /// Adds `report`'s counts and picks the earlier of its failure and interleaving reached.
    private mutating func add(_ report: Self) {
        runs += report.runs
        flows += report.flows
        mcEvents += report.mcEvents
        decisions += report.decisions
        partiallyControlledRuns += report.partiallyControlledRuns
        undecidedFreeRuns += report.undecidedFreeRuns
        for (fault, count) in report.faultsInjected { faultsInjected[fault, default: 0] += count }
        tally.add(report.tally)
        unexercised += report.unexercised
        partialControlExample = partialControlExample ?? report.partialControlExample
        undecidedExample = undecidedExample ?? report.undecidedExample
        if let found = report.reached, found.run < reached?.run ?? .max { reached = found }
        if let failed = report.failure, failed.run < failure?.run ?? .max { failure = failed }
        seconds = max(seconds, report.seconds)
    }
}
