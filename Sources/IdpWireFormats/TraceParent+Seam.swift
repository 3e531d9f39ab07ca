import IdpPrimitives

extension TraceParent {
    /// The trace id of a traceparent header value, or `nil` if it cannot be parsed; what a
    /// `Seam` carries.
    package static func seamTrace(_ traceParent: String?) -> String? {
        traceParent.flatMap { TraceParent.traceId(of: $0) }
    }
}
