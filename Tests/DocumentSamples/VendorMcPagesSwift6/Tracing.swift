// Verbatim from the vendor page shift-lite-idpsdk__development__enable_tracing.md, block 1, lines 48-58, unchanged, in `extension SampleApp`. Swift 6 mode.
import Foundation
import McSdk

extension SampleApp {
func configureOpenCensusTracing(openCensusConfig: OpenCensusConfig) {
let event = KSMConfigurationEvent(exporterUrl: openCensusConfig.exporterUrl,
userName: openCensusConfig.userName,
password: openCensusConfig.password,
serverCertificate: openCensusConfig.cert)
MasterControllerAdapter.sharedInstance.sendEvent2MasterController(event: event)
}
func enableOpenCensusTracing(enable: Bool) {
let event = KSMEnableOpenCensusTracingEvent(tracingEnabled: enable)
MasterControllerAdapter.sharedInstance.sendEvent2MasterController(event: event)
}
}
