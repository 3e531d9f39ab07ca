import Foundation

/// Configures where traces are exported (`KSMConfigurationEvent(exporterUrl:userName:password:serverCertificate:)`).
/// No result event: `receive(_:)` answers with a ``KSMStatusResultEvent`` (`kOk`, or
/// `kInvalidParameter` for an exporter URL that is not https).
///
/// The password is kept for the exporter and never shown.
public final class KSMConfigurationEvent: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// Where traces are exported; must be an https URL.
    public let exporterUrl: String
    /// The exporter account's user name.
    public let userName: String
    let password: String
    /// The exporter's certificate, as the documents pass it; the simulation does not read it.
    public let serverCertificate: Data

    /// A tracing configuration; the URL is checked when the event is handled.
    ///
    /// - Parameters:
    ///   - exporterUrl: Where traces are exported; must be an https URL.
    ///   - userName: The exporter account's user name.
    ///   - password: The exporter account's password; kept, never shown.
    ///   - serverCertificate: The exporter's certificate.
    public init(exporterUrl: String, userName: String, password: String, serverCertificate: Data) {
        self.exporterUrl = exporterUrl
        self.userName = userName
        self.password = password
        self.serverCertificate = serverCertificate
        self.trace = TraceContextSlot()
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
    private let trace: TraceContextSlot
    /// `true` turns tracing on (every trace the MC starts is sampled), `false` off.
    public let tracingEnabled: Bool

    /// A tracing switch.
    ///
    /// - Parameter tracingEnabled: `true` to turn tracing on, `false` to turn it off.
    public init(tracingEnabled: Bool) {
        self.tracingEnabled = tracingEnabled
        self.trace = TraceContextSlot()
    }
}
