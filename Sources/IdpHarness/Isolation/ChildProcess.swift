import Foundation
import IdpPrimitives

/// Runs a program as a child process and waits for it, on an OS thread of its own: the caller's
/// task suspends without blocking a thread of the Swift concurrency pool.
///
/// ```swift
/// let end = await ChildProcess(executable: path, arguments: ["--version"], output: "/tmp/out").run(limit: .seconds(60))
/// ```
///
/// The child's standard output and standard error go to one file (not a pipe: a grandchild that
/// keeps a pipe open would hold up the read long after the child ended). A child still running
/// after `limit` is killed (SIGKILL); its exit is learned from the termination handler, not
/// `waitUntilExit`, which waits on a run loop.
struct ChildProcess: Sendable {
    /// How the child ended.
    enum End: Sendable, Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)
        /// It was still running at the limit and was killed.
        case killedAtLimit
        /// It could not be started; the text says why.
        case notStarted(String)
        /// It closed its output but had not exited a minute after being killed.
        case lost
    }

    /// The child's end, and its process id (0 when it did not start).
    struct Result: Sendable, Equatable {
        let pid: Int32
        let end: End
        let elapsed: Duration

        /// The exit status, or the signal's number for a child a signal ended (as a shell shows
        /// `$?` less 128); -1 when it did not start, -2 when it was lost, SIGKILL at the limit.
        var status: Int32 {
            switch end {
            case .exited(let status), .signalled(let status): status
            case .killedAtLimit: SIGKILL
            case .notStarted: -1
            case .lost: -2
            }
        }
    }

    let executable: String
    let arguments: [String]
    /// The child's whole environment.
    let environment: [String: String]
    /// The file its standard output and error go to (created or emptied).
    let output: String

    /// This executable: `/proc/self/exe` on Linux, the main executable elsewhere.
    static var currentExecutable: String {
        #if os(Linux)
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        #else
        Bundle.main.executablePath ?? CommandLine.arguments[0]
        #endif
    }

    /// Starts the child and waits, on a new OS thread, until it exits or `limit` passes.
    func run(limit: Duration) async -> Result {
        await OSThreads.run { runBlocking(limit: limit) }
    }

    /// Starts the child and blocks the calling OS thread until it exits or `limit` passes.
    private func runBlocking(limit: Duration) -> Result {
        #if os(Linux) || os(macOS)
        let started = ContinuousClock.now
        guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
            return Result(pid: 0, end: .notStarted("could not create \(output)"), elapsed: .zero)
        }
        defer { try? file.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = file
        process.standardError = file
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            return Result(pid: 0, end: .notStarted("\(error)"), elapsed: ContinuousClock.now - started)
        }
        let pid = process.processIdentifier
        guard exited.wait(timeout: .now(plus: limit)) == .success else {
            kill(pid, SIGKILL)
            let gone = exited.wait(timeout: .now() + 60) == .success
            return Result(pid: pid, end: gone ? .killedAtLimit : .lost, elapsed: ContinuousClock.now - started)
        }
        let status = process.terminationStatus
        let end: End = process.terminationReason == .uncaughtSignal ? .signalled(status) : .exited(status)
        return Result(pid: pid, end: end, elapsed: ContinuousClock.now - started)
        #else
        return Result(pid: 0, end: .notStarted("this platform cannot start a child process"), elapsed: .zero)
        #endif
    }
}
