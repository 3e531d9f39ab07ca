import Foundation
import IdpPrimitives

/// Runs a program as a child process and waits for it, on an OS thread of its own: the caller's
/// task suspends without blocking a thread of the Swift concurrency pool.
///
/// ```swift
/// let end = await ChildProcess(executable: path, arguments: ["--version"], environment: [:], output: "/tmp/out").run(limit: .seconds(60))
/// ```
///
/// The child's standard output and standard error go to one file (not a pipe: a grandchild that
/// keeps a pipe open would hold up the read long after the child ended). It is started with
/// `posix_spawn` in a process group of its own and waited for with `waitpid`, not through
/// Foundation's `Process`, which learns of a child's end when every copy of a socket the child
/// inherited is closed: a crash reporter that a dying child starts and leaves running keeps that
/// socket open, and the child's end unseen. Once the child has ended, whatever is left
/// in its process group is killed. A child still running after `limit` is killed (SIGKILL).
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
    }

    /// The child's end, and its process id (0 when it did not start).
    struct Result: Sendable, Equatable {
        let pid: Int32
        let end: End
        let elapsed: Duration

        /// The exit status, or the signal's number for a child a signal ended (as a shell shows
        /// `$?` less 128); -1 when it did not start, SIGKILL at the limit.
        var status: Int32 {
            switch end {
            case .exited(let status), .signalled(let status): status
            case .killedAtLimit: SIGKILL
            case .notStarted: -1
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
        let file = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { return Result(pid: 0, end: .notStarted("could not create \(output): \(String(cString: strerror(errno)))"), elapsed: .zero) }
        defer { close(file) }

        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, file, 1)
        posix_spawn_file_actions_adddup2(&actions, file, 2)
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, the default action for signals this process ignores or
        // handles, and no signal blocked.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            return Result(pid: 0, end: .notStarted(String(cString: strerror(spawned))), elapsed: ContinuousClock.now - started)
        }

        // The first of the child's end and the limit decides, under one lock; the child is
        // waited for (not reaped) first, so that its pid and process group stay its own until
        // whatever it left running is killed.
        enum Wait { case running, ended, killedAtLimit }
        let wait = LockedValue(Wait.running)
        let child = pid
        DispatchQueue.global().asyncAfter(deadline: .now(plus: limit)) {
            let kills = wait.withLock { state -> Bool in
                guard state == .running else { return false }
                state = .killedAtLimit
                return true
            }
            if kills { kill(-child, SIGKILL) }
        }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        let killed = wait.withLock { state -> Bool in
            if state == .running { state = .ended }
            return state == .killedAtLimit
        }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let elapsed = ContinuousClock.now - started
        if killed { return Result(pid: pid, end: .killedAtLimit, elapsed: elapsed) }
        // The wait status: the signal in the low seven bits, else the exit status above them.
        let signal = status & 0x7f
        return Result(pid: pid, end: signal != 0 ? .signalled(signal) : .exited((status >> 8) & 0xff), elapsed: elapsed)
        #else
        return Result(pid: 0, end: .notStarted("this platform cannot start a child process"), elapsed: .zero)
        #endif
    }
}
