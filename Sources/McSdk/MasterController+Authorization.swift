import Foundation
import IdpPrimitives
import IdpWireFormats

extension MasterController {
    /// GetAstClientData: kOk; kInvalidState before Start; kFailed for an empty tenant id;
    /// kInternalError when the device storage fails. (The documents list no kInvalidParameter
    /// for it.) The result carries `trace`.
    func getAstClientData(_ event: KSMGetAstClientDataEvent, trace: TraceContext) -> KSMGetAstClientDataResultEvent {
        guard started else {
            return KSMGetAstClientDataResultEvent(status: .kInvalidState, errorDescription: "post a KSMStartEvent before KSMGetAstClientDataEvent", traceContext: trace)
        }
        guard !event.tenantId.isEmpty else {
            return KSMGetAstClientDataResultEvent(status: .kFailed, errorDescription: "tenantId is empty", traceContext: trace)
        }
        guard !store.isFailing else {
            return KSMGetAstClientDataResultEvent(status: .kInternalError, errorDescription: "the device storage could not be read", traceContext: trace)
        }
        let verifier = PKCE.makeVerifier()
        let challenge = PKCE.challenge(for: verifier)
        let clientData = SecureRandom.token(byteCount: 32)
        // One binding per device: every user activated here shares the first activation's AST
        // client id, and it goes with every later authorization (add user, login).
        let astClientId = store.deviceAstClientId ?? IdpWire.unassignedAstClientId
        pending[event.userIdentifier] = PendingAuthorization(verifier: verifier, challenge: challenge, clientData: clientData)
        return KSMGetAstClientDataResultEvent(status: .kOk, clientData: clientData, astClientId: astClientId,
                                              codeChallenge: challenge, codeChallengeMethod: PKCE.methodS256, traceContext: trace)
    }

    /// SetAuthorisationCode, with the documented statuses only: kOk; kInvalidState (before Start,
    /// or no GetAstClientData pending); kFailed (an empty parameter, a code of another user, a
    /// biometric prompt that failed — `errorCode` 802000000 + its code); kCannotAcquireTokenData
    /// (the IDP refused the code or could not be reached); kInternalError (the device storage
    /// fails). A failure stores nothing. The result carries `trace`.
    func setAuthorisationCode(_ event: KSMSetAuthorisationCodeEvent, trace: TraceContext) async -> KSMSetAuthorisationCodeResultEvent {
        func fail(_ status: KSMEventStatusType, _ text: String, errorCode: Int? = nil) -> KSMSetAuthorisationCodeResultEvent {
            KSMSetAuthorisationCodeResultEvent(status: status, errorCode: errorCode, errorDescription: text, traceContext: trace)
        }
        guard started else { return fail(.kInvalidState, "post a KSMStartEvent before KSMSetAuthorisationCodeEvent") }
        if event.tenantId.isEmpty { return fail(.kFailed, "tenantId is empty") }
        if event.authorisationCode.isEmpty {
            return fail(.kFailed, "authorisationCode is empty; getAuthorizationCode ended without a code (see its IdpSdkResult.idpSdkError)")
        }
        if event.clientId.isEmpty { return fail(.kFailed, "clientId is empty") }
        guard let authorization = pending[event.userIdentifier] else {
            return fail(.kInvalidState, "no authorization is pending for \(event.userIdentifier); post a KSMGetAstClientDataEvent first")
        }
        guard !store.isFailing else { return fail(.kInternalError, "the device storage could not be written") }
        eventsWaitingOnIdp += 1
        defer { eventsWaitingOnIdp -= 1 }
        // BIOMETRIC protects the tokens behind the device's biometry: the user must pass the
        // prompt before the MC redeems the code (a refused prompt leaves the code unspent).
        if event.authenticationMode == .biometric {
            if let failure = await biometricFailure(reason: "Activate and log in on this device") {
                return fail(.kFailed, failure.text, errorCode: failure.errorCode)
            }
        }
        let exchange = await TokenExchange.run(
            code: event.authorisationCode, clientId: event.clientId, authorization: authorization,
            knownAstClientId: store.deviceAstClientId ?? IdpWire.unassignedAstClientId, context: requestContext(trace, tenantId: event.tenantId)
        )
        // A controlled stress run may let another event at the token store first.
        await configuration.controller?.checkpoint(at: Seam("mc.store.save", trace: trace.seamTrace))
        // The actor may have handled other events while the request was out: decide on what is
        // true now.
        let tokens: McTokenSet
        switch exchange {
        case .failure(let failure): return fail(failure.status, failure.description)
        case .success(let issued): tokens = issued
        }
        if !event.userIdentifier.userId.isEmpty, event.userIdentifier.userId != tokens.userId {
            return fail(.kFailed, "the code was issued for another user than \(event.userIdentifier)")
        }
        // Found once, removed by its index: one hash of the identifier, not two.
        if let kept = pending.index(forKey: event.userIdentifier), pending[kept].value.challenge == authorization.challenge {
            pending.remove(at: kept)
        }
        let user = KsUserIdentifier(tenantId: event.tenantId, userId: tokens.userId)
        store.save(StoredUser(tokens: tokens, authenticationMode: event.authenticationMode), for: user, loggedIn: true)
        if event.userIdentifier.userId.isEmpty || !configuration.plantedForgetsLogin { loggedIn.insert(user) }
        lastLoggedIn = user
        return KSMSetAuthorisationCodeResultEvent(status: .kOk, userIdentifier: user, traceContext: trace)
    }

    /// Asks the biometric prompt; `nil` when it passed, else the documented `errorCode`
    /// (802000000 + the biometry code) and a text. A device without a prompt answers as iOS does
    /// when no biometry is enrolled (`publicKeyInconsistent`).
    func biometricFailure(reason: String) async -> (errorCode: Int, text: String)? {
        guard let prompt = configuration.biometricPrompt else {
            return (BiometricPromptError.errorCodeBase + BiometricPromptError.publicKeyInconsistent.rawValue,
                    "BIOMETRIC needs the device's biometry and none is set up (no biometric prompt configured)")
        }
        guard case .failure(let error) = await prompt.authenticate(reason: reason) else { return nil }
        return (BiometricPromptError.errorCodeBase + error.rawValue, "the biometric prompt ended with \(error)")
    }
}
