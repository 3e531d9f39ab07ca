import Foundation
import IdpHarness
import Testing

extension ConformanceReport {
    /// Records this report in the running Swift Testing test: one issue per failed check, at
    /// `sourceLocation`, each with the check's verdict and detail (for the controlled phase, its
    /// reproducer) and, on any failure, the line that reruns the test with the same controlled
    /// seed and budget; the whole report as Markdown and as JSON, attached to the test. A report
    /// that passed records no issue.
    ///
    /// ```swift
    /// @Test func myProviderPassesTheKit() async {
    ///     let report = await ProviderConformanceKit.run(name: "MyProvider", instances: .perUser) { user in MyProvider(user) }
    ///     report.record()          // an issue per failed check, the report attached
    /// }
    /// ```
    ///
    /// Attachments are kept where `swift test --attachments-path DIR` says. Outside a running
    /// test nothing is recorded.
    /// - Parameter sourceLocation: Where the issues point; leave the default (the call).
    public func record(sourceLocation: SourceLocation = #_sourceLocation) {
        let file = Self.fileName(providerName)
        Attachment.record(description, named: "\(file) conformance.md", sourceLocation: sourceLocation)
        Attachment.record(json(), named: "\(file) conformance.json", sourceLocation: sourceLocation)
        let failed = checks.filter { !$0.passed }
        guard !failed.isEmpty else { return }
        let rerun = rerunLine(testName: Test.current?.name)
        for check in failed {
            let provider = providerName.isEmpty ? "" : "\(providerName): "
            Issue.record(Comment(rawValue: "\(provider)\(check.name) \(check.verdict): \(check.detail)\n\(rerun)"), sourceLocation: sourceLocation)
        }
    }

    /// "rerun: IDPHARNESS_CONTROLLED_SEED=… IDPHARNESS_CONTROLLED_SCHEDULES=… swift test --filter …".
    func rerunLine(testName: String?) -> String {
        let filter = testName.map { " --filter '\(Self.filterPattern($0))'" } ?? ""
        return "rerun: \(ProviderConformanceKit.controlledSeedVariable)=\(controlledSeed) "
            + "\(ProviderConformanceKit.controlledSchedulesVariable)=\(controlledSchedules) swift test\(filter)"
    }

    /// A `--filter` pattern that matches `name` literally: a test function's name, without its
    /// argument list, with the regular expression's special characters escaped.
    static func filterPattern(_ name: String) -> String {
        let base = name.split(separator: "(", maxSplits: 1).first.map(String.init) ?? name
        return base.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
    }

    /// The provider's name as a file name: letters, digits, `-` and `_` kept, the rest `_`.
    static func fileName(_ name: String) -> String {
        let kept = name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? String($0) : "_" }.joined()
        return kept.isEmpty ? "provider" : kept
    }
}
