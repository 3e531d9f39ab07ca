@testable import BenchSupport
import Foundation
import Testing

@Suite("RESULTS.md")
struct ResultsTests {
    @Test("RESULTS.md names the machine, toolchain, date and settings, holds every table and the targets, and says it is generated")
    func resultsDocument() throws {
        var report = sampleReport()
        report.machine.cpu = "Example CPU @ 3.00GHz"
        let document = renderResults(report)
        #expect(document.hasPrefix("# idp-bench results\n"))
        #expect(document.contains("do not edit by hand"))
        #expect(document.contains(resultsCommand))
        for row in ["| processor | Example CPU @ 3.00GHz |", "| cores | 2 |", "| operating system | Linux |", "| toolchain | Swift 6.3 |",
                    "| date | 2026-11-22T00:00:00Z |", "| quick | no |", "| sections | providers, flows |"] {
            #expect(document.contains(row), "missing \(row)")
        }
        for title in ["provideCredentials hot path", "end to end", "lock contention", "memory with flows parked", "### targets"] {
            #expect(document.contains(title), "missing the table \(title)")
        }
        #expect(document.contains("| store vs floor | 1.25 | 1.50 | met |"))
        #expect(!document.contains("A `--quick` run"))
        // The report's own short machine table is replaced by the fuller one.
        #expect(!document.contains("idp-bench (idp-bench/1)"))
    }

    @Test("a quick run says it is no measurement to quote, and a machine without a known processor reads 'unknown'")
    func quickRunAndUnknownProcessor() {
        var report = sampleReport()
        report.settings.quick = true
        let document = renderResults(report)
        #expect(document.contains("**A `--quick` run**"))
        #expect(document.contains("| processor | unknown |"))
    }

    @Test("a report from before the processor was recorded still reads, without it; the processor round-trips")
    func processorIsAnAddedField() throws {
        var report = sampleReport()
        let old = report.json()
        #expect(!old.contains("\"cpu\""))
        #expect(try BenchReport.decode(from: Data(old.utf8)).machine.cpu == nil)
        report.machine.cpu = "Example CPU"
        #expect(try BenchReport.decode(from: Data(report.json().utf8)) == report)
    }
}
