import Foundation
import IdpPrimitives

/// What a flow of a stress run sees: its index, its seams and its faults.
package final class StressContext: Sendable {
    /// The flow's index in the scenario.
    package let flow: Int
    private let participant: Int
    private let scheduler: ControlledScheduler?
    private let faults: FaultPlan
    private let fired: LockedValue<[FaultPlan.Site]>
    private let monitor: FreeRunMonitor?

    init(flow: Int, participant: Int, scheduler: ControlledScheduler?, faults: FaultPlan, fired: LockedValue<[FaultPlan.Site]>,
         monitor: FreeRunMonitor? = nil) {
        self.flow = flow
        self.participant = participant
        self.scheduler = scheduler
        self.faults = faults
        self.fired = fired
        self.monitor = monitor
    }

    /// A point where another flow may run first. Free-running, it does nothing.
    package func seam(_ name: String) { scheduler?.seam(participant, name) }

    /// Whether this flow runs under a scheduler.
    package var isControlled: Bool { scheduler != nil }

    /// Starts something that delivers its result later, on another thread (`start` gets the
    /// delivery), and waits for the first delivery: under control this flow parks and others go
    /// on until it comes; free-running it blocks its OS thread until the delivery, or until the
    /// free run's watchdog ends the wait (the run was stuck, or undecided: then `nil`); with no
    /// watchdog, for at most `limit` (then `nil`).
    package func wait<T: Sendable>(_ name: String, limit: Duration = .seconds(30), _ start: (@escaping @Sendable (T) -> Void) -> Void) -> T? {
        let box = LockedValue<T?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        let scheduler = self.scheduler, participant = self.participant
        start { value in
            let first = box.withLock { held -> Bool in
                guard held == nil else { return false }
                held = value
                return true
            }
            guard first else { return }
            if let scheduler { scheduler.unpark(participant) } else { semaphore.signal() }
        }
        if let scheduler {
            scheduler.park(participant, name)
        } else if let monitor {
            guard monitor.wait(participant, on: semaphore) else { return nil }
        } else if semaphore.wait(timeout: .now() + limit.timeInterval) == .timedOut {
            return nil
        }
        return box.withLock { $0 }
    }

    /// Runs `bodies` (async code: MC events) as participants of their own, one task each,
    /// started by this flow, and waits for all their results: under control, each body's task runs
    /// only on its turn and parks (suspends) where it awaits the network, and this flow parks
    /// meanwhile; free-running, they run as concurrent tasks on the free run's executor (the
    /// kit's threads, ``FreeRunMonitor/executor``) and this thread waits as ``wait(_:limit:_:)``
    /// does.
    package func runAsync<T: Sendable>(_ name: String, limit: Duration = .seconds(30), _ bodies: [@Sendable () async -> T]) -> [T]? {
        let results = LockedValue<[Int: T]>([:])
        let count = bodies.count
        let scheduler = self.scheduler, participant = self.participant, monitor = self.monitor
        return wait(name, limit: limit) { (deliver: @escaping @Sendable ([T]) -> Void) in
            for (index, body) in bodies.enumerated() {
                let run: @Sendable () async -> Void = {
                    let value = await body()
                    let all = results.withLock { results -> [T]? in
                        results[index] = value
                        return results.count == count ? (0..<count).map { results[$0]! } : nil
                    }
                    if let all { deliver(all) }
                }
                if let scheduler {
                    scheduler.spawnAsync(count == 1 ? name : "\(name)#\(index + 1)", parent: participant, run)
                } else {
                    Task.detached(executorPreference: monitor?.taskExecutor) { await run() }
                }
            }
        }
    }

    /// Whether fault `name` strikes this flow at `step` (decided by the run's ``FaultPlan``).
    package func fault(_ name: String, step: Int) -> Bool {
        let site = FaultPlan.Site(fault: name, flow: flow, step: step)
        guard faults.fires(site) else { return false }
        fired.withLock { $0.append(site) }
        return true
    }
}
