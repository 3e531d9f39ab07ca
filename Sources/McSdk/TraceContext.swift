import IdpPrimitives
import IdpWireFormats

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

/// The settable trace context of one event. Events are shared between the app and the
/// MasterController's threads, so the value lives behind a lock: the lock itself, one object per
/// event (a class around it made two).
typealias TraceContextCell = LockedValue<TraceContext?>

extension LockedValue where Value == TraceContext? {
    convenience init() { self.init(nil) }

    var context: TraceContext? {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}
