import Foundation
import ThreadSanitizerHook

/// What ThreadSanitizer has reported in this process, read through its `__tsan_on_report` hook
/// (the `ThreadSanitizerHook` target): how many reports so far, and each report's kind, accesses
/// and stacks.
///
/// ```swift
/// let before = ThreadSanitizerReports.count
/// runPhase()
/// let found = ThreadSanitizerReports.reports(since: before)   // blamed on this phase
/// ```
///
/// The runtime calls the hook after it has printed a report, so this sees exactly what it prints
/// (after its own deduplication: a race at the same stacks as an earlier one is not reported
/// again unless `TSAN_OPTIONS` has `suppress_equal_stacks=0`). Reports are attributed to a phase by
/// counting before and after it, as Go's `go test -race` attributes races to tests: a race between
/// two threads of another test running at the same time would be blamed on the phase too.
package enum ThreadSanitizerReports {
    /// Whether this process runs with ThreadSanitizer (built with `--sanitize=thread`).
    package static var isActive: Bool { idp_tsan_is_active() != 0 }

    /// Reports printed since the process started.
    package static var count: UInt64 { idp_tsan_report_count() }

    /// The reports numbered `first ..< count`, symbolized; reports the ring no longer holds (more
    /// than 128 since) are left out, and `lost` says how many.
    package static func reports(since first: UInt64) -> (found: [ThreadSanitizerReport], lost: Int) {
        let last = count
        var reports: [ThreadSanitizerReport] = []
        var lost = 0
        var index = first
        while index < last {
            var raw = IdpTSanReport()
            if idp_tsan_report_at(index, &raw) != 0 {
                reports.append(ThreadSanitizerReport(raw, number: index))
            } else {
                lost += 1
            }
            index += 1
        }
        return (reports, lost)
    }

    /// "function file:line" for a return address, from the runtime's symbolizer; `nil` without it.
    static func symbolize(_ pc: UInt) -> String? {
        var buffer = [CChar](repeating: 0, count: 1_024)
        guard idp_tsan_symbolize(pc, &buffer, buffer.count) != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The Swift symbol demangled (`MutexProvider.provideCredentials(_:) -> …`), or as it is.
    static func demangle(_ symbol: String) -> String {
        var buffer = [CChar](repeating: 0, count: 2_048)
        guard idp_swift_demangle(symbol, &buffer, buffer.count) != 0 else { return symbol }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Names what the process is doing, for the note printed if it dies on a fatal signal
    /// (`nil` clears it). The previous handlers (Swift's backtracer, say) still run after the note.
    static func noteForCrash(_ text: String?) {
        if let text { idp_crash_note_set(text) } else { idp_crash_note_set(nil) }
    }
}

/// One ThreadSanitizer report, as the hook kept it.
public struct ThreadSanitizerReport: Sendable, Equatable, Codable {
    /// One memory access of the report, with its stack (innermost frame first).
    public struct Access: Sendable, Equatable, Codable {
        /// ThreadSanitizer's number of the thread (T0 is the main thread).
        public let thread: Int
        /// Whether the access wrote.
        public let isWrite: Bool
        /// Whether the access was atomic.
        public let isAtomic: Bool
        /// Bytes accessed.
        public let size: Int
        /// "symbol file:line" per frame, innermost first; symbols as the binary has them
        /// (mangled), see `ThreadSanitizerReport.readable(_:)`.
        public let frames: [String]

        /// An access of a report.
        /// - Parameters:
        ///   - thread: ThreadSanitizer's number of the thread.
        ///   - isWrite: Whether the access wrote.
        ///   - isAtomic: Whether it was atomic.
        ///   - size: Bytes accessed.
        ///   - frames: "symbol file:line" per frame, innermost first.
        package init(thread: Int, isWrite: Bool, isAtomic: Bool, size: Int, frames: [String]) {
            self.thread = thread
            self.isWrite = isWrite
            self.isAtomic = isAtomic
            self.size = size
            self.frames = frames
        }
    }

    /// The report's number in this process, from 0.
    public let number: UInt64
    /// The runtime's kind: `data-race`, `external-race`, `lock-order-inversion`, …
    public let kind: String
    /// The accesses of a race (two), with their stacks; empty for other kinds.
    public let accesses: [Access]
    /// The report's first stack (for a lock-order inversion, where the cycle was closed).
    public let stack: [String]

    init(_ raw: IdpTSanReport, number: UInt64) {
        self.number = number
        var kind = raw.kind.map { String(cString: $0) } ?? "unknown"
        if kind == "external-race", raw.tag == 1 { kind = "Swift access race" }
        self.kind = kind
        var raw = raw
        let count = Int(max(0, min(raw.accessCount, IDP_TSAN_ACCESSES)))
        accesses = withUnsafeBytes(of: &raw.accesses) { buffer in
            let all = buffer.bindMemory(to: IdpTSanAccess.self)
            return (0..<count).map { index in
                let access = all[index]
                return Access(thread: Int(access.thread), isWrite: access.isWrite != 0, isAtomic: access.isAtomic != 0,
                              size: Int(access.size), frames: Self.frames(access.frames, count: access.frameCount))
            }
        }
        stack = Self.frames(raw.stackFrames, count: raw.stackFrameCount)
    }

    /// A report made by hand (for tests of the verdict).
    package init(number: UInt64, kind: String, accesses: [Access], stack: [String]) {
        self.number = number
        self.kind = kind
        self.accesses = accesses
        self.stack = stack
    }

    private static func frames<Tuple>(_ tuple: Tuple, count: Int32) -> [String] {
        var tuple = tuple
        return withUnsafeBytes(of: &tuple) { buffer in
            buffer.bindMemory(to: UInt.self).prefix(Int(max(0, min(count, IDP_TSAN_FRAMES)))).map { pc in
                ThreadSanitizerReports.symbolize(pc) ?? "0x" + String(pc, radix: 16)
            }
        }
    }

    /// Whether this is a race report (two unordered accesses), as opposed to a lock-order
    /// inversion, a use after free or a misuse of a mutex.
    public var isRace: Bool { kind.contains("race") }

    /// Whether both accesses ran inside the closure of `Synchronization.Mutex`'s `withLock`.
    ///
    /// On this Linux toolchain `Mutex` hands over through an atomic and a futex system call inside
    /// the (uninstrumented) Synchronization library, so ThreadSanitizer sees no ordering at all and
    /// reports every access made under a `Mutex` from two threads, contended or not, as a race. Its
    /// `withLock` is `@_transparent`, so no frame of its own shows; what shows is the closure, whose
    /// mangled type — an `inout sending` value (`zYu`) passed to a non-escaping closure (`XE`) —
    /// is `withLock`'s signature. Not a race of the provider, unless two different `Mutex`es guard
    /// the same memory; release builds that inline the closure lose this mark.
    public var isMutexHandOff: Bool {
        isRace && accesses.count == 2 && accesses.allSatisfy { access in
            access.frames.contains { Self.isMutexClosure($0) }
        }
    }

    static func isMutexClosure(_ frame: String) -> Bool {
        guard let symbol = frame.split(separator: " ").first, let closure = symbol.range(of: "XEfU") else { return false }
        return symbol[..<closure.lowerBound].contains("zYu")
    }

    /// The first frame that is neither ThreadSanitizer's runtime, the Swift runtime or standard
    /// library, Dispatch, a compiler-made thunk, nor the kit, demangled: where in the provider the
    /// access was, when the stack shows it.
    public var providerFrame: String? {
        let frames = (accesses.flatMap(\.frames) + stack).map(Self.readable)
        return frames.first { frame in
            // Judged by the function's own name: the types in its signature (a parameter of type
            // `Swift.Result`, say) say nothing of whose code it is.
            let name = Self.withoutSignatures(frame)
            return !Self.foreignMarkers.contains { name.hasPrefix($0) || name.contains(" " + $0) }
        }
    }

    static let foreignMarkers = ["__tsan", "__interceptor", "swift_", "Swift.", "Synchronization.", "Foundation.", "Dispatch.", "_dispatch",
                                 "libswift", "__libc", "pthread_", "IdpHarness.", "protocol witness for IdpSdk.", "reabstraction thunk",
                                 "thunk for ", "0x"]

    /// `frame` without what stands between parentheses or angle brackets (a function's
    /// parameters, a generic's arguments).
    static func withoutSignatures(_ frame: String) -> String {
        var depth = 0
        var result = ""
        var previous: Character = " "
        for character in frame {
            // The ">" of an arrow, "->", closes nothing.
            if character == "(" || character == "<" {
                depth += 1
            } else if (character == ")" || (character == ">" && previous != "-")) && depth > 0 {
                depth -= 1
            } else if depth == 0 {
                result.append(character)
            }
            previous = character
        }
        return result
    }

    /// A frame with its Swift symbol demangled: "MutexProvider.provideCredentials(…) file:line".
    package static func readable(_ frame: String) -> String {
        guard let space = frame.firstIndex(of: " ") else { return ThreadSanitizerReports.demangle(frame) }
        return ThreadSanitizerReports.demangle(String(frame[..<space])) + frame[space...]
    }

    /// The report as text: kind, then each access or stack with its frames.
    public var text: String {
        var lines = ["ThreadSanitizer report #\(number): \(kind)"]
        for (index, access) in accesses.enumerated() {
            lines.append("  \(index == 0 ? "access" : "previous access"): \(access.isAtomic ? "atomic " : "")\(access.isWrite ? "write" : "read") of size \(access.size) by thread T\(access.thread)")
            lines += access.frames.enumerated().map { "    #\($0.offset) \(Self.readable($0.element))" }
        }
        if !stack.isEmpty {
            lines.append("  stack:")
            lines += stack.enumerated().map { "    #\($0.offset) \(Self.readable($0.element))" }
        }
        return lines.joined(separator: "\n")
    }
}
