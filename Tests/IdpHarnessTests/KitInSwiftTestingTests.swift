import CredentialProviders
import Foundation
@testable import IdpHarness
import IdpHarnessTesting
import IdpSdk
import Testing
import TestSupport

/// Answers every call with an error: every direct-call check fails.
struct AlwaysRefusingProvider: IdpSdkInteractionInterface, Sendable {
    func provideCredentials(_ interactionData: IdpSdkInteractionData) -> IdpSdkProvideCredentialsResult {
        .init(error: IdpSdkError("AlwaysRefusing", 1, "refuses every call on purpose"))
    }
}

/// The kit in a Swift Testing test: ``ConformanceReport/record(sourceLocation:)`` and the
/// controlled seed and budget from the environment.
@Suite("The kit in Swift Testing: an issue per failed check, the report attached, the seed from the environment", .serialized)
struct KitInSwiftTestingTests {
    /// A quick direct-call run in this process.
    static var quick: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.hammerRounds = 2
        configuration.instanceRounds = 1
        configuration.controlledSchedules = 8
        configuration.isolation = .inProcess
        return configuration
    }

    @Test("a failing report records one issue per failed check, naming it, with the rerun line; a passing report records none")
    func oneIssuePerFailedCheck() async {
        let failing = await ProviderConformanceKit.hammer(Self.quick, name: "AlwaysRefusing", instances: .perUser) { (_: ProviderConformanceKit.User) in AlwaysRefusingProvider() }
        let failed = failing.checks.filter { !$0.passed }.map(\.name)
        #expect(failed.count >= 2, "\(failing)")
        let comments = LockedValue<[String]>([])
        withKnownIssue {
            failing.record()
        } matching: { issue in
            comments.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
            return true
        }
        let recorded = comments.withLock { $0 }
        #expect(recorded.count == failed.count, "\(recorded)")
        for name in failed {
            #expect(recorded.filter { $0.hasPrefix("AlwaysRefusing: \(name) FAILED") }.count == 1, "\(name): \(recorded)")
        }
        #expect(recorded.allSatisfy {
            $0.contains("rerun: IDPHARNESS_CONTROLLED_SEED=1 IDPHARNESS_CONTROLLED_SCHEDULES=8 swift test --filter 'oneIssuePerFailedCheck'")
        }, "\(recorded.first ?? "")")

        // A passing report: any issue it recorded would fail this test.
        let passing = await ProviderConformanceKit.hammer(Self.quick, name: "StaticCredentials", instances: .perUser) { user in StaticCredentials(user.credentials) }
        #expect(passing.passed, "\(passing)")
        passing.record()
    }

    @Test("(the child process of the Swift Testing tests)", .enabled(if: ProcessInfo.processInfo.environment["IDPHARNESS_TESTING_CHILD"] != nil))
    func swiftTestingChild() async throws {
        var configuration = Self.quick
        configuration.controlledSchedules = 64
        switch ProcessInfo.processInfo.environment["IDPHARNESS_TESTING_CHILD"] ?? "" {
        case "attach":
            let report = await ProviderConformanceKit.hammer(Self.quick, name: "Static Credentials/attached", instances: .perUser) { user in StaticCredentials(user.credentials) }
            report.record()
        default:
            let make = try #require(ControlledShapes.broken.first { $0.name == "check-then-refresh" }?.make)
            let report = await ProviderConformanceKit.controlled(configuration, name: "check-then-refresh", instances: .perUser) { make($0) }
            let verdict = report.checks.map { "\($0.name)=\($0.verdict)" }.joined(separator: ",")
            print("TESTINGCHILD|\(report.controlledSeed)|\(report.controlledReproducer ?? "")|\(verdict)|\(report.checks.first?.detail ?? "")")
        }
    }

    /// The child's line: its report's seed, reproducer, verdicts and first detail.
    static func child(_ environment: [String: String], arguments: [String] = []) async throws -> [String] {
        let (status, output) = await NegativeControlTests.runChild(filter: "swiftTestingChild", environment: environment, arguments: arguments)
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("TESTINGCHILD|") }, "status \(status): \(output.suffix(2_000))")
        return line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
    }

    @Test("the report is attached to the test as Markdown and JSON, where --attachments-path keeps it")
    func reportAttached() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("idpharness-attachments-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = await NegativeControlTests.runChild(filter: "swiftTestingChild", environment: ["IDPHARNESS_TESTING_CHILD": "attach"],
                                                                   arguments: ["--attachments-path", directory.path])
        #expect(status == 0, "\(output.suffix(2_000))")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        let markdown = try #require(files.first { $0.hasSuffix("conformance.md") }, "\(files)")
        let json = try #require(files.first { $0.hasSuffix("conformance.json") }, "\(files)")
        #expect(markdown.hasPrefix("Static_Credentials_attached"), "\(markdown)")
        let text = try String(contentsOf: directory.appendingPathComponent(markdown), encoding: .utf8)
        #expect(text.contains("Static Credentials/attached") && text.contains("race hammer"), "\(text.prefix(500))")
        let data = try Data(contentsOf: directory.appendingPathComponent(json))
        #expect((try? JSONSerialization.jsonObject(with: data)) != nil)
    }

    @Test("a controlled seed from the environment reruns a printed failure: the same reproducer as a run configured with that seed; a value the kit cannot read is one failed configuration check")
    func seedFromTheEnvironment() async throws {
        let fields = try await Self.child(["IDPHARNESS_TESTING_CHILD": "controlled", ProviderConformanceKit.controlledSeedVariable: "7"])
        try #require(fields.count == 5, "\(fields)")
        #expect(fields[1] == "7")
        let make = try #require(ControlledShapes.broken.first { $0.name == "check-then-refresh" }?.make)
        var configuration = Self.quick
        configuration.controlledSchedules = 64
        configuration.controlledSeed = 7
        let here = await ProviderConformanceKit.controlled(configuration, name: "check-then-refresh", instances: .perUser) { make($0) }
        let reproducer = try #require(here.controlledReproducer, "\(here)")
        #expect(fields[2] == reproducer)
        #expect(here.controlledSeed == 7 && here.checks.map(\.name) == [ConformanceReport.CheckName.controlledInterleavings.rawValue, ConformanceReport.CheckName.noDataRace.rawValue],
                "\(here.checks.map(\.name))")

        let unreadable = try await Self.child(["IDPHARNESS_TESTING_CHILD": "controlled", ProviderConformanceKit.controlledSchedulesVariable: "many"])
        #expect(unreadable[3] == "configuration=FAILED", "\(unreadable)")
        #expect(unreadable[4].contains("IDPHARNESS_CONTROLLED_SCHEDULES='many' is not a whole number"), "\(unreadable)")
    }
}
