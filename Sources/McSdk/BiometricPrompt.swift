import IdpPrimitives

/// The device's biometric prompt, which an OfflineLogin of a user in
/// ``KSMAuthenticationMode/biometric`` must pass before the MC uses the offline token.
///
/// Called on a Swift concurrency thread; an implementation that shows UI awaits it, it never blocks.
public protocol BiometricPrompt: Sendable {
    /// Asks the user; returns how that went.
    func authenticate(reason: String) async -> BiometricPromptResult
}

/// The outcome of a biometric prompt.
public enum BiometricPromptResult: Sendable, Equatable {
    /// The user passed the prompt.
    case success
    /// The prompt refused or was cancelled, with the iOS code saying why.
    case failure(BiometricPromptError)
}

/// The iOS biometry codes the documents' `BiometricError` sample switches on. An OfflineLogin that
/// the prompt refuses ends with `errorCode == 802_000_000 + rawValue`, so that sample's
/// `resultEvent.errorCode - 802000000` finds the code again.
public enum BiometricPromptError: Int, Sendable, CaseIterable {
    /// Authentication failed (25293).
    case authFailed = 25293
    /// The key's keychain item already exists (25299).
    case duplicateItem = 25299
    /// A parameter of the keychain call was not valid (50).
    case param = 50
    /// The key no longer matches the enrolled biometry, or the device has none (67811); what the MC
    /// reports when ``MasterController/Configuration/biometricPrompt`` is `nil`.
    case publicKeyInconsistent = 67811
    /// The user cancelled the prompt (128); a cancellation.
    case userCanceled = 128
    /// The user cancelled the Secure Enclave's prompt (2); a cancellation.
    case userCanceledSE = 2
    /// The system cancelled the prompt, e.g. another app came forward (4); a cancellation.
    case systemCanceled = 4
    /// The app cancelled the prompt (9); a cancellation.
    case appCanceled = 9
    /// Too many failed attempts have locked biometry (8).
    case biometryLockout = 8

    /// The base the MC adds to the code in its result events.
    public static let errorCodeBase = 802_000_000

    /// Whether the user, the app or the system cancelled (the app may retry), rather than a failure.
    public var isCancellation: Bool {
        switch self {
        case .userCanceled, .userCanceledSE, .systemCanceled, .appCanceled: true
        default: false
        }
    }
}

/// A biometric prompt that answers from a script, for tests: each prompt takes the next result;
/// when the script is used up it answers `fallback`.
///
/// ```swift
/// let prompt = ScriptedBiometricPrompt([.failure(.userCanceled), .success])
/// ```
public final class ScriptedBiometricPrompt: BiometricPrompt {
    private let script: LockedValue<(results: [BiometricPromptResult], prompts: Int)>
    private let fallback: BiometricPromptResult

    /// A prompt that answers `results` in order, then `fallback` for every later prompt.
    ///
    /// - Parameters:
    ///   - results: The answers of the first prompts, in order.
    ///   - fallback: The answer once `results` is used up; `.success` by default.
    public init(_ results: [BiometricPromptResult], fallback: BiometricPromptResult = .success) {
        script = LockedValue((results, 0))
        self.fallback = fallback
    }

    public func authenticate(reason: String) async -> BiometricPromptResult {
        script.withLock { script in
            script.prompts += 1
            return script.results.isEmpty ? fallback : script.results.removeFirst()
        }
    }

    /// How often the prompt was shown.
    public var prompts: Int { script.withLock { $0.prompts } }
}
