/// A point where a controlled run may let another flow go first: a hand-off of work from one
/// thread to another, or a pause inside work (after a provider call, before a cancellation takes
/// effect, before a timeout fires).
///
/// `trace` is the W3C trace id of the flow or event the work belongs to (the SDK's traceparent,
/// the MC event's trace context), so a controller can tell whose work it is.
package struct Seam: Sendable, Hashable, CustomStringConvertible {
    /// The seam's name, such as `provider.ask`.
    package let name: String
    /// The W3C trace id of the flow or event the work belongs to; `nil` if it has none.
    package let trace: String?

    /// A seam.
    /// - Parameters:
    ///   - name: The seam's name.
    ///   - trace: The W3C trace id of the work's flow or event, if any.
    package init(_ name: String, trace: String?) {
        self.name = name
        self.trace = trace
    }

    /// The name, with the first 8 characters of the trace id in brackets when there is one.
    package var description: String { trace.map { "\(name)[\($0.prefix(8))]" } ?? name }
}

/// Takes over the SDK's scheduling for a controlled run (`IdpHarness`'s stress mode): every
/// hand-off of work goes through ``post(_:_:)`` instead of the SDK's worker pool, and the SDK calls
/// ``pause(at:)`` at the seams inside work. Off (`nil`) by default; then the SDK runs as it always
/// does and pays one `nil` check per hand-off.
///
/// Threading: ``post(_:_:)`` must not block (it is called with work half done: the controller
/// records the job and runs it later, on a thread of its own). ``pause(at:)`` may block the
/// calling OS thread until the controller lets it go on; the SDK calls it only on threads that may
/// block (its own, a transport's or the caller's, never a Swift concurrency thread it owns), and a
/// controller must return at once when called inside a task (`withUnsafeCurrentTask`).
package protocol ExecutionController: Sendable {
    /// Runs `job` later on a thread of the controller's, when it chooses; `seam` names the step.
    func post(_ seam: Seam, _ job: @escaping @Sendable () -> Void)
    /// The calling thread is at `seam`; returns when it may go on.
    func pause(at seam: Seam)
    /// Starts `body` as a task that runs only when the controller chooses (work an actor starts
    /// on its own, like the MasterController's token refresh). Default: a plain `Task`.
    func postAsync(_ seam: Seam, _ body: @escaping @Sendable () async -> Void)
    /// The calling task will suspend at `seam` until another's action resumes it (a waiter joining
    /// a refresh in flight). Returns how that action must hand the resume over (the controller
    /// runs it when the waiter's turn comes), or `nil`: resume directly. Changes nothing and never
    /// blocks; the task calls ``suspending(at:)`` once its resume is arranged. Default: `nil`.
    /// - Parameter seam: Where the task will wait.
    /// - Returns: The hand-over for the resume, or `nil`.
    func resumeHandOver(at seam: Seam) -> (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// The calling task, whose resume is arranged (whoever resumes it holds the hand-over
    /// ``resumeHandOver(at:)`` gave), is about to suspend at `seam`: another may go on meanwhile.
    /// A resume handed over already goes through at once. Called only after a non-`nil`
    /// ``resumeHandOver(at:)``. Never blocks. Default: nothing.
    /// - Parameter seam: Where the task waits.
    func suspending(at seam: Seam)
    /// The calling task is at `seam`, a point where another may go first (before it writes what
    /// an answer brought into shared state, say); returns when it may go on. Suspends, never
    /// blocks. Default: returns at once.
    /// - Parameter seam: Where the task is.
    func checkpoint(at seam: Seam) async
}

extension ExecutionController {
    package func postAsync(_ seam: Seam, _ body: @escaping @Sendable () async -> Void) {
        Task { await body() }
    }

    /// No hand-over: resumes go directly.
    /// - Parameter seam: Where the task will wait.
    /// - Returns: `nil`.
    package func resumeHandOver(at seam: Seam) -> (@Sendable (@escaping @Sendable () -> Void) -> Void)? { nil }

    /// Nothing to do.
    /// - Parameter seam: Where the task waits.
    package func suspending(at seam: Seam) {}

    /// Goes on at once.
    /// - Parameter seam: Where the task is.
    package func checkpoint(at seam: Seam) async {}
}
