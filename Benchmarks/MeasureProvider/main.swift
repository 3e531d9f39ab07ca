// Measure your own provider as idp-bench measures the library's (README, "Measure it").
// swift run -c release MeasureProviderExample [text|markdown|json]
import IdpHarness

let report = try await ProviderBenchmark.measure(name: "SessionCacheProvider", instances: .shared) { users in
    SessionCacheProvider(users)
}
print(render(report, as: ReportFormat(rawValue: CommandLine.arguments.dropFirst().first ?? "text") ?? .text))
