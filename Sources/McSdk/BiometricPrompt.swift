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
    case success
    case failure(BiometricPromptError)
}

/// The iOS biometry codes the documents' `BiometricError` sample switches on. An OfflineLogin that
/// the prompt refuses ends with `errorCode == 802_000_000 + rawValue`, so that sample's
/// `resultEvent.errorCode - 802000000` finds the code again.
public enum BiometricPromptError: Int, Sendable, CaseIterable {
    case authFailed = 25293
    case duplicateItem = 25299
    case param = 50
    case publicKeyInconsistent = 67811
    case userCanceled = 128
    case userCanceledSE = 2
    case systemCanceled = 4
    case appCanceled = 9
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
