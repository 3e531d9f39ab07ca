import Foundation
import Testing
import TestSupport

/// The rule of the article *Maintaining the package* on generic code under ThreadSanitizer: the
/// files of the paths every flow or every scheduling decision runs use no generic algorithm that
/// an unoptimized build runs unspecialized.
@Suite("Hot-path files use index loops, not generic algorithms")
struct HotPathSourceTests {
    static var packageRoot: URL { PackageFiles.root }

    /// The files of the hot paths: the wire formats a request crosses, the IDP's endpoints, the
    /// engine's flow, the providers' calls, the controlled scheduler's decisions.
    static let hotPathFiles = [
        "IdpWireFormats/HTTPMessage.swift", "IdpWireFormats/FormParameters.swift", "IdpWireFormats/FormURLEncoding.swift", "IdpWireFormats/ByteScan.swift",
        "IdpWireFormats/Hex.swift", "IdpWireFormats/Base64URL.swift", "IdpWireFormats/ConstantTime.swift", "IdpWireFormats/PKCE.swift",
        "IdpWireFormats/SHA256.swift", "IdpWireFormats/TraceParent.swift", "IdpWireFormats/XHTMLFormParser.swift", "IdpWireFormats/XHTMLFormParser+Markup.swift",
        "IdpWireFormats/XHTMLFormParser+Entities.swift", "IdpWireFormats/XHTMLFormParser+Scanning.swift",
        "IdpWireFormats/SecureRandom.swift",
        "IdpServer/AuthorizationEndpoint.swift", "IdpServer/TokenEndpoint.swift", "IdpServer/CodeRedemption.swift", "IdpServer/Page.swift",
        "IdpServer/StepDecision.swift", "IdpServer/AuditLogStorage.swift",
        "IdpSdk/Flow.swift", "IdpSdk/CancellationLink.swift", "IdpSdk/FlowStateMachine.swift", "IdpSdk/FlowTimers.swift", "IdpSdk/FlowTimerShardStateMachine.swift",
        "IdpSdk/WorkerPool.swift", "IdpSdk/WorkerPoolState.swift", "IdpSdk/DeadlineHeap.swift", "IdpSdk/JobQueue.swift",
        "CredentialProviders/CredentialStore.swift", "CredentialProviders/CredentialStoreAnswers.swift",
        "CredentialProviders/CredentialStoreTable.swift", "CredentialProviders/StaticCredentials.swift",
        "CredentialProviders/MultiStepProvider.swift", "CredentialProviders/TokenCacheProvider.swift",
        "CredentialProviders/TokenCacheMachine.swift", "CredentialProviders/TokenCacheViews.swift", "CredentialProviders/FlightWaiter.swift",
        "CredentialProviders/CredentialProviderError.swift",
        "IdpHarness/Stress/ControlledSchedulerMachine.swift", "IdpHarness/Stress/ControlledScheduler.swift", "IdpHarness/Stress/ScheduleStrategy.swift",
    ]

    /// The generic algorithms the rule names.
    static let forbidden = [".enumerated()", "zip(", ".allSatisfy", "first(where:", "contains(where:", "removeAll(where:", "firstIndex(where:",
                            "lastIndex(where:"]

    /// "line: text" for each line of `source`, outside comments, that uses a forbidden algorithm.
    static func violations(in source: String) -> [String] {
        var found: [String] = []
        for (number, line) in source.components(separatedBy: "\n").enumerated() {
            let code = line.components(separatedBy: "//").first ?? ""
            if forbidden.contains(where: { code.contains($0) }) { found.append("\(number + 1): \(line.trimmingCharacters(in: .whitespaces))") }
        }
        return found
    }

    @Test("no hot-path file uses a generic algorithm the rule names")
    func hotPathFilesFollowTheRule() throws {
        for file in Self.hotPathFiles {
            let source = try String(contentsOf: Self.packageRoot.appendingPathComponent("Sources/\(file)"), encoding: .utf8)
            let found = Self.violations(in: source)
            #expect(found.isEmpty, "\(file): \(found.joined(separator: "; "))")
        }
    }

    @Test("the check finds each forbidden algorithm in code, and none in comments")
    func checkCanFail() {
        for algorithm in Self.forbidden {
            #expect(Self.violations(in: "let x = values\(algorithm) // note").count == 1, "\(algorithm)")
            #expect(Self.violations(in: "/// values\(algorithm)\n// values\(algorithm)").isEmpty, "\(algorithm)")
        }
    }
}
