import BenchSupport
import Foundation

/// `idp-bench compare BASE.json NEW.json [--threshold PERCENT]`: prints every figure's change;
/// returns 2 when one regressed by more than the threshold, 0 otherwise, 1 on unreadable input.
func runCompare(_ arguments: [String]) -> Int32 {
    var paths: [String] = []
    var threshold = 10.0
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        if argument == "--threshold" {
            guard let text = iterator.next(), let value = Double(text), value >= 0 else {
                fail("--threshold needs a percentage ≥ 0", status: 1)
            }
            threshold = value
        } else {
            paths.append(argument)
        }
    }
    guard paths.count == 2 else { fail("usage: idp-bench compare BASE.json NEW.json [--threshold PERCENT]", status: 1) }
    var reports: [BenchReport] = []
    for path in paths {
        guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)", status: 1) }
        do {
            reports.append(try BenchReport.decode(from: data))
        } catch {
            fail("\(path): \(error)", status: 1)
        }
    }
    let comparison = Comparison.compare(base: reports[0], new: reports[1], thresholdPercent: threshold)
    print(comparison.render())
    return comparison.regressed ? 2 : 0
}
