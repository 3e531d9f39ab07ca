import BenchSupport
import Foundation
import IdpPrimitives

/// A run that cannot go on, with the reason.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The progress line on stderr: rewritten in place on a terminal, one line per update otherwise
/// (at most one a second, so logs stay short).
final class Progress: Sendable {
    private let started = DispatchTime.now().uptimeNanoseconds
    private let lastLine = LockedValue<UInt64>(0)
    private let isTerminal = isatty(STDERR_FILENO) != 0

    func report(_ text: String, force: Bool = false) {
        let now = DispatchTime.now().uptimeNanoseconds
        let write = lastLine.withLock { last -> Bool in
            guard force || isTerminal || now - last >= 1_000_000_000 else { return false }
            last = now
            return true
        }
        guard write else { return }
        let elapsed = String(format: "%5.1f s", Double(now - started) / 1e9)
        let line = "idp-bench \(elapsed)  \(text)"
        FileHandle.standardError.write(Data((isTerminal ? "\r\u{1B}[K" + line : line + "\n").utf8))
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

extension Array {
    /// The middle element when ordered by `key` (the upper middle of an even count): how every
    /// section reports a cell measured in several rounds. The array must not be empty.
    func median<Key: Comparable>(by key: (Element) -> Key) -> Element {
        sorted { key($0) < key($1) }[count / 2]
    }
}


/// The machine the figures were measured on.
func currentMachine() -> Machine {
    #if swift(>=6.4)
    let swift = "6.4 or later"
    #elseif swift(>=6.3)
    let swift = "6.3"
    #elseif swift(>=6.2)
    let swift = "6.2"
    #elseif swift(>=6.1)
    let swift = "6.1"
    #else
    let swift = "6.0"
    #endif
    let date = ISO8601DateFormatter().string(from: Date())
    let allowed = Array(Affinity.allowed().prefix(Processors.available))
    return Machine(cores: Processors.available, os: ProcessInfo.processInfo.operatingSystemVersionString,
                   swift: swift, date: date, cpu: Machine.processorModel(),
                   physicalCores: CPUTopology.read(cpus: allowed)?.physicalCores(of: allowed))
}

/// The resident memory of this process, in bytes, from `/proc/self/statm` (Linux); `nil` elsewhere.
func residentBytes() -> UInt64? {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = UInt64(fields[1]) else { return nil }
    return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
}

/// The OS threads of this process, from `/proc/self/task` (Linux); `nil` elsewhere.
func osThreadCount() -> Int? {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count
}
