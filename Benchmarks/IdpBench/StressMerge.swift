import Foundation
import IdpHarness

extension StressCommand {
    /// `idp-bench stress merge`: reads the json reports of one campaign's shards and writes them as
    /// one, in ``Invocation/format``.
    /// - Returns: 0 when every invariant held in every shard, 1 when one broke or was not
    ///   exercised, 2 when a report cannot be read or the reports do not merge.
    static func merge(_ files: [String], invocation: Invocation) -> Int32 {
        var summaries: [Summary] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { return bad("cannot read \(file)") }
            do {
                summaries.append(try Summary(json: data))
            } catch {
                return bad("\(file): \(error)")
            }
        }
        let merged: Summary, report: SystemStress.Report
        do {
            merged = try Summary.merged(summaries)
            report = try merged.report()
        } catch {
            return bad("cannot merge: \(error)")
        }
        let text = rendered(report, merged, format: invocation.format)
        if let output = invocation.output {
            guard FileManager.default.createFile(atPath: output, contents: Data((text + "\n").utf8)) else { return bad("cannot write \(output)") }
        } else {
            print(text)
        }
        return merged.passed ? 0 : 1
    }
}
