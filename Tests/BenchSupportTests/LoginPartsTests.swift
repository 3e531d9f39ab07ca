@testable import BenchSupport
import Foundation
import IdpPrimitives
import Testing

@Suite("Lone login parts")
struct LoginPartsTests {
    /// A recorder whose phases were noted `gaps` µs apart, in ``LoginPhase`` order, from 1 ms.
    func recorder(gaps: [UInt64]) -> PhaseRecorder {
        let recorder = PhaseRecorder()
        var time: UInt64 = 1_000_000
        for (phase, gap) in zip(LoginPhase.allCases, [0] + gaps) {
            time += gap * 1_000
            recorder.note(phase, at: time)
        }
        return recorder
    }

    /// One µs gap per phase after the first, the n-th part taking n µs.
    var steadyGaps: [UInt64] { (1..<UInt64(LoginPhase.allCases.count)).map { $0 } }

    @Test("each part is the time between its two phases, and each kind adds its parts")
    func partsAndKinds() throws {
        var record = LoginPartsRecord()
        let recorded = record.record(recorder(gaps: steadyGaps))
        #expect(recorded)
        let figures = try #require(record.figures)
        #expect(figures.logins == 1)
        // Phase k is noted k(k+1)/2 µs after the first.
        func at(_ phase: LoginPhase) -> Double { Double(phase.rawValue * (phase.rawValue + 1) / 2) }
        for (part, definition) in zip(figures.parts, LoginPartsRecord.parts) {
            let expected = at(definition.to) - at(definition.from)
            #expect(abs(part.us - expected) <= expected * 0.01, "\(part.name): \(part.us) µs, expected \(expected)")
        }
        for kind in LoginPartsRecord.kinds {
            let expected = LoginPartsRecord.parts.filter { $0.kind == kind }.map { at($0.to) - at($0.from) }.reduce(0, +)
            #expect(abs(figures.us(of: kind) - expected) <= expected * 0.01, "\(kind): \(figures.us(of: kind)) µs, expected \(expected)")
        }
        let whole = Double(steadyGaps.reduce(0, +))
        #expect(abs(figures.loginP50Us - whole) <= whole * 0.01)
    }

    @Test("the parts cover the login from its first phase to its last, each phase once")
    func partsCoverTheLogin() {
        let parts = LoginPartsRecord.parts
        #expect(parts.first?.from == LoginPhase.allCases.first)
        #expect(parts.last?.to == LoginPhase.allCases.last)
        for (earlier, later) in zip(parts, parts.dropFirst()) { #expect(earlier.to == later.from) }
        #expect(Set(parts.map(\.kind)).isSubset(of: Set(LoginPartsRecord.kinds)))
    }

    @Test("a login with a phase missing or out of order is refused, and nothing of it is kept")
    func refusesIncompleteLogins() {
        var record = LoginPartsRecord()
        let missing = PhaseRecorder()
        for phase in LoginPhase.allCases where phase != .formRead { missing.note(phase, at: 1_000 + UInt64(phase.rawValue)) }
        let tookMissing = record.record(missing)
        #expect(!tookMissing)
        let early = PhaseRecorder()
        for phase in LoginPhase.allCases { early.note(phase, at: phase == .submissionSent ? 10 : 1_000_000 + UInt64(phase.rawValue)) }
        let tookEarly = record.record(early)
        #expect(!tookEarly)
        #expect(record.count == 0)
        #expect(record.figures == nil)
    }

    @Test("merged records keep every login")
    func merge() {
        var first = LoginPartsRecord(), second = LoginPartsRecord()
        first.record(recorder(gaps: steadyGaps))
        second.record(recorder(gaps: steadyGaps.map { $0 * 3 }))
        second.record(recorder(gaps: steadyGaps.map { $0 * 3 }))
        first.merge(second)
        #expect(first.count == 3)
        let whole = Double(steadyGaps.reduce(0, +) * 3)
        #expect(abs((first.figures?.loginP50Us ?? 0) - whole) <= whole * 0.01)
    }

    @Test("the split keeps its parts through JSON, and a report without them still reads")
    func json() throws {
        var record = LoginPartsRecord()
        record.record(recorder(gaps: steadyGaps))
        var split = LoneLoginSplit(p50Us: 80, idpUs: 20, handBackUs: 16)
        split.parts = record.figures
        let decoded = try JSONDecoder().decode(LoneLoginSplit.self, from: JSONEncoder().encode(split))
        #expect(decoded == split)
        let older = #"{"p50_us": 80, "idp_us": 20, "hand_back_us": 16, "engine_us": 44}"#
        #expect(try JSONDecoder().decode(LoneLoginSplit.self, from: Data(older.utf8)).parts == nil)
    }

    @Test("the OS threads and CPUs the code came back on: counted once each, merged as a union, shown in the parts table; none noted, none shown")
    func callerPlaces() async throws {
        let here = recorder(gaps: steadyGaps), elsewhere = recorder(gaps: steadyGaps)
        here.noteCallerPlace()
        let place = try #require(here.callerPlace)
        #expect(place.thread == ThreadStripe.current)
        #if os(Linux)
        let cpu = try #require(place.cpu, "sched_getcpu answers on Linux")
        #expect(Processors.allowedCPUs()?.contains(cpu) ?? true)
        #endif
        await OSThreads.run { elsewhere.noteCallerPlace() }
        #expect(elsewhere.callerPlace?.thread != place.thread, "another OS thread has another number")
        var first = LoginPartsRecord(), second = LoginPartsRecord()
        first.record(here)
        first.record(here)
        #expect(first.figures?.callerThreads == 1)
        second.record(elsewhere)
        first.merge(second)
        let figures = try #require(first.figures)
        #expect(figures.callerThreads == 2)
        #if os(Linux)
        #expect((1...2).contains(figures.callerCPUs ?? 0))
        #endif
        #expect(loginPartsTable(figures).note?.contains("came back to the caller's task on 2 threads") == true)
        let decoded = try JSONDecoder().decode(LoginPartsFigures.self, from: JSONEncoder().encode(figures))
        #expect(decoded == figures)
        var unnoted = LoginPartsRecord()
        unnoted.record(recorder(gaps: steadyGaps))
        #expect(unnoted.figures?.callerThreads == nil)
        #expect(unnoted.figures?.callerPlaces == nil)
        #expect(loginPartsTable(try #require(unnoted.figures)).note?.contains("came back") == false)
    }

    @Test("callerPlaces names threads and CPUs, in the singular where one")
    func callerPlacesText() {
        var figures = LoginPartsFigures(logins: 1, loginP50Us: 1, parts: [], kinds: [])
        #expect(figures.callerPlaces == nil)
        figures.callerThreads = 1
        #expect(figures.callerPlaces == "1 thread")
        figures.callerCPUs = 1
        #expect(figures.callerPlaces == "1 thread / 1 CPU")
        figures.callerThreads = 16
        figures.callerCPUs = 15
        #expect(figures.callerPlaces == "16 threads / 15 CPUs")
    }

    @Test("the parts table shows every part, every kind and the login")
    func table() throws {
        var record = LoginPartsRecord()
        record.record(recorder(gaps: steadyGaps))
        let rendered = loginPartsTable(try #require(record.figures)).render(markdown: true)
        for part in LoginPartsRecord.parts { #expect(rendered.contains(part.name)) }
        #expect(rendered.contains("all the IDP's work"))
        #expect(rendered.contains("login p50"))
    }
}

@Suite("evaluateTargets: the engine's share and flat providers")
struct EngineShareTargetTests {
    static let share = "lone login: the engine's share / the IDP's own work"

    /// A run whose lone login took `p50Us`, of which `idpUs` the IDP's and `handBackUs` the hand-back.
    func report(p50Us: Double, idpUs: Double, handBackUs: Double) -> BenchReport {
        var report = sampleReport()
        report.loneLoginSplit = LoneLoginSplit(p50Us: p50Us, idpUs: idpUs, handBackUs: handBackUs)
        return report
    }

    @Test("an engine's share at most the IDP's work is met, one above it is not")
    func engineShare() throws {
        let met = try #require(evaluateTargets(report(p50Us: 60, idpUs: 25, handBackUs: 15), latency: .zero).first { $0.name == Self.share })
        #expect(met.met)
        #expect(abs(met.value - 0.8) < 1e-9)
        let missed = try #require(evaluateTargets(report(p50Us: 80, idpUs: 20, handBackUs: 16), latency: .zero).first { $0.name == Self.share })
        #expect(!missed.met)
        #expect(abs(missed.value - 2.2) < 1e-9)
        #expect(missed.detail.contains("engine 44.0 vs IDP 20.0"))
        #expect(!evaluateTargets(report(p50Us: 80, idpUs: 20, handBackUs: 16), latency: .milliseconds(5)).contains { $0.name == Self.share },
                "flows with a simulated latency are not judged")
    }

    static let work = "lone login: the engine's and the MC's work / the IDP's, in the logins' own phases"

    @Test("the engine's and the MC's work at most the IDP's in the same logins is met, more is not, hand-offs and provider not counted")
    func workInPhases() throws {
        var report = report(p50Us: 61, idpUs: 15, handBackUs: 17)
        report.loneLoginSplit?.parts = RestInPhasesTests.figures(idp: 20, handOff: 25, engine: 7.5, mc: 6.5, provider: 0.3)
        let met = try #require(evaluateTargets(report, latency: .zero).first { $0.name == Self.work })
        #expect(met.met)
        #expect(abs(met.value - 0.7) < 1e-9)
        #expect(met.detail.contains("engine 7.5 + MC 6.5 vs IDP 20.0 µs"))
        #expect(met.detail.contains("hand-offs 25.0"))
        report.loneLoginSplit?.parts = RestInPhasesTests.figures(idp: 10, handOff: 1, engine: 7.5, mc: 6.5, provider: 0.3)
        let missed = try #require(evaluateTargets(report, latency: .zero).first { $0.name == Self.work })
        #expect(!missed.met)
        #expect(abs(missed.value - 1.4) < 1e-9)
        #expect(!evaluateTargets(report, latency: .milliseconds(5)).contains { $0.name == Self.work }, "flows with a simulated latency are not judged")
        report.loneLoginSplit?.parts = RestInPhasesTests.figures(idp: 0, handOff: 25, engine: 7.5, mc: 6.5, provider: 0.3)
        #expect(!evaluateTargets(report, latency: .zero).contains { $0.name == Self.work }, "no IDP time, no ratio")
        report.loneLoginSplit?.parts = nil
        #expect(!evaluateTargets(report, latency: .zero).contains { $0.name == Self.work }, "no phases noted, no row")
        #expect(evaluateTargets(report, latency: .zero).contains { $0.name == Self.share }, "the share's own row stays")
    }

    @Test("a product provider slower per call at the most threads than at 1 misses the flat target; a peer does not count")
    func flatProviders() throws {
        var report = sampleReport()
        report.providers = [
            ProviderRow(strategy: "A", kind: "product", recommended: false, threads: 1, nsPerCall: 100, calls: 1),
            ProviderRow(strategy: "A", kind: "product", recommended: false, threads: 16, nsPerCall: 60, calls: 1),
            ProviderRow(strategy: "B", kind: "product", recommended: false, threads: 1, nsPerCall: 1_000, calls: 1),
            ProviderRow(strategy: "B", kind: "product", recommended: false, threads: 16, nsPerCall: 900, calls: 1),
            ProviderRow(strategy: "peer", kind: "peer", recommended: false, threads: 1, nsPerCall: 100, calls: 1),
            ProviderRow(strategy: "peer", kind: "peer", recommended: false, threads: 16, nsPerCall: 5_000, calls: 1),
        ]
        let name = "every product provider at 16 threads no slower per call than at 1"
        let met = try #require(evaluateTargets(report, latency: .zero).first { $0.name == name })
        #expect(met.met)
        #expect(abs(met.value - 0.9) < 1e-9)
        report.providers[3].nsPerCall = 2_200
        let missed = try #require(evaluateTargets(report, latency: .zero).first { $0.name == name })
        #expect(!missed.met)
        #expect(abs(missed.value - 2.2) < 1e-9)
        #expect(missed.detail.contains("B"))
    }
}

/// The lone login split's note: its rest against the logins' own phases.
@Suite("loneLoginTable: the rest against the logins' phases")
struct RestInPhasesTests {
    static func figures(idp: Double, handOff: Double, engine: Double, mc: Double, provider: Double) -> LoginPartsFigures {
        let kinds = [("idp", idp), ("hand-off", handOff), ("engine", engine), ("provider", provider), ("mc", mc)].map { LoginPart(name: $0.0, kind: $0.0, us: $0.1) }
        return LoginPartsFigures(logins: 100, loginP50Us: 61, parts: [], kinds: kinds)
    }

    @Test("the work of engine, MC and provider, and the IDP's and the hand-offs' excess over the figures measured beside")
    func note() throws {
        var split = LoneLoginSplit(p50Us: 61.4, idpUs: 15.4, handBackUs: 19.3)
        split.parts = Self.figures(idp: 20.2, handOff: 25.2, engine: 7.6, mc: 6.2, provider: 0.3)
        let note = try #require(loneLoginTable(split).note)
        #expect(note.contains("the rest of 26.7 µs holds 14.1 µs of work (engine 7.6, MC 6.2, provider 0.3)"))
        #expect(note.contains("the IDP's requests taking +4.8 µs in the transport"))
        #expect(note.contains("the hand-offs +5.9 µs over the one hand-back beside"))
        split.parts = Self.figures(idp: 14.0, handOff: 25.2, engine: 7.6, mc: 6.2, provider: 0.3)
        #expect(try #require(loneLoginTable(split).note).contains("taking −1.4 µs"))
        split.parts = nil
        #expect(try #require(loneLoginTable(split).note).contains("Against") == false)
    }
}
