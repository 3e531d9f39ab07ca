import BenchSupport
import Foundation

/// `idp-bench compare BASE.json NEW.json [--threshold PERCENT]`, or with several runs a side
/// `idp-bench compare --base A.json B.json … --new C.json D.json … [--threshold PERCENT]`: prints
/// every figure's change (each side's median and range); returns 2 when one regressed by more than
/// the threshold with every new run worse than every base run, 0 otherwise, 1 on unreadable input.
func runCompare(_ arguments: [String]) -> Int32 {
    let usage = "usage: idp-bench compare BASE.json NEW.json [--threshold PERCENT]\n"
        + "       idp-bench compare --base BASE.json… --new NEW.json… [--threshold PERCENT]"
    enum Side { case plain, base, new }
    var plain: [String] = [], bases: [String] = [], news: [String] = []
    var side = Side.plain
    var threshold = 10.0
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
        switch argument {
        case "--threshold":
            guard let text = iterator.next(), let value = Double(text), value >= 0, value.isFinite else {
                fail("--threshold needs a percentage ≥ 0", status: 1)
            }
            threshold = value
        case "--base": side = .base
        case "--new": side = .new
        default:
            guard !argument.hasPrefix("--") else { fail("compare: unknown option \(argument)\n\(usage)", status: 1) }
            switch side {
            case .plain: plain.append(argument)
            case .base: bases.append(argument)
            case .new: news.append(argument)
            }
        }
    }
    if plain.count == 2, bases.isEmpty, news.isEmpty {
        bases = [plain[0]]
        news = [plain[1]]
    } else if !plain.isEmpty || bases.isEmpty || news.isEmpty {
        fail(usage, status: 1)
    }
    let comparison = Comparison.compare(bases: bases.map(readReport), news: news.map(readReport), thresholdPercent: threshold)
    print(comparison.render())
    return comparison.regressed ? 2 : 0
}

/// The report saved at `path`; exits with status 1, naming the file, when it cannot be read.
private func readReport(_ path: String) -> BenchReport {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)", status: 1) }
    do {
        return try BenchReport.decode(from: data)
    } catch {
        fail("\(path): \(error)", status: 1)
    }
}
