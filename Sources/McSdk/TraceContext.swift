import IdpPrimitives
import IdpWireFormats
import Synchronization

/// The W3C trace context of an event: its `traceparent` and `tracestate`, as the documents'
/// `TraceContext(traceParent:traceState:)`.
///
/// Every event has a settable ``KsEvent/traceContext``. The MasterController sends its
/// `traceParent` with every IDP request the event causes (the IDP's audit log shows it) and puts it
/// on the result event. An event without one gets a new trace; one whose `traceParent` cannot be
/// parsed starts a new trace too, as W3C Trace Context asks of a receiver, and the IDP's audit log
/// notes the restart.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The `traceparent` header value: `00-<trace id>-<parent id>-<flags>`.
    public var traceParent: String
    /// The `tracestate` header value: vendor name/value pairs; may be empty.
    public var traceState: String

    /// A trace context from header values; it is checked when an event carrying it is handled.
    ///
    /// - Parameters:
    ///   - traceParent: The `traceparent` header value, `00-<trace-id>-<parent-id>-<flags>`.
    ///   - traceState: The `tracestate` header value; empty by default.
    public init(traceParent: String, traceState: String = "") {
        self.traceParent = traceParent
        self.traceState = traceState
    }

    /// A context in a new trace.
    public static func newTrace() -> TraceContext { TraceContext(traceParent: TraceParent.randomHeader()) }

    /// This context if its `traceParent` parses, else a new trace that says it restarted.
    var usable: (context: TraceContext, restarted: Bool) {
        if TraceParent.isValid(traceParent) { return (self, false) }
        return (TraceContext(traceParent: TraceParent.randomHeader(), traceState: TraceParent.restartedTraceState), true)
    }

    /// The trace id a controlled run's ``Seam`` carries.
    var seamTrace: String? { TraceParent.seamTrace(traceParent) }

    /// `TraceContext(traceparent)`, with the trace state after a comma when there is one.
    public var description: String { "TraceContext(\(traceParent)\(traceState.isEmpty ? "" : ", \(traceState)"))" }
}

/// The lock around a context set on an event after it was made.
typealias TraceContextCell = LockedValue<TraceContext?>

/// The settable trace context of one event.
///
/// Events are shared between the app and the MasterController's threads, so a context set on an
/// event lives behind a lock. The one an event is made with is immutable and needs none, and most
/// events are never set after they are made (the app's requests usually; the results of a login's
/// two events, which the MC makes with their trace): the lock is made by the first set, published
/// once and kept for the event's life.
struct TraceContextSlot: ~Copyable, Sendable {
    /// The context the event was made with; the event's until one is set.
    private let initial: TraceContext?
    /// Every context set since the event was made: made by the first set, published by one
    /// compare-and-exchange, never replaced, released with the slot.
    private let assigned = Atomic<Unmanaged<TraceContextCell>?>(nil)

    /// A slot holding `initial` until a context is set.
    init(_ initial: TraceContext? = nil) { self.initial = initial }

    // The slot owns the one reference `assigned` holds: it is taken when the cell is published
    // and never handed out, and readers use the cell only while the slot's event is alive. The
    // event is released only when no thread holds it any more, so a relaxed load sees the cell.
    deinit { assigned.load(ordering: .relaxed)?.release() }

    var context: TraceContext? {
        get {
            guard let cell = assigned.load(ordering: .acquiring) else { return initial }
            return cell.takeUnretainedValue().withLock { $0 }
        }
        nonmutating set {
            if let cell = assigned.load(ordering: .acquiring) {
                return cell.takeUnretainedValue().withLock { $0 = newValue }
            }
            // Two first sets at once: one cell is published with its value, the other set writes
            // through the lock into it, as a later set would.
            let made = Unmanaged.passRetained(TraceContextCell(newValue))
            let (published, current) = assigned.compareExchange(expected: nil, desired: made, ordering: .acquiringAndReleasing)
            guard !published, let current else { return }
            made.release()
            current.takeUnretainedValue().withLock { $0 = newValue }
        }
    }
}
