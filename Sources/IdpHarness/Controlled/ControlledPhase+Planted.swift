import IdpPrimitives

// The controlled phase's planted bugs (`PlantedBug.harness…`), beside it: one hook per site; a
// release build compiles each to the unplanted behaviour.
extension ControlledPhase.Settings {
    #if DEBUG
    /// Whether a planted phase grades a schedule that went through work it does not schedule as
    /// explored (`harnessGradesUncontrolledAsExplored`).
    var plantedGradesUncontrolledAsExplored: Bool { planted == .harnessGradesUncontrolledAsExplored }
    /// Whether a planted phase's PCT steps follow every decision of the first schedule
    /// (`harnessStepsFollowEveryDecision`).
    var plantedStepsFollowEveryDecision: Bool { planted == .harnessStepsFollowEveryDecision }
    /// Whether a planted phase's shrinking takes a try that was not fully controlled as a pass
    /// (`harnessShrinkTakesStallsAsPasses`).
    var plantedShrinkTakesStallsAsPasses: Bool { planted == .harnessShrinkTakesStallsAsPasses }
    /// Whether a planted phase's shrinking searches the prefix among the decisions of the schedule
    /// as found (`harnessShrinksAlongTheFoundSchedule`).
    var plantedShrinksAlongTheFoundSchedule: Bool { planted == .harnessShrinksAlongTheFoundSchedule }

    /// The run's locks, made by `make` under the phase's planted bug (`harnessLocksIgnoreHolders`,
    /// `harnessTakesRunnableForBlocked` reach them).
    func plantedLocks(_ make: () -> ScheduledLocks) -> ScheduledLocks {
        PlantedBugSwitch.$inTask.withValue(PlantedBugSwitch(planted), operation: make)
    }
    #else
    @inline(__always) var plantedGradesUncontrolledAsExplored: Bool { false }
    @inline(__always) var plantedStepsFollowEveryDecision: Bool { false }
    @inline(__always) var plantedShrinkTakesStallsAsPasses: Bool { false }
    @inline(__always) var plantedShrinksAlongTheFoundSchedule: Bool { false }
    @inline(__always) func plantedLocks(_ make: () -> ScheduledLocks) -> ScheduledLocks { make() }
    #endif
}

extension ScheduledLocks {
    #if DEBUG
    /// Whether a planted lock table gives a held lock to the next asker as well
    /// (`harnessLocksIgnoreHolders`).
    var plantedIgnoresHolders: Bool { planted.isOn(.harnessLocksIgnoreHolders) }

    /// What a planted watchdog takes the OS to say of a thread (`harnessTakesRunnableForBlocked`:
    /// every thread it looks at twice in one turn is blocked, whatever the OS says, on a lock it
    /// holds itself, a wait no other thread can end); `observe` when the bug is off.
    static func plantedObserve(_ observe: @escaping @Sendable (Int32) -> ThreadActivity) -> @Sendable (Int32) -> ThreadActivity {
        guard PlantedBugSwitch.inTask.isOn(.harnessTakesRunnableForBlocked) else { return observe }
        return { tid in ThreadActivity.read(tid) == .gone ? .gone : .blocked("planted: a thread slow to reach its next point", owner: tid) }
    }
    #else
    @inline(__always) var plantedIgnoresHolders: Bool { false }
    @inline(__always)
    static func plantedObserve(_ observe: @escaping @Sendable (Int32) -> ThreadActivity) -> @Sendable (Int32) -> ThreadActivity { observe }
    #endif
}
