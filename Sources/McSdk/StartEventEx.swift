import Foundation

/// The app's version, as the documents' `KSMVersion(majorVersion:minorVersion:build:)` (Java
/// `AppVersion`).
public struct KSMVersion: Sendable, Hashable, CustomStringConvertible {
    /// The major version, the first number of ``ssmsVersionString``.
    public let majorVersion: Int32
    /// The minor version, the second number.
    public let minorVersion: Int32
    /// The build number, the third number (the initialiser's `build`).
    public let buildNo: Int32

    /// A version `majorVersion.minorVersion.build`.
    ///
    /// - Parameters:
    ///   - majorVersion: The major version.
    ///   - minorVersion: The minor version.
    ///   - build: The build number, kept as ``buildNo``.
    public init(majorVersion: Int32, minorVersion: Int32, build: Int32) {
        self.majorVersion = majorVersion
        self.minorVersion = minorVersion
        self.buildNo = build
    }

    /// `"major.minor.build"`.
    public var ssmsVersionString: String { "\(majorVersion).\(minorVersion).\(buildNo)" }
    /// ``ssmsVersionString``: `"major.minor.build"`.
    public var description: String { ssmsVersionString }
}

/// The Java name of ``KSMVersion``.
public typealias AppVersion = KSMVersion

/// Locale, version and name of the app, and its SDK config: what Start/Restart pass
/// (`KSMSsmsAppConfiguration(locale:version:name:sdkconfig:)`; Java `BasicAppConfiguration`).
public struct KSMSsmsAppConfiguration: Sendable, Hashable {
    /// The app's language tag: a two-letter primary subtag, optionally with a region (`de`, `de-CH`).
    public let locale: String
    /// The app's version.
    public let version: KSMVersion
    /// The app's name: 1 to 32 UTF-8 bytes.
    public let name: String
    /// The SDK configuration (JSON for the Maverick backend).
    public let sdkconfig: Data

    /// An app configuration as Start and Restart pass it; it is checked when the event is handled,
    /// not here.
    ///
    /// - Parameters:
    ///   - locale: The app's language tag, such as `de` or `de-CH`.
    ///   - version: The app's version.
    ///   - name: The app's name, 1 to 32 UTF-8 bytes.
    ///   - sdkconfig: The SDK configuration (JSON for the Maverick backend).
    public init(locale: String, version: KSMVersion, name: String, sdkconfig: Data) {
        self.locale = locale
        self.version = version
        self.name = name
        self.sdkconfig = sdkconfig
    }

    /// What is wrong with it, or `nil`: the documents' rules for locale and name.
    var problem: String? {
        Self.localeProblem(locale) ?? Self.nameProblem(name)
    }

    static func localeProblem(_ locale: String) -> String? {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        let letters = { (part: Substring) in part.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) } }
        guard (1...2).contains(parts.count), parts[0].utf8.count == 2, letters(parts[0]),
              parts.count == 1 || (parts[1].utf8.count == 2 && letters(parts[1])) else {
            return "locale '\(locale)' is not a language tag such as \"de\" or \"de-CH\""
        }
        return nil
    }

    static func nameProblem(_ name: String) -> String? {
        (1...32).contains(name.utf8.count) ? nil : "the app name must be 1 to 32 UTF-8 bytes; it is \(name.utf8.count)"
    }
}

/// Additional configuration data of Start (`KSMConfigurationData(category:tagName:)`).
public struct KSMConfigurationData: Sendable, Hashable {
    /// The category of the data, as the app's configuration names it; the simulation keeps it
    /// unread.
    public let category: String
    /// The tag name within `category`; the simulation keeps it unread.
    public let tagName: String

    /// One item of additional configuration data.
    ///
    /// - Parameters:
    ///   - category: The category of the data.
    ///   - tagName: The tag name within `category`.
    public init(category: String, tagName: String) {
        self.category = category
        self.tagName = tagName
    }
}

/// The server backends the documents name for `serverBackend`.
enum ServerBackend {
    /// What is wrong with `value` (only `"maverick"`, the KOBIL Shift Lite IDP, is simulated), as
    /// the status and text of the Start/Restart result; `nil` when it is usable.
    static func problem(_ value: String) -> (KSMEventStatusType, String)? {
        switch value {
        case "", "maverick": nil
        case "ssms": (.kFailed, "serverBackend \"ssms\" (KOBIL Digitanium) is not simulated here; start with \"maverick\"")
        default: (.kInvalidParameter, "serverBackend '\(value)' is neither \"maverick\" nor \"ssms\"")
        }
    }
}

extension ServerBackend {
    /// What is wrong with a Start/Restart's configuration: the backend, then the app's locale and
    /// name, then the MC config.
    static func problem(_ serverBackend: String, _ app: KSMSsmsAppConfiguration, _ mcConfig: String) -> (KSMEventStatusType, String)? {
        if let backend = problem(serverBackend) { return backend }
        if let text = app.problem ?? McConfig.problem(mcConfig) { return (.kInvalidParameter, text) }
        return nil
    }
}

/// The MC config JSON: an object, or empty.
enum McConfig {
    static func problem(_ json: String) -> String? {
        if json.isEmpty { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)), object is [String: Any] else {
            return "mcConfig is not a JSON object"
        }
        return nil
    }
}

/// Start with the app's full configuration (the iOS samples' `KSMStartEventEx`); answered by
/// ``KSMStartResultEvent``.
///
/// The result is ``KSMEventStatusType/kInvalidParameter`` for a `serverBackend` other than
/// `"maverick"` / `"ssms"`, a locale that is not a language tag, an app name outside 1…32 bytes, or
/// an `mcConfig` that is not a JSON object; ``KSMEventStatusType/kFailed`` for `"ssms"` (KOBIL
/// Digitanium is not simulated).
public final class KSMStartEventEx: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The backend to use: `"maverick"` (simulated) or `"ssms"` (answered with
    /// ``KSMEventStatusType/kFailed``); anything else is ``KSMEventStatusType/kInvalidParameter``.
    public let serverBackend: String
    /// The app's locale, version, name and SDK config.
    public let ssmsAppConfiguration: KSMSsmsAppConfiguration
    /// The MC configuration in JSON.
    public let mcConfig: String
    /// The app's certificate chain, as the documents pass it; the simulation does not read it.
    public let certificateChain: Data
    /// Additional configuration data; `nil`: none.
    public let configurationData: KSMConfigurationData?
    /// The IAM server's certificate chain; `nil`: none given. The simulation does not read it.
    public let iamCertificateChain: Data?
    /// The SmartScreen server's certificate chain; `nil`: none given. The simulation does not read
    /// it.
    public let smartScreenCertificateChain: Data?

    /// A Start with the app's full configuration; it is checked when the event is handled, not
    /// here.
    ///
    /// - Parameters:
    ///   - serverBackend: `"maverick"` or `"ssms"`.
    ///   - ssmsAppConfiguration: The app's locale, version, name and SDK config.
    ///   - mcConfig: The MC configuration in JSON: an object, or empty.
    ///   - certificateChain: The app's certificate chain.
    ///   - configurationData: Additional configuration data; `nil` by default.
    ///   - iamCertificateChain: The IAM server's certificate chain; `nil` by default.
    ///   - smartScreenCertificateChain: The SmartScreen server's certificate chain; `nil` by
    ///     default.
    ///   - traceContext: The W3C trace context to continue; `nil` starts a new trace.
    public init(serverBackend: String, ssmsAppConfiguration: KSMSsmsAppConfiguration, mcConfig: String, certificateChain: Data,
                configurationData: KSMConfigurationData? = nil, iamCertificateChain: Data? = nil,
                smartScreenCertificateChain: Data? = nil, traceContext: TraceContext? = nil) {
        self.serverBackend = serverBackend
        self.ssmsAppConfiguration = ssmsAppConfiguration
        self.mcConfig = mcConfig
        self.certificateChain = certificateChain
        self.configurationData = configurationData
        self.iamCertificateChain = iamCertificateChain
        self.smartScreenCertificateChain = smartScreenCertificateChain
        self.trace = TraceContextSlot(traceContext)
    }

    /// Why Start cannot go on with it, or `nil`.
    var problem: (KSMEventStatusType, String)? { ServerBackend.problem(serverBackend, ssmsAppConfiguration, mcConfig) }
}

/// Restart with the app's full configuration (the iOS samples' `KSMRestartEventEx`); answered by
/// ``KSMRestartResultEvent``, with the statuses of ``KSMStartEventEx``.
public final class KSMRestartEventEx: KsMacroEvent {
    /// The event's W3C trace context (see ``TraceContext``), settable as the documents' `setTraceContext`.
    public var traceContext: TraceContext? { get { trace.context } set { trace.context = newValue } }
    private let trace: TraceContextSlot
    /// The backend to use, as ``KSMStartEventEx/serverBackend``.
    public let serverBackend: String
    /// The app's locale, version, name and SDK config.
    public let ssmsAppConfiguration: KSMSsmsAppConfiguration
    /// The MC configuration in JSON: an object, or empty.
    public let mcConfig: String
    /// The app's certificate chain, as the documents pass it; the simulation does not read it.
    public let certificateChain: Data
    /// The IAM server's certificate chain; `nil`: none given. The simulation does not read it.
    public let iamCertificateChain: Data?
    /// The SmartScreen server's certificate chain; `nil`: none given. The simulation does not read
    /// it.
    public let smartScreenCertificateChain: Data?

    /// A Restart with the app's full configuration; it is checked when the event is handled, not
    /// here.
    ///
    /// - Parameters:
    ///   - serverBackend: `"maverick"` or `"ssms"`.
    ///   - ssmsAppConfiguration: The app's locale, version, name and SDK config.
    ///   - mcConfig: The MC configuration in JSON: an object, or empty.
    ///   - certificateChain: The app's certificate chain.
    ///   - iamCertificateChain: The IAM server's certificate chain; `nil` by default.
    ///   - smartScreenCertificateChain: The SmartScreen server's certificate chain; `nil` by
    ///     default.
    ///   - traceContext: The W3C trace context to continue; `nil` starts a new trace.
    public init(serverBackend: String, ssmsAppConfiguration: KSMSsmsAppConfiguration, mcConfig: String, certificateChain: Data,
                iamCertificateChain: Data? = nil, smartScreenCertificateChain: Data? = nil, traceContext: TraceContext? = nil) {
        self.serverBackend = serverBackend
        self.ssmsAppConfiguration = ssmsAppConfiguration
        self.mcConfig = mcConfig
        self.certificateChain = certificateChain
        self.iamCertificateChain = iamCertificateChain
        self.smartScreenCertificateChain = smartScreenCertificateChain
        self.trace = TraceContextSlot(traceContext)
    }

    var problem: (KSMEventStatusType, String)? { ServerBackend.problem(serverBackend, ssmsAppConfiguration, mcConfig) }
}
