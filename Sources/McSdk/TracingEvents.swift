import Foundation

/// Configures where traces are exported (`KSMConfigurationEvent(exporterUrl:userName:password:serverCertificate:)`).
/// No result event: `receive(_:)` answers with a ``KSMStatusResultEvent`` (`kOk`, or
/// `kInvalidParameter` for an exporter URL that is not https).
///
/// The password is kept for the exporter and never shown.
public final class KSMConfigurationEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextCell
    public let exporterUrl: String
    public let userName: String
    let password: String
    public let serverCertificate: Data

    public init(exporterUrl: String, userName: String, password: String, serverCertificate: Data) {
        self.exporterUrl = exporterUrl
        self.userName = userName
        self.password = password
        self.serverCertificate = serverCertificate
        self.trace = TraceContextCell()
    }
}

/// Turns OpenCensus tracing on or off (`KSMEnableOpenCensusTracingEvent(tracingEnabled:)`); only
/// after Start. No result event: `receive(_:)` answers with a ``KSMStatusResultEvent`` (`kOk`), or a
/// ``KSMInvalidStateEvent`` before Start.
///
/// With tracing on, every trace the MC starts is sampled (flag `01`); off, it samples as the
/// caller's traceparent says.
public final class KSMEnableOpenCensusTracingEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextCell
    public let tracingEnabled: Bool

    public init(tracingEnabled: Bool) {
        self.tracingEnabled = tracingEnabled
        self.trace = TraceContextCell()
    }
}
