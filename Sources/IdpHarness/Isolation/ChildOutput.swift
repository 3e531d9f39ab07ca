import Foundation

/// What a child process printed before it ended, read for the crash verdict: the runtime's fatal
/// error line, the crashed thread's stack (the Swift backtracer's, or ThreadSanitizer's when it
/// handled the signal), the signal ThreadSanitizer named, and ThreadSanitizer's reports.
struct ChildOutput: Sendable {
    let lines: [Substring]

    init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// The runtime's (or the C library's) last words: "File.swift:141: Fatal error: …",
    /// "free(): double free detected …". The first such line; several threads print the same.
    var message: String? {
        let markers = ["Fatal error:", "Precondition failed", "Assertion failed", "free(): ", "malloc(): ", "realloc(): ", "double free or corruption",
                       "corrupted size", "munmap_chunk(): "]
        return lines.first { line in markers.contains { line.contains($0) } }.map { String($0.trimmingCharacters(in: .whitespaces).prefix(400)) }
    }

    /// The signal that ended the process, as the Swift backtracer ("*** Signal 4: Backtracing")
    /// or ThreadSanitizer ("ERROR: ThreadSanitizer: SEGV on unknown address") named it; `nil`
    /// when neither did.
    var signal: Int32? {
        for line in lines {
            if let match = line.firstMatch(of: #/\*\*\* Signal (\d+): Backtracing/#), let number = Int32(match.1) { return number }
            if let match = line.firstMatch(of: #/ERROR: ThreadSanitizer: ([A-Z]+) on /#), let number = Self.signals[String(match.1)] { return number }
        }
        return nil
    }

    static let signals: [String: Int32] = ["SEGV": SIGSEGV, "ILL": SIGILL, "ABRT": SIGABRT, "BUS": SIGBUS, "FPE": SIGFPE, "TRAP": SIGTRAP]

    /// The crashed thread's frames, innermost first, at most `limit`: "symbol at file:line:column"
    /// or "symbol in image".
    func stack(limit: Int = 16) -> [String] {
        let frames = backtracerStack()
        return Array((frames.isEmpty ? sanitizerStack() : frames).prefix(limit))
    }

    /// The Swift backtracer's frames of the thread it names as crashed.
    private func backtracerStack() -> [String] {
        guard let start = lines.firstIndex(where: { $0.wholeMatch(of: #/Thread \d+.* crashed:/#) != nil }) else { return [] }
        var frames: [String] = []
        for line in lines[(start + 1)...] {
            if let match = line.wholeMatch(of: #/\s*\d+\s+(?:\[[a-z]+\]\s+)*0x[0-9a-f]+\s+(.*)/#) {
                var frame = String(match.1).replacing(#/ \+ \d+ in /#, with: " in ")
                if let at = frame.firstMatch(of: #/ in \S+ at /#) { frame = frame[..<at.range.lowerBound] + " at " + frame[at.range.upperBound...] }
                frames.append(frame)
            } else if !frames.isEmpty, !line.trimmingCharacters(in: .whitespaces).isEmpty, line.trimmingCharacters(in: .whitespaces) != "..." {
                break
            }
        }
        return frames
    }

    /// ThreadSanitizer's frames of the fatal signal it reported.
    private func sanitizerStack() -> [String] {
        guard let start = lines.firstIndex(where: { $0.contains("ERROR: ThreadSanitizer: ") && $0.contains(" on ") }) else { return [] }
        var frames: [String] = []
        for line in lines[(start + 1)...] {
            if let frame = Self.sanitizerFrame(line) {
                frames.append(frame)
            } else if !frames.isEmpty, !line.hasPrefix("ThreadSanitizer:DEADLYSIGNAL") {
                break
            }
        }
        return frames.map { frame in
            let symbol = frame.split(separator: " ", maxSplits: 1)
            return ThreadSanitizerReports.demangle(String(symbol[0])) + (symbol.count > 1 ? " at " + symbol[1] : "")
        }
    }

    /// "symbol file:line" (the form of ``ThreadSanitizerReport``'s frames) from a frame line of
    /// ThreadSanitizer's text, `    #3 $s…F /path/File.swift:25:9 (binary+0x1234) (BuildId: …)`;
    /// a frame without a source location names its image.
    static func sanitizerFrame(_ line: Substring) -> String? {
        guard let match = line.wholeMatch(of: #/\s+#\d+ (\S+) (.*?)(?: \(BuildId: [0-9a-f]+\))?/#) else { return nil }
        let symbol = String(match.1)
        var rest = String(match.2)
        if let image = rest.firstMatch(of: #/ ?\(([^()+]+)\+0x[0-9a-f]+\)$/#) {
            let location = String(rest[..<image.range.lowerBound])
            rest = location.isEmpty || location == "<null>" ? "(\(image.1))" : location
        }
        if let column = rest.firstMatch(of: #/:(\d+):\d+$/#) { rest = rest[..<column.range.lowerBound] + ":" + column.1 }
        return symbol + " " + rest
    }

    /// ThreadSanitizer's reports in the text, in order, read into the form of the reports the
    /// kit reads through the runtime's hook.
    var sanitizerReports: [ThreadSanitizerReport] {
        var reports: [ThreadSanitizerReport] = []
        var index = 0
        while index < lines.count {
            guard let header = lines[index].firstMatch(of: #/WARNING: ThreadSanitizer: (.+?)(?: \(pid=\d+\))?$/#) else {
                index += 1
                continue
            }
            let kind = Self.kind(String(header.1))
            var accesses: [ThreadSanitizerReport.Access] = []
            var stack: [String] = []
            var current: (thread: Int, isWrite: Bool, isAtomic: Bool, size: Int)?
            var frames: [String] = []
            var inOtherSection = false
            func flush() {
                if let access = current { accesses.append(.init(thread: access.thread, isWrite: access.isWrite, isAtomic: access.isAtomic, size: access.size, frames: frames)) }
                else if !inOtherSection, stack.isEmpty, !frames.isEmpty { stack = frames }
                current = nil
                frames = []
            }
            index += 1
            while index < lines.count, !lines[index].hasPrefix("SUMMARY: ThreadSanitizer"), !lines[index].hasPrefix("WARNING: ThreadSanitizer") {
                let line = lines[index]
                if let frame = Self.sanitizerFrame(line) {
                    frames.append(frame)
                } else if let access = Self.access(line) {
                    flush()
                    current = access
                    inOtherSection = false
                } else if line.hasPrefix("  "), !line.hasPrefix("    ") {
                    flush()
                    // "Location is …", "Thread T3 … created by …", "Mutex M1 …": not an access.
                    inOtherSection = !line.contains("acquired here") && !line.contains("Cycle in lock order")
                }
                index += 1
            }
            flush()
            reports.append(ThreadSanitizerReport(number: UInt64(reports.count), kind: kind, accesses: accesses, stack: stack))
        }
        return reports
    }

    /// The runtime's kind, as the hook names it, for the kind ThreadSanitizer's text prints.
    static func kind(_ printed: String) -> String {
        switch printed {
        case "data race": "data-race"
        case "Swift access race": "Swift access race"
        case "race on external object": "external-race"
        case "lock-order-inversion (potential deadlock)": "lock-order-inversion"
        default: printed.replacingOccurrences(of: " ", with: "-")
        }
    }

    /// An access line of a report: "  Write of size 8 at 0x… by thread T3:", "  Previous atomic
    /// read of size 4 … by main thread:", "  Modifying access of Swift variable at 0x… by thread T2:".
    static func access(_ line: Substring) -> (thread: Int, isWrite: Bool, isAtomic: Bool, size: Int)? {
        guard line.hasPrefix("  "), !line.hasPrefix("    "), line.hasSuffix(":") || line.contains("):"),
              let by = line.firstMatch(of: #/ by (?:thread T(\d+)|main thread)/#), !line.contains("created by"), !line.contains("Location is") else { return nil }
        let lower = line.lowercased()
        guard lower.contains("read") || lower.contains("write") || lower.contains("access") else { return nil }
        let size = line.firstMatch(of: #/of size (\d+)/#).flatMap { Int($0.1) } ?? 0
        return (by.1.flatMap { Int($0) } ?? 0, lower.contains("write") || lower.contains("modifying"), lower.contains("atomic"), size)
    }
}
