import Foundation

/// A hammer thread's wait on relaxed atomics: it yields its core between looks for the first
/// `patience` (a wait for the other threads' calls is short, and a thread that slept would start
/// its next call late, out of step), then sleeps `nap` between looks. A wait that lasts — the
/// other threads behind a provider that hangs, until the round is given up — so costs the cores
/// next to nothing, instead of a thread that yields a few hundred thousand times a second.
struct PatientSpin {
    private let patience: Duration
    private let nap: UInt32
    private var started: ContinuousClock.Instant?
    private var looks = 0
    private var napping = false

    init(patience: Duration = .milliseconds(20), napMicroseconds: UInt32 = 200) {
        self.patience = patience
        nap = napMicroseconds
    }

    /// Whether the wait has outlasted its patience: it sleeps between looks now.
    var isNapping: Bool { napping }

    /// One pause between two looks. The clock is read on the first and every 256th.
    mutating func pause() {
        if napping {
            usleep(nap)
            return
        }
        if looks & 255 == 0 {
            let now = ContinuousClock.now
            if let started {
                napping = now - started >= patience
            } else {
                started = now
            }
        }
        looks &+= 1
        sched_yield()
    }
}
