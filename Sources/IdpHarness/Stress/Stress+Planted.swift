import IdpPrimitives
import IdpSdk
import IdpServer
import McSdk

// The stress's planted bugs, beside it: the product's (`PlantedBug.inTheSystem`), handed to the
// configurations the stress makes, and the harness's own (`PlantedBug.harness…`) in its scheduler
// and watchdog. One hook per site; a release build compiles each to the unplanted behaviour.
extension SystemStress.Options {
    #if DEBUG
    /// In the world's making: plants ``plantedBug`` in the IDP's configuration.
    func plant(in configuration: inout IdpServer.Configuration) { configuration.plantedBug = PlantedBugSwitch(plantedBug) }
    /// In the world's making: plants ``plantedBug`` in the SDK's configuration.
    func plant(in configuration: inout IdpSdkService.Configuration) { configuration.plantedBug = PlantedBugSwitch(plantedBug) }
    /// In a device's making: plants ``plantedBug`` in its MasterController's configuration.
    func plant(in configuration: inout MasterController.Configuration) { configuration.plantedBug = PlantedBugSwitch(plantedBug) }
    /// In the judging: whether the planted stress never judges `invariant` (``unjudged``, as a
    /// check skipped by a wrong filter would be).
    func plantedLeavesUnjudged(_ invariant: SystemStress.Invariant) -> Bool { unjudged == invariant }
    #else
    @inline(__always) func plant(in configuration: inout IdpServer.Configuration) {}
    @inline(__always) func plant(in configuration: inout IdpSdkService.Configuration) {}
    @inline(__always) func plant(in configuration: inout MasterController.Configuration) {}
    @inline(__always) func plantedLeavesUnjudged(_ invariant: SystemStress.Invariant) -> Bool { false }
    #endif
}

extension ControlledScheduler {
    #if DEBUG
    /// In the durable-wait check: whether a planted scheduler counts a wait with no owner as
    /// durable while other threads run (`harnessOwnerlessWaitIgnoresRunningThreads`).
    var plantedIgnoresRunningThreads: Bool { planted.isOn(.harnessOwnerlessWaitIgnoresRunningThreads) }
    #else
    @inline(__always) var plantedIgnoresRunningThreads: Bool { false }
    #endif
}

extension FreeRunMonitor {
    #if DEBUG
    /// In the watch: whether a planted watchdog takes the quiet world as stuck without asking the
    /// OS (`harnessFreeRunTakesRunnableForBlocked`).
    var plantedTakesRunnableForBlocked: Bool { planted.isOn(.harnessFreeRunTakesRunnableForBlocked) }
    /// Where the run's tasks go: whether a planted run leaves them on the Swift concurrency pool
    /// (`harnessFreeRunTasksOnThePool`).
    var plantedRunsTasksOnThePool: Bool { planted.isOn(.harnessFreeRunTasksOnThePool) }
    #else
    @inline(__always) var plantedTakesRunnableForBlocked: Bool { false }
    @inline(__always) var plantedRunsTasksOnThePool: Bool { false }
    #endif
}
