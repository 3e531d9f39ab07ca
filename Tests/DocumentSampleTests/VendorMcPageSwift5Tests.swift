// The vendor pages' MC Swift that Swift 6 refuses — the invalid-state page's adapter and the
// auth-modes page's result handlers dispatch their non-Sendable `self` onto Dispatch queues — as
// printed in a Swift 5 client target (Tests/DocumentSamples/VendorMcPages).
import Foundation
import IdpServer
@testable import McSdk
@testable import VendorMcPagesSample
import Testing
import TestSupport

@Suite("The vendor pages' MC samples in Swift 5, as printed", .serialized)
struct VendorMcPageSwift5Tests {
    @Test("invalid state: the adapter passes results on; an event the MC cannot handle yet comes back as KSMInvalidStateEvent and the adapter asks GetState instead")
    func invalidStateAdapter() async throws {
        let idp = SampleIDP()
        let adapter = MasterControllerAdapter.sharedInstance
        adapter.masterController = idp.masterController()
        // A Start comes back through the completion
        let start = await withCheckedContinuation { continuation in
            adapter.sendEvent2MasterController(KSMStartEvent()) { continuation.resume(returning: $0) }
        }
        #expect((start as? KSMStartResultEvent)?.status == .KSMOK)
        // An exchange before any login: the MC answers KSMInvalidStateEvent, so the adapter sends
        // KSMGetStateEventEvent (its completion is not called for the invalid-state answer)
        adapter.sendEvent2MasterController(KSMExchangeIamTokenEvent(audience: "banking-api")) { _ in
            AppRecord.shared.note("completion called for the exchange")
        }
        #expect(await eventually { AppRecord.shared.all.contains("forward KSMGetStateEventEvent") })
        #expect(!AppRecord.shared.all.contains("completion called for the exchange"))
    }

    @Test("auth modes: a SetAuthorisationCode that the biometric prompt cancelled is FAILED with 802000128, which the page's handler shows as OSStatus -128 and asks for new AST data")
    func biometricFailureHandled() async throws {
        // Given a real FAILED result of SetAuthorisationCode in BIOMETRIC mode
        let idp = SampleIDP()
        let mc = MasterController(configuration: .init(idpUrl: idp.url, clock: idp.clock, biometricPrompt: ScriptedBiometricPrompt([.failure(.userCanceled)])))
        _ = await mc.receive(KSMStartEvent())
        _ = await mc.receive(KSMGetAstClientDataEvent(tenantId: "demo"))
        let result = await mc.receive(KSMSetAuthorisationCodeEvent(tenantId: "demo", authenticationMode: .BIOMETRIC,
                                                                    authorisationCode: "any", clientId: "KssIdpEnrollment")) as! KSMSetAuthorisationCodeResultEvent
        #expect(result.status == .KSMFAILED && result.errorCode == 802_000_128)
        // When the page's handler sees it
        let app = SampleApp()
        app.setAuthorizationResult(result: result)
        // Then it decoded the biometric error and asked for new AST client data
        #expect(AppRecord.shared.all.contains("alert OSStatus: -128: UserCanceled (128) User canceled the operation."))
        #expect(AppRecord.shared.all.contains { $0.hasPrefix("viewModel.getAstClientData") })
        #expect(GlobalConstant.const.logedInUser == nil)
    }

    @Test("auth modes: a successful SetAuthorisationCode makes the handler note the logged-in user and fetch information")
    func successHandled() async throws {
        let app = SampleApp()
        app.setAuthorizationResult(result: KSMSetAuthorisationCodeResultEvent(status: .kOk, userIdentifier: KsUserIdentifier(tenantId: "demo", userId: "uma")))
        #expect(GlobalConstant.const.logedInUser == KsUserIdentifier(tenantId: "demo", userId: ""))
        #expect(await eventually { AppRecord.shared.all.contains("viewModel.triggerGetInformation") })
    }
}

