import IdpPrimitives
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Puts ``InterceptedCalls`` in place while one controlled schedule runs, and takes them away
/// after it: outside a schedule nothing is rebound, and nothing costs more.
///
/// Two mechanisms:
/// - **Rebound calls** (``SymbolRebinding``): Foundation's and Dispatch's calls to the pthread
///   mutex and condition functions, the dispatch semaphore, `dispatch_after`, the dispatch queue,
///   group and source functions and `pthread_create`; those of any library of the user's own (not
///   the toolchain's or the system's); and the Swift concurrency runtime's calls to
///   `dispatch_after_f`, behind `Task.sleep`, and `dispatch_async_f`, its default executor's
///   hand-off of a job to the dispatch pool. The executable is not rebound: the kit's own house
///   primitives live there and are points already, and under ThreadSanitizer its calls reach the
///   interceptors directly, with no slot to rebind. A provider in the executable that calls
///   `pthread_mutex_lock` itself is therefore not seen; `NSLock`, `NSCondition`,
///   `DispatchSemaphore` and the house locks are.
/// - **The Swift runtime's executor hooks** (`swift_task_enqueueGlobal_hook`, as
///   swift-concurrency-extras' `withMainSerialExecutor` uses it, and
///   `swift_task_enqueueMainExecutor_hook`): a job a participant enqueues on the global executor
///   (a task it starts, a continuation it resumes, a default actor it calls) becomes a participant
///   of the schedule; one it sends to the main actor is work the schedule does not control.
///
/// One schedule at a time in the process (``ScheduleTurns``), so one owner installs and removes.
final class Interception: @unchecked Sendable {
    // Sound as Sendable: `rebinding` and `installed` are touched only by the owner of the process's
    // schedule turn (``ScheduleTurns``), one thread at a time, as its methods require.

    static let shared = Interception()

    private let rebinding: SymbolRebinding
    private var installed = false

    private init() {
        let symbols = Set(InterceptedCalls.replacements.keys)
        rebinding = SymbolRebinding(symbols: symbols) { image, symbol in Interception.rebinds(image: image, symbol: symbol) }
    }

    /// Whether the calls of `image` to `symbol` are rebound.
    static func rebinds(image: String, symbol: String) -> Bool {
        let name = image.split(separator: "/").last.map(String.init) ?? ""
        if symbol == "dispatch_after_f" || symbol == "dispatch_async_f" { return name.hasPrefix("libswift_Concurrency.") }
        if name.hasPrefix("libFoundation.") || name.hasPrefix("libswiftDispatch.") { return true }
        // The executable, the vDSO, the toolchain's and the system's libraries: not the user's.
        guard !image.isEmpty, image.hasPrefix("/") else { return false }
        let system = ["/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/lib/", "/opt/swift/"]
        return !system.contains { image.hasPrefix($0) } && !image.contains("/swift/linux/") && !image.contains("/usr/lib/swift/")
    }

    /// Whether calls can be intercepted on this platform.
    static var isSupported: Bool { SymbolRebinding.isSupported && InterceptedCalls.originals != nil && ExecutorHooks.available }

    /// Installs the intercepted calls; call from the owner of the schedule turn, before its
    /// participants start.
    func install() {
        guard Self.isSupported, !installed else { return }
        rebinding.install(InterceptedCalls.replacements)
        ExecutorHooks.install()
        installed = true
    }

    /// Restores every original; call from the owner of the schedule turn, after the schedule ended.
    func remove() {
        guard installed else { return }
        ExecutorHooks.remove()
        rebinding.restore()
        installed = false
    }

    /// What the provider's factory started while it made a schedule's instances (a thread, a
    /// queue's work): set, as a task-local value, around the factory's call.
    @TaskLocal static var factory: FactoryWork?

    /// The rebound slots, as "library: symbol", for tests and diagnostics.
    var slots: [String] {
        rebinding.slots.map { "\($0.image.split(separator: "/").last.map(String.init) ?? $0.image): \($0.symbol)" }
    }
}

/// What a provider's factory started while it made a schedule's instances, the first of it.
final class FactoryWork: Sendable {
    private let first = LockedValue<String?>(nil)

    /// The factory started `what`.
    func note(_ what: String) {
        first.withLock { $0 = $0 ?? what }
    }

    /// What it started first, or `nil`.
    var started: String? { first.withLock { $0 } }
}

/// The Swift concurrency runtime's hooks for the global executor and the main executor.
enum ExecutorHooks {
    typealias Original = @convention(thin) (UnownedJob) -> Void
    typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// The addresses of the runtime's hook variables.
    private static let globalHookAddress = SymbolRebinding.original("swift_task_enqueueGlobal_hook").map { UInt(bitPattern: $0) }
    private static let mainHookAddress = SymbolRebinding.original("swift_task_enqueueMainExecutor_hook").map { UInt(bitPattern: $0) }

    private static var globalHook: UnsafeMutablePointer<Hook?>? { globalHookAddress.flatMap { UnsafeMutablePointer(bitPattern: $0) } }
    private static var mainHook: UnsafeMutablePointer<Hook?>? { mainHookAddress.flatMap { UnsafeMutablePointer(bitPattern: $0) } }

    /// Whether the runtime has both hooks.
    static var available: Bool { globalHook != nil && mainHook != nil }

    static func install() {
        globalHook?.pointee = enqueueGlobal
        mainHook?.pointee = enqueueMain
    }

    static func remove() {
        globalHook?.pointee = nil
        mainHook?.pointee = nil
    }

    /// A job for the global executor: a participant's becomes a participant of its run.
    private static let enqueueGlobal: Hook = { job, original in
        guard let control = ControlPoints.current else { return original(job) }
        control.enqueue(job)
    }

    /// A job for the main actor: a participant's is work its run does not control.
    private static let enqueueMain: Hook = { job, original in
        ControlPoints.current?.outside("the main actor")
        original(job)
    }
}

/// The task executor the controlled phase runs its jobs on. Code a job runs that enqueues work on
/// the current executor (as `Task.yield()` does) reaches ``enqueue(_:)``: a participant's work
/// joins its run, like a job the runtime's global-enqueue hook hands over; anyone else's goes to the
/// global concurrent executor, as it would have.
final class ScheduleExecutor: TaskExecutor {
    static let shared = ScheduleExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard let control = ControlPoints.current else { return globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        control.enqueue(job)
    }
}
