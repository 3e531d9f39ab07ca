import Foundation
import IdpPrimitives

/// What a child process running the kit has done so far, one JSON line per event, written as it
/// happens: what the parent knows of a child that crashed.
enum KitProgressEvent: Codable, Sendable, Equatable {
    /// The child reached the kit call and began the run.
    case started(pid: Int32, threadSanitizer: Bool)
    /// A phase began ("the race hammer", "the engine's flows", …: read after "during").
    case phase(String)
    /// A round of the race hammer began (0: the warm-up).
    case hammerRound(Int, of: Int)
    /// A check was judged, with its outcome table.
    case judged(ReportTransfer.CheckForm, outcomes: ConformanceReport.OutcomeTable?)
    /// The report is written.
    case reported
}

/// The progress file of a child process: each event one `write(2)` of one line, appended, so
/// that what was written before a crash is in the file, whole.
final class ProgressLog: Sendable {
    private let descriptor: Int32

    /// Opens `path` for appending (creating it); `nil` when it cannot.
    init?(path: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func write(_ event: KitProgressEvent) {
        guard var line = try? JSONEncoder().encode(event) else { return }
        line.append(UInt8(ascii: "\n"))
        _ = line.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
    }

    /// The events in the file at `path`, in order; a line that does not decode (cut short) is
    /// left out.
    static func read(path: String) -> [KitProgressEvent] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(KitProgressEvent.self, from: Data($0)) }
    }
}

/// Where the kit's run tells a progress log what it is doing: set only in a child process, for
/// the one run it was started for; everywhere else each note is a lock and a `nil`.
enum KitProgress {
    private static let log = LockedValue<ProgressLog?>(nil)

    /// Notes go to `progress` from now on (`nil`: nowhere).
    static func record(to progress: ProgressLog?) {
        log.withLock { $0 = progress }
    }

    static func note(_ event: KitProgressEvent) {
        log.withLock { $0 }?.write(event)
    }

    /// The run is about to perform `action`, with its phases in `state`. When the race hammer
    /// has just ended, its checks are judged at once, so that a crash later in the run still
    /// leaves their verdicts behind.
    static func note(_ action: Run.Phases.Action, state: Run.Phases.State, configuration: ProviderConformanceKit.Configuration) {
        guard let progress = log.withLock({ $0 }) else { return }
        if case .settingUp(let direct?) = state {
            let evidence = ConformanceEvidence(
                configuration: configuration, hammer: direct.hammer, severalInstances: direct.instances,
                severalInstancesNotExercised: direct.instancesNotExercised,
                controlled: direct.controlled, controlledNotExercised: direct.controlledNotExercised,
                threadSanitizer: ThreadSanitizerEvidence(isActive: ThreadSanitizerReports.isActive, phases: direct.reports, reportFile: nil),
                elapsed: .zero)
            for verdict in ConformanceBattery.raceChecks.compactMap({ $0.judge(evidence) }) {
                progress.write(.judged(.init(verdict.check), outcomes: verdict.outcomes))
            }
        }
        switch action {
        case .runHammer: progress.write(.phase("the race hammer"))
        case .setUp: progress.write(.phase("the IDP's set-up"))
        case .runFlows: progress.write(.phase("the engine's flows"))
        case .runBlockingFlows: progress.write(.phase("the flows under timeouts"))
        case .finish: progress.write(.phase("the run's judging"))
        }
    }

    /// A round of the race hammer begins (0: the warm-up).
    static func hammerRound(_ round: Int, of rounds: Int) {
        note(.hammerRound(round, of: rounds))
    }
}
