import IdpPrimitives

// The job queue's planted bugs (`PlantedBug.sdkQueue…`), beside it: one hook per site; a release
// build compiles each to the unplanted behaviour.
extension JobQueue {
    #if DEBUG
    /// An empty queue with `planted` on.
    /// - Parameter planted: `PlantedBug.sdkQueue…`.
    init(planting planted: PlantedBugSwitch) {
        self.init()
        self.planted = planted
    }

    /// In ``popFirst()``: the job a planted queue copies out, leaving it in its slot
    /// (`sdkQueueKeepsPoppedJobs`); `nil`: moved out as it should be.
    func plantedKeptJob(_ job: WorkerPool.Job?) -> WorkerPool.Job? {
        planted.isOn(.sdkQueueKeepsPoppedJobs) ? job : nil
    }

    /// In `grow()`: the slot a planted queue copies the ring from (`sdkQueueGrowsFromSlotZero`);
    /// `nil`: from its head.
    var plantedGrowthStart: Int? { planted.isOn(.sdkQueueGrowsFromSlotZero) ? 0 : nil }
    #else
    @inline(__always)
    func plantedKeptJob(_ job: WorkerPool.Job?) -> WorkerPool.Job? { nil }
    @inline(__always)
    var plantedGrowthStart: Int? { nil }
    #endif
}
