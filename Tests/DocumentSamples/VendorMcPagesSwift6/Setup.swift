// Setup, not from the documents: the sample app's helpers the vendor pages' Swift calls, written
// for Swift 6. As in an iOS app, the app's objects live on the main actor; the MC's `@Sendable`
// completions never carry the app's non-Sendable closures — the adapter awaits the MC on the main
// actor and calls them there.
import Foundation
import IdpPrimitives
import McSdk

/// What the samples did, for the tests.
final class AppRecord: Sendable {
    static let shared = AppRecord()
    private let entries = LockedValue<[String]>([])
    func note(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// The sample app's global configuration (its spelling). The samples read and write it from
/// plain functions; the tests run one sample at a time.
enum GlobalConstats {
    nonisolated(unsafe) static var appVersion = "1.0.0"
    nonisolated(unsafe) static var appName = "SampleApp"
    nonisolated(unsafe) static var appConfig: AppConfigMap?
    nonisolated(unsafe) static var mcConfig: McConfigMappable?
    /// The restart sample passes it as a traceparent: it is none, so the MC starts a new trace.
    nonisolated(unsafe) static var uuid = UUID().uuidString
}

struct AppConfigMap {
    struct Iam { var trustedSslServerCerts: [String]? }
    var iam: Iam?
}

struct McConfigMappable {
    var astServerBackend: String?
    init?(jsonString: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(jsonString.utf8)) as? [String: Any] else { return nil }
        astServerBackend = object["astServerBackend"] as? String
    }
}

/// Where the app's configuration files are.
struct AssetBundle {
    var mcConfig = #"{"astServerBackend": "maverick"}"#
    func getPath() -> String { "/assets" }
}

enum MultiAssets {
    nonisolated(unsafe) static var current = AssetBundle()
}

final class AssetHelper: Sendable {
    static let sharedInstance = AssetHelper()
    func getAppConfigMap(path: String, namespace: String?) -> AppConfigMap? { AppConfigMap(iam: .init(trustedSslServerCerts: ["idp.pem"])) }
    func getSdkConfigData(path: String, namespace: String?) -> Data { Data("{}".utf8) }
    func getMcConfigJsonString(path: String, namespace: String?) -> String { MultiAssets.current.mcConfig }
    func getCertificateData(path: String, namespace: String?, name: String) -> Data { Data("-----BEGIN CERTIFICATE-----".utf8) }
}

final class OtelTraceHandler: Sendable {
    static let shared = OtelTraceHandler()
    static let startTraceParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    func getTraceContext(traceName: String) -> TraceContext {
        TraceContext(traceParent: Self.startTraceParent, traceState: "span=\(traceName)")
    }
    func complete(traceName: String) { AppRecord.shared.note("complete \(traceName)") }
}

struct CallTimer {
    let started = Date()
    init(event: any KsEvent) {}
    func stop() -> TimeInterval { Date().timeIntervalSince(started) }
}

struct ActionResult {
    let title: String
    let success: Bool
    let error: String?
    let duration: TimeInterval
    let event: (any KsEvent)?
}

/// The sample app's adapter around the MasterController, on the main actor.
@MainActor
final class MasterControllerAdapter {
    static let sharedInstance = MasterControllerAdapter()
    var masterController: MasterController?

    func sendEvent2MasterController(_ event: any KsEvent, completion: (((any KsEvent)?) -> Void)? = nil) {
        guard let masterController, let macro = event as? any KsMacroEvent else {
            completion?(nil)
            return
        }
        Task {
            let result = await masterController.receive(macro)
            completion?(result)
        }
    }

    /// The start page's form of the same call.
    func sendEvent2MasterController(event: any KsEvent, completion: (((any KsEvent)?) -> Void)? = nil) {
        sendEvent2MasterController(event, completion: completion)
    }
}

struct OpenCensusConfig {
    var exporterUrl: String
    var userName: String
    var password: String
    var cert: Data
}

struct LoginOfflineRequest {
    var tenant: String
    var userId: String
}

struct EventLogObject {
    @discardableResult
    init(actionResult: ActionResult, component: String) { AppRecord.shared.note("log \(actionResult.title) \(actionResult.success)") }
}

/// The app object the pages' functions belong to.
@MainActor
final class SampleApp {
    var masterControllerAdapter: MasterControllerAdapter { .sharedInstance }
    let localizedTable = "Login"

    func handleLoginOfflineStatus(status: KSMEventStatusType) -> (success: Bool, errorText: String?) {
        status == .KSMOK ? (true, nil) : (false, "\(status)")
    }

    func handleGetInformation(completion: @escaping (KSMGetInformationResultEvent?) -> Void) {
        masterControllerAdapter.sendEvent2MasterController(event: KSMGetInformationEvent()) { event in
            completion(event as? KSMGetInformationResultEvent)
        }
    }
}
