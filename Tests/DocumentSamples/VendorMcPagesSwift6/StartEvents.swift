// Verbatim from the vendor page shift-lite-idpsdk__development__start.md, block 1, lines 59-91, shift-lite-idpsdk__development__start.md, block 2, lines 97-130 and shift-lite-idpsdk__development__start.md, block 3, lines 194-223, unchanged; the two functions sit in
// `extension SampleApp` (the app object they belong to, Setup.swift). Swift 6 mode.
import Foundation
import McSdk

extension SampleApp {
func startMaster(startRequest: StartRequest, assetBundle: AssetBundle? = nil, completion: @escaping (ActionResult) -> Void) {
GlobalConstats.appVersion = startRequest.appVersion
GlobalConstats.appName = startRequest.appName
let startHelper = StartHelper(assetBundle: assetBundle)
let startEvent = KSMStartEventEx(serverBackend: (GlobalConstats.mcConfig?.astServerBackend)!,
ssmsAppConfiguration: startHelper.appConfig,
mcConfig: startHelper.mcConfigString,
certificateChain: startHelper.certData,
configurationData: startHelper.configurationData)
startEvent.traceContext =   OtelTraceHandler.shared.getTraceContext(traceName: "StartEventSpan")
let timer = CallTimer(event: startEvent)
MasterControllerAdapter.sharedInstance.sendEvent2MasterController(event: startEvent) { event in
let neededTime = timer.stop()
if let startResultEvent = event as? KSMStartResultEvent {
if startResultEvent.status == .KSMOK {
completion(ActionResult(title: "Start", success: true, error: nil, duration: neededTime, event: event))
} else {
print("Start failed")
completion(ActionResult(title: "Start",
success: false,
error: "Failed with Status \(startResultEvent.status.rawValue)",
duration: neededTime, event: event))
}
} else {
print("unexpected Event")
completion(ActionResult(title: "Start",
success: false,
error: "unexpected Event",
duration: neededTime, event: event))
}
OtelTraceHandler.shared.complete(traceName: "StartEventSpan")
}
}

func restartMaster(assetBundle: AssetBundle? = nil, completion: @escaping (ActionResult) -> Void) {
let startHelper = StartHelper(assetBundle: assetBundle)
let restart = KSMRestartEventEx(serverBackend: (GlobalConstats.mcConfig?.astServerBackend)!,
ssmsAppConfiguration: startHelper.appConfig,
mcConfig: startHelper.mcConfigString,
certificateChain: startHelper.certData)
let traceContext = TraceContext(traceParent: GlobalConstats.uuid, traceState: "restartEvent")
restart.traceContext = traceContext
let time = CallTimer(event: restart)
MasterControllerAdapter.sharedInstance.sendEvent2MasterController(event: restart) { event in
let duration = time.stop()
if let result = event as? KSMRestartResultEvent {
if result.status == .KSMOK {
completion(ActionResult(title: "Restart",
success: true,
error: nil,
duration: duration,
event: result))
} else {
print("Start failed")
completion(ActionResult(title: "Restart",
success: false,
error: "Failed with Status \(result.status)",
duration: duration,
event: result))
}
}
}
OtelTraceHandler.shared.complete(traceName: "RestartEventSpan")
}
}

struct StartRequest: Encodable {
var appName, appVersion: String
}
struct StartHelper {
let certData: Data
let appConfig: KSMSsmsAppConfiguration
let mcConfigString: String
let configurationData: KSMConfigurationData
init(assetBundle: AssetBundle? = nil) {
let server = assetBundle ?? MultiAssets.current
let bundlePath = server.getPath()
GlobalConstats.appConfig = AssetHelper.sharedInstance.getAppConfigMap(path: bundlePath, namespace: nil)
let dataSdkConfig = AssetHelper.sharedInstance.getSdkConfigData(path: bundlePath, namespace: nil)
mcConfigString = AssetHelper.sharedInstance.getMcConfigJsonString(path: bundlePath, namespace: nil)
GlobalConstats.mcConfig = McConfigMappable(jsonString: mcConfigString)
var versionStrings = GlobalConstats.appVersion.split(separator: ".")
if versionStrings.count < 3 {
versionStrings = ["0", "0", "1"]
}
let major = Int32(Int(versionStrings[0])!)
let minor = Int32(Int(versionStrings[1])!)
let build = Int32(Int(versionStrings[2])!)
GlobalConstats.appVersion = "\(major).\(minor).\(build)"
certData = AssetHelper.sharedInstance.getCertificateData(path: bundlePath,
namespace: nil,
name: (GlobalConstats.appConfig?.iam?.trustedSslServerCerts?.first) ?? "")
let version = KSMVersion(majorVersion: major, minorVersion: minor, build: build)
appConfig = KSMSsmsAppConfiguration(locale: "de",
version: version,
name: GlobalConstats.appName,
sdkconfig: dataSdkConfig)
configurationData = KSMConfigurationData(category: "", tagName: "")
}
}
