import Foundation
import CredentialProviders
import IdpHarness
import IdpPrimitives
import IdpSdk
import Testing

/// The controlled phase's calibration: each ordering bug of the corpus — written with the house
/// primitives (ControlledShapes.swift) and as app teams write them, with actors, tasks,
/// continuations, `NSLock`, `NSCondition` and `DispatchSemaphore` (UserWrittenShapes.swift) — is
/// found by the kit's controlled phase, at its defaults, in every kit run, and its reproducer
/// replays it 10 of 10; every fix passes every run and every replay.
@Suite("Calibration: the controlled phase finds every ordering bug of the corpus and replays it", .serialized)
struct ControlledCalibrationTests {
    /// Kit runs per shape: 20 where the full calibration is asked for
    /// (`IDPHARNESS_FULL_SUITE=1`, which `.ci/run` sets), 3 otherwise.
    static let runs = RaceCalibrationTests.runs

    /// The kit at its defaults with only the controlled phase (no race hammer, no engine flows).
    static var settings: ProviderConformanceKit.Configuration {
        var configuration = ProviderConformanceKit.Configuration()
        configuration.hammerRounds = 0
        configuration.instanceRounds = 0
        configuration.isolation = .inProcess
        return configuration
    }

    static func kitRun(_ name: String, _ make: @escaping ControlledShapes.Make) async -> ConformanceReport {
        await ProviderConformanceKit.hammer(settings, name: name) { make($0) }
    }

    /// Every broken shape of both corpora, and every fix, in the same order.
    static let broken = ControlledShapes.broken + UserWrittenShapes.broken
    static let fixed = ControlledShapes.fixed + UserWrittenShapes.fixed

    @Test("each broken shape is found by the controlled phase in every run, with the same reproducer from the same seed",
          arguments: broken.map(\.name))
    func brokenShapeFound(_ name: String) async throws {
        let make = try #require(Self.broken.first { $0.name == name }?.make)
        var reproducers: Set<String> = []
        for _ in 0..<Self.runs {
            let report = await Self.kitRun(name, make)
            let check = try #require(report.check("controlled interleavings"), "\(report)")
            #expect(!check.passed && check.exercised, "\(name): \(check.detail)")
            reproducers.insert(try #require(report.controlledReproducer, "\(check.detail)"))
        }
        #expect(reproducers.count == 1, "\(reproducers)")
        print("controlled calibration: \(name): found in \(Self.runs) of \(Self.runs) runs; \(reproducers.first ?? "")")
    }

    @Test("each fixed shape passes every run", arguments: fixed.map(\.name))
    func fixedShapePasses(_ name: String) async throws {
        let make = try #require(Self.fixed.first { $0.name == name }?.make)
        for _ in 0..<Self.runs {
            let report = await Self.kitRun(name, make)
            let check = try #require(report.check("controlled interleavings"))
            #expect(check.passed && check.exercised, "\(name): \(check.detail)")
        }
    }

    @Test("each broken shape's reproducer replays it 10 of 10, and the fix passes the same schedule 10 of 10",
          arguments: Array(zip(broken.map(\.name), fixed.map(\.name))))
    func reproducerReplays(_ broken: String, _ fixed: String) async throws {
        let makeBroken = try #require(Self.broken.first { $0.name == broken }?.make)
        let makeFixed = try #require(Self.fixed.first { $0.name == fixed }?.make)
        let report = await Self.kitRun(broken, makeBroken)
        let reproducer = try #require(report.controlledReproducer, "\(report)")
        let replay = try await ProviderConformanceKit.replay(reproducer, name: broken) { makeBroken($0) }
        #expect(replay.failures == 10, "\(replay)")
        #expect(replay.runs.allSatisfy { $0.divergence == nil && $0.uncontrolled == nil },
                "\(replay.runs.compactMap { $0.divergence ?? $0.uncontrolled })")
        let fix = try await ProviderConformanceKit.replay(reproducer, name: fixed) { makeFixed($0) }
        #expect(fix.failures == 0, "\(fix)")
    }
}

