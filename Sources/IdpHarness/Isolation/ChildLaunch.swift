import Foundation

/// How this program is started again so that the child makes a given kit call: the same
/// executable, with the arguments that lead it there.
///
/// Under Swift Testing (`--testing-library swift-testing`) the child runs only the calling test,
/// selected by ``KitCall/testFilter``, and none of the parent's own output options (an xUnit file,
/// an event stream, attachments) or repetitions, so it writes nothing of the parent's. A plain
/// executable is started with its own arguments. A test run by XCTest has no filter the kit can
/// build from the call site, so it gets no child.
struct ChildLaunch: Sendable, Equatable {
    let executable: String
    let arguments: [String]

    /// Swift Testing's options whose value the child must not share with the parent, and those
    /// that select the tests (replaced by the call's filter).
    static let droppedOptions: Set<String> = [
        "--filter", "--skip", "--xunit-output", "--event-stream-output-path", "--event-stream-output", "--experimental-event-stream-output",
        "--attachments-path", "--experimental-attachments-path", "--repetitions", "--repeat-until",
    ]

    /// The launch that makes `call` in a child, or why there is none.
    /// - Parameters:
    ///   - call: The kit call the child is to make.
    ///   - arguments: This process's arguments, the executable's path first.
    ///   - executable: This process's executable.
    static func forCall(_ call: KitCall, arguments: [String] = CommandLine.arguments,
                        executable: String = ChildProcess.currentExecutable) -> Swift.Result<ChildLaunch, Unavailable> {
        #if os(Linux) || os(macOS)
        let rest = Array(arguments.dropFirst())
        let swiftTesting = zip(rest, rest.dropFirst()).contains { $0 == "--testing-library" && $1 == "swift-testing" }
        if swiftTesting {
            var kept: [String] = []
            var index = 0
            while index < rest.count {
                let argument = rest[index]
                if droppedOptions.contains(argument) {
                    index += 2
                    continue
                }
                if let equals = argument.firstIndex(of: "="), droppedOptions.contains(String(argument[..<equals])) {
                    index += 1
                    continue
                }
                kept.append(argument)
                index += 1
            }
            return .success(ChildLaunch(executable: executable, arguments: kept + ["--filter", call.testFilter]))
        }
        let name = URL(fileURLWithPath: executable).lastPathComponent
        if rest.contains("--testing-library") || name.hasSuffix(".xctest") || name == "xctest" {
            return .failure(.init(reason: "this test process does not run Swift Testing (\(name) \(rest.joined(separator: " "))), "
                + "and the kit selects the calling test in its child by Swift Testing's filter"))
        }
        return .success(ChildLaunch(executable: executable, arguments: rest))
        #else
        return .failure(.init(reason: "this platform cannot start a child process"))
        #endif
    }

    /// Why no child can make the call.
    struct Unavailable: Error, Sendable, Equatable {
        let reason: String
    }
}
